"""Build the sample vault's one PDF, `Tools/Perforce Handbook.pdf` (issue 25): four short
pages with an outline, in Chinese with English terms like the notes, so `vault-rag demo` can
cite a PDF to its page.

    python scripts/sample_vault_pdf.py [OUT_PATH]

The committed file is this script's output (reportlab, from the test extra; built-in fonts
only, invariant mode so the bytes carry no date or random id). Its topic, source control, is
far from every question of tests/data/qa/sample.jsonl: a PDF about the notes' own topics would
compete with their gold notes (an earlier try moved the set's note R@5 from .981 to .962). It is
in Chinese because an English version still pulled the set's English questions whose answers
are Chinese notes (two cross-lingual ones fell from rank 5 to 6 and 7; docs/retrieval.md).
`tests/test_sample_vault.py` checks that the committed PDF holds exactly these pages.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reportlab import rl_config

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from pdf_fixtures import Page, write_pdf  # noqa: E402

OUT = ROOT / "sidecar" / "vault_rag" / "sample_vault" / "Tools" / "Perforce Handbook.pdf"
TITLE = "Perforce handbook for the team"

PAGES: list[Page] = [
    (
        "1. 工作区设置",
        [
            "# Perforce 协作手册",
            "团队在 Unreal 项目里怎样使用 Perforce（Helix Core）。内容过时请找构建负责人。",
            "# 1. 工作区设置",
            "每台机器、每个 stream 各建一个工作区（workspace），命名为 用户_机器_stream，"
            "例如 lin_desktop_main。用 p4 set P4PORT=ssl:perforce.studio.local:1666 和 "
            "p4 set P4USER=你的名字 连接服务器，第一次连接时运行 p4 trust 接受服务器指纹。",
            "设置 P4IGNORE=.p4ignore，生成的文件夹就不会被 p4 add 加进去。stream 里的 "
            ".p4ignore 已经列好这些文件夹，不要在自己的工作区里改它。",
        ],
    ),
    (
        "2. 二进制资产的独占签出",
        [
            "# 2. 二进制资产的独占签出",
            "Unreal 的资产（.uasset）和地图（.umap）是二进制文件，Perforce 无法合并。服务器的 "
            "typemap 把它们标成 binary+l，也就是独占签出（exclusive checkout）：同一时间只有"
            "一个人能签出这个文件，两个人不会同时改同一张地图。",
            "typemap 里的两行：binary+l //....uasset 和 binary+l //....umap。",
            "改文件之前先签出（Revision Control 里的 Check Out）。文件被锁住时，用 "
            "p4 opened -a 文件名 查是谁签出的，请对方提交或 revert。不要手动去掉只读属性直接改："
            "下一次 p4 sync 会覆盖你的改动。",
        ],
    ),
    (
        "3. 变更列表、搁置与审查",
        [
            "# 3. 变更列表、搁置与审查",
            "每个任务放在一个编号的变更列表（changelist，p4 change）里，不要用 default 变更列表。",
            "需要审查时，用 p4 shelve -c 1234 搁置（shelve）这个变更列表，把编号发到审查频道。"
            "审查人用 p4 unshelve -s 1234 把它取到自己的工作区。",
            "审查通过后先删除搁置（p4 shelve -d -c 1234），再用 p4 submit -c 1234 提交。"
            "要撤回已经提交的变更列表，用 p4 undo，不要手动改回去。",
        ],
    ),
    (
        "4. 提交说明的格式",
        [
            "# 4. 提交说明的格式",
            "提交说明第一行写方括号里的模块名再加一句概括，例如 [UI] 修复设置界面的文字截断；"
            "第二行留空；之后写改动的原因和任务单号，例如 TASK-1024。",
            "不要只写“修改”“更新”这类没有信息的说明。一个变更列表只做一件事，"
            "审查通过之后才能提交。",
        ],
    ),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=OUT)
    args = parser.parse_args()
    rl_config.invariant = 1  # no creation date, no random document id: the same bytes each run
    write_pdf(args.out, PAGES, title=TITLE)
    print(f"{args.out} ({args.out.stat().st_size} bytes, {len(PAGES)} pages)")


if __name__ == "__main__":
    main()
