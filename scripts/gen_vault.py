"""Generate a synthetic Obsidian vault shaped like real ones, deterministically from a seed.

    python scripts/gen_vault.py OUT_DIR [--notes 10000] [--seed 0]

Shape (modelled on ../shared/vaults/ue-notes-zh and obsidian-help-en): nested folders up to
four deep; notes of ~0.3-30 kB (median ~3 kB) in Chinese with English identifiers or in
English; headings 1-4 deep; lists with nested children; fenced C++/Python code; YAML
frontmatter with tags and aliases; wikilinks (plain, `#heading`, `|alias`); block ids
(`^a1b2c3`) on paragraphs and list items. 5 % of the notes embed headings or blocks of other
notes (`![[Note#Heading]]`, `![[Note#^id]]`), and every one of them embeds one of a few hub
notes, so at 1,000+ notes each hub is embedded by 50 or more notes (`GeneratedVault.hubs`).
Embedding notes never embed each other, so there are no cycles. Same seed, same N: the same
bytes (only `random.Random(seed)` decides anything; nothing depends on set or hash order).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path


def _words(text: str) -> list[str]:
    return text.split()


_ZH = """虚幻 引擎 材质 参数 蓝图 编辑器 组件 渲染 管线 光照 阴影 贴图 纹理 角色 移动 物理 碰撞
网格 骨骼 动画 状态机 调用 函数 变量 属性 实例 生成 销毁 游戏 模式 控制器 输入 映射 我们 可以 需要
通过 使用 数据库 系统 开发 工具 性能 优化 内存 线程 异步 加载 资源 打包 发布 平台 着色器 后处理
体积 雾 天空 大气 反射 全局 烘焙 服务器 客户端 同步 复制 网络 延迟 预测 插值 关卡 流送 地形 植被
粒子 特效 音频 界面 控件 事件 委托 接口 模板 指针 引用 垃圾 回收 序列化 构建 编译 链接 调试 断点
日志 崩溃 堆栈 性能分析 帧率 显存 带宽 批处理 实例化 剔除 遮挡 层级 细节 距离 场景 模型 顶点 法线
切线 采样 过滤 混合 透明 深度 模板缓冲 光栅化 计算 着色 曲线 插件 模块 依赖 配置 版本 测试 单元
笔记 总结 问题 原因 方法 步骤 注意 例子 结果 区别 原理 流程 设计 架构 概念 定义"""
_ZH_GLUE = _words(
    "的 了 是 在 和 就 也 都 会 把 被 让 对 从 到 与 而 但 如果 因为 所以 然后 其中 这个 那个"
)
_EN = _words("""the a an actor component world level material texture render target scene capture
light shadow mesh skeleton animation blueprint function variable property instance spawn
destroy game mode controller input mapping we can need through use system tool performance
memory thread async load asset package platform shader post process volume fog sky reflection
server client replicate network latency prediction interpolation terrain foliage particle
effect audio widget event delegate interface template pointer reference garbage collector
serialize build compile link debug breakpoint log crash stack frame rate bandwidth batch cull
occlusion detail distance model vertex normal tangent sample filter blend depth stencil plugin
module dependency config version test note summary problem cause method step example result
difference principle flow design architecture concept definition when while after before so
then each every other same this that with from into over under between is are was be has
have will should must may not only also more most less fast slow large small first last new
old simple complex default custom local remote vault sync file folder link embed heading block
search index query answer chunk vector token""")
_ZH_WORDS, _EN_WORDS = _words(_ZH), _EN
_IDENT_PARTS = _words("""Actor Component Primitive Static Mesh Skeletal Anim Instance
Character Movement
Pawn Controller Player Game Mode State World Level Material Dynamic Texture Render Target
Scene Capture Light Widget Button Slate Niagara Emitter Physics Body Collision Trace Hit
Spawn Begin Play Tick Get Set Find Add Remove Async Task Load Asset Object Class Subsystem
Input Action Mapping Ability""")
_TOP_FOLDERS = _words("""Rendering 渲染 Gameplay 网络 Networking C++ 动画 Animation UI 工具 Tools
Physics 物理 Audio 技术美术 Blueprints 杂项 Daily 人工智能 Assets Platform""")
_LANGS = ("cpp", "python", "cpp", "ini", "bash")
_TAG_WORDS = _words(
    "ue rendering gameplay cpp blueprint net anim ui tools physics audio ai 笔记 总结 踩坑"
)

EMBED_SHARE = 0.05  # share of notes that embed headings/blocks of others
HUB_EMBEDDERS = 60  # one hub per this many embedding notes (>= 50 each, by round robin)


@dataclass
class _Note:
    path: str  # vault-relative, with .md
    title: str  # file name without .md (unique in the vault: links resolve by name)
    lang: str  # "zh" or "en"
    headings: list[tuple[int, str]] = field(default_factory=list)  # (level, text), level >= 2
    block_ids: list[str] = field(default_factory=list)
    # The hub section every embedder of a hub embeds (heading text) and its block id.
    hub_heading: str = ""
    hub_block: str = ""


@dataclass
class GeneratedVault:
    root: Path
    notes: list[str]  # vault-relative paths, in generation order
    hubs: dict[str, list[str]]  # hub note path -> paths of the notes embedding it
    embedders: list[str]  # every note that embeds another note
    hub_section: dict[str, tuple[str, str]]  # hub path -> (heading text, block id in it)
    bytes_written: int = 0


def _zh_sentence(rng: random.Random) -> str:
    words = []
    for _ in range(rng.randint(4, 12)):
        words.append(rng.choice(_ZH_WORDS))
        if rng.random() < 0.35:
            words.append(rng.choice(_ZH_GLUE))
    if rng.random() < 0.3:  # UE identifiers inside Chinese text, as in the UE vault
        ident = rng.choice("UAF") + "".join(rng.choices(_IDENT_PARTS, k=rng.randint(1, 3)))
        words.insert(rng.randrange(len(words)), f" `{ident}` ")
    return "".join(words) + rng.choice("。。。，；！？")


def _en_sentence(rng: random.Random) -> str:
    words = rng.choices(_EN_WORDS, k=rng.randint(6, 18))
    if rng.random() < 0.2:
        words.insert(rng.randrange(len(words)), "`" + "".join(rng.choices(_IDENT_PARTS, k=2)) + "`")
    text = " ".join(words)
    return text[0].upper() + text[1:] + rng.choice("...?!")


def _sentence(rng: random.Random, lang: str) -> str:
    # Chinese notes carry some English sentences and the other way round.
    if (lang == "zh") != (rng.random() < 0.1):
        return _zh_sentence(rng)
    return _en_sentence(rng)


def _paragraph(rng: random.Random, lang: str, sentences: tuple[int, int] = (2, 6)) -> str:
    sep = "" if lang == "zh" else " "
    return sep.join(_sentence(rng, lang) for _ in range(rng.randint(*sentences)))


def _phrase(rng: random.Random, lang: str, k: tuple[int, int]) -> str:
    if lang == "zh":
        return "".join(rng.choices(_ZH_WORDS, k=rng.randint(*k)))
    return " ".join(rng.choices(_EN_WORDS, k=rng.randint(*k))).title()


def _block_id(rng: random.Random) -> str:
    return "".join(rng.choices("0123456789abcdef", k=6))


def _code(rng: random.Random) -> str:
    lang = rng.choice(_LANGS)
    lines = []
    for _ in range(rng.randint(3, 14)):
        name = "".join(rng.choices(_IDENT_PARTS, k=rng.randint(1, 3)))
        if lang == "cpp":
            lines.append(
                rng.choice(
                    [
                        f"UPROPERTY(EditAnywhere) float {name} = {rng.randint(0, 100)}.f;",
                        f"void A{name}::{rng.choice(_IDENT_PARTS)}() {{ Super::BeginPlay(); }}",
                        f"auto* {name} = GetWorld()->SpawnActor<A{name}>();  // spawn",
                        f"UFUNCTION(BlueprintCallable) int32 Get{name}() const;",
                    ]
                )
            )
        elif lang == "python":
            lines.append(f"def {name.lower()}(x):\n    return x * {rng.randint(2, 9)}")
        elif lang == "ini":
            lines.append(f"r.{name}={rng.randint(0, 4)}")
        else:
            lines.append(f"./Engine/Build/BatchFiles/RunUAT.sh {name} -platform=Linux")
    return f"```{lang}\n" + "\n".join(lines) + "\n```"


class _Writer:
    """Builds one note's markdown; every random choice goes through the vault's one rng."""

    def __init__(self, rng: random.Random, note: _Note, others: list[_Note]) -> None:
        self.rng, self.note, self.others = rng, note, others
        self.out: list[str] = []
        self.used: set[str] = set()  # heading keys (membership only; never iterated)

    def heading(self, level: int) -> str:
        base = _phrase(self.rng, self.note.lang, (2, 4))
        text, n = base, 2
        while text.lower() in self.used:
            text, n = f"{base} {n}", n + 1
        self.used.add(text.lower())
        self.note.headings.append((level, text))
        self.out.append("#" * level + " " + text)
        return text

    def link(self) -> str:
        rng, target = self.rng, self.rng.choice(self.others)
        r = rng.random()
        if r < 0.6 or not target.headings:
            return f"[[{target.title}]]"
        if r < 0.85:
            return f"[[{target.title}#{rng.choice(target.headings)[1]}]]"
        return f"[[{target.title}|{_phrase(rng, target.lang, (1, 2))}]]"

    def paragraph(self, block_id: str | None = None) -> None:
        rng, lang = self.rng, self.note.lang
        text = _paragraph(rng, lang)
        if rng.random() < 0.4:
            text += (" " if lang == "en" else "参见 ") + self.link()
        if block_id is None and rng.random() < 0.15:
            block_id = _block_id(rng)
        if block_id:
            self.note.block_ids.append(block_id)
            text += f" ^{block_id}"
        self.out.append(text)

    def list_(self) -> None:
        rng, lang, ordered = self.rng, self.note.lang, self.rng.random() < 0.3
        lines = []
        for i in range(rng.randint(2, 6)):
            marker = f"{i + 1}." if ordered else "-"
            item = f"{marker} {_paragraph(rng, lang, (1, 2))}"
            if rng.random() < 0.15:
                item += " " + self.link()
            if rng.random() < 0.08:
                bid = _block_id(rng)
                self.note.block_ids.append(bid)
                item += f" ^{bid}"
            lines.append(item)
            indent = " " * len(marker + " ")
            for _ in range(rng.choice((0, 0, 1, 2))):  # children, sometimes grandchildren
                lines.append(f"{indent}- {_paragraph(rng, lang, (1, 1))}")
                if rng.random() < 0.3:
                    lines.append(f"{indent}  - {_paragraph(rng, lang, (1, 1))}")
        self.out.append("\n".join(lines))

    def section_body(self) -> None:
        rng = self.rng
        for _ in range(rng.randint(1, 4)):
            r = rng.random()
            if r < 0.55:
                self.paragraph()
            elif r < 0.8:
                self.list_()
            elif r < 0.95:
                self.out.append(_code(rng))
            else:
                self.out.append("> " + _paragraph(rng, self.note.lang, (1, 2)))


def _frontmatter(rng: random.Random, note: _Note) -> str:
    tags = sorted(set(rng.choices(_TAG_WORDS, k=rng.randint(1, 4))))
    aliases = [_phrase(rng, note.lang, (1, 3)) for _ in range(rng.randint(0, 2))]
    lines = ["---", "tags:", *(f"  - {t}" for t in tags)]
    if aliases:
        lines += ["aliases:", *(f'  - "{a}"' for a in aliases)]
    lines.append(
        f"created: 20{rng.randint(19, 25)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    )
    return "\n".join([*lines, "---"])


def _body(rng: random.Random, note: _Note, others: list[_Note], hub: bool) -> list[str]:
    w = _Writer(rng, note, others)
    if rng.random() < 0.5:
        w.out.append(f"# {note.title}")
    w.paragraph()
    if hub:  # the section every embedder of this hub embeds: a heading and a block in it
        note.hub_heading = w.heading(2)
        note.hub_block = _block_id(rng)
        w.paragraph(block_id=note.hub_block)
    # Section count: long-tailed like real notes (median ~5, a few past 20).
    sections = min(30, 1 + int(rng.lognormvariate(0.9, 0.7)))
    level = 1
    for _ in range(sections):
        level = max(2, min(4, level + rng.choice((-1, 0, 0, 1, 1))))
        w.heading(level)
        w.section_body()
    return w.out


def _folders(rng: random.Random, count: int) -> list[str]:
    folders = [""]
    tops = list(_TOP_FOLDERS)
    rng.shuffle(tops)
    frontier = tops[: rng.randint(8, 12)]
    folders += frontier
    while len(folders) < count:
        parent = rng.choice(folders[1:])
        if parent.count("/") >= 3:  # four levels at most
            continue
        folders.append(f"{parent}/{_phrase(rng, rng.choice(('zh', 'en')), (1, 2))}")
    return list(dict.fromkeys(folders))


def generate_vault(root: Path, notes: int = 10_000, seed: int = 0) -> GeneratedVault:
    """Write `notes` notes under `root` (created; must be empty or absent) and describe them."""
    if notes < 2:
        raise ValueError(f"need at least 2 notes, got {notes}")
    root = Path(root)
    if root.exists() and any(root.iterdir()):
        raise FileExistsError(f"{root} is not empty")
    rng = random.Random(seed)
    folders = _folders(rng, max(12, notes // 15))
    plan: list[_Note] = []
    titles: set[str] = set()
    for i in range(notes):
        lang = "zh" if rng.random() < 0.6 else "en"
        title = _phrase(rng, lang, (1, 3)).replace("/", " ")
        if title.lower() in titles:
            title = f"{title} {i}"
        titles.add(title.lower())
        folder = rng.choice(folders)
        plan.append(_Note(path=f"{folder}/{title}.md".lstrip("/"), title=title, lang=lang))

    n_embedders = max(1, round(notes * EMBED_SHARE))
    order = list(range(notes))
    rng.shuffle(order)
    embedder_ids = sorted(order[:n_embedders])
    n_hubs = max(1, n_embedders // HUB_EMBEDDERS)
    hub_ids = sorted(order[n_embedders : n_embedders + n_hubs])
    is_embedder = set(embedder_ids)
    targets = [p for i, p in enumerate(plan) if i not in is_embedder]

    # Pass 1: every non-embedding note (hubs included), so embedders can name real headings
    # and block ids. Pass 2: the embedders.
    texts: dict[int, str] = {}
    hub_set = set(hub_ids)
    for i, note in enumerate(plan):
        if i not in is_embedder:
            texts[i] = _render(rng, note, plan, hub=i in hub_set)
    hubs: dict[str, list[str]] = {plan[h].path: [] for h in hub_ids}
    for k, i in enumerate(embedder_ids):
        note = plan[i]
        hub = plan[hub_ids[k % n_hubs]]
        hubs[hub.path].append(note.path)
        embeds = [
            f"![[{hub.title}#{hub.hub_heading}]]"
            if rng.random() < 0.5
            else f"![[{hub.title}#^{hub.hub_block}]]"
        ]
        for _ in range(rng.randint(0, 2)):  # plus headings/blocks of ordinary notes
            other = rng.choice(targets)
            if other.block_ids and rng.random() < 0.4:
                embeds.append(f"![[{other.title}#^{rng.choice(other.block_ids)}]]")
            elif other.headings:
                embeds.append(f"![[{other.title}#{rng.choice(other.headings)[1]}]]")
        texts[i] = _render(rng, note, plan, embeds=embeds)

    total = 0
    for i, note in enumerate(plan):
        file = root / note.path
        file.parent.mkdir(parents=True, exist_ok=True)
        data = texts[i].encode("utf-8")
        file.write_bytes(data)
        total += len(data)
    return GeneratedVault(
        root=root,
        notes=[n.path for n in plan],
        hubs=hubs,
        embedders=[plan[i].path for i in embedder_ids],
        hub_section={plan[h].path: (plan[h].hub_heading, plan[h].hub_block) for h in hub_ids},
        bytes_written=total,
    )


def _render(
    rng: random.Random, note: _Note, plan: list[_Note], *, hub: bool = False, embeds: list[str] = ()
) -> str:
    parts = [_frontmatter(rng, note)] if rng.random() < 0.8 else []
    body = _body(rng, note, plan, hub)
    for embed in embeds:  # each on its own line between blocks, like real embedding notes
        at = rng.randint(1, len(body))
        body.insert(at, embed)
    return "\n\n".join(parts + body) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to create (must be empty or absent)")
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        vault = generate_vault(args.out, args.notes, args.seed)
    except (ValueError, FileExistsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    hubs = ", ".join(f"{p} ({len(e)} embedders)" for p, e in vault.hubs.items())
    print(
        f"{len(vault.notes)} notes, {vault.bytes_written / 1e6:.1f} MB, "
        f"{len(vault.embedders)} embedding notes, hubs: {hubs} "
        f"[{time.perf_counter() - started:.1f} s]"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
