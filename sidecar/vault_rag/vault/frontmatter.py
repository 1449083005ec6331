"""YAML frontmatter: metadata for chunks, never chunk text."""

from __future__ import annotations

from typing import Any

import yaml

from vault_rag.vault.types import VaultWarning

# Frontmatter is a handful of properties, but YAML aliases let a few hundred bytes stand for
# gigabytes once walked (a "billion laughs": 8 nested levels of `*ref` lists under `aliases:`
# took the writer 90 s and 1 GB). The loaded value is a graph of shared references, cheap in
# itself; beyond these sizes, counted as if every alias were copied, the properties are ignored
# with a `bad_frontmatter` warning, before anything walks them.
MAX_VALUES = 10_000  # scalars, lists and mappings
MAX_CHARS = 200_000  # characters of text
# `aliases` and `tags` go into every unit's header and metadata: at most this many are used.
MAX_NAMES = 100


def split_frontmatter(
    text: str, note: str = ""
) -> tuple[dict[str, Any], str, int, list[VaultWarning]]:
    """Split `text` into (frontmatter, body, body_start_line, warnings).

    Like Obsidian, frontmatter exists only when the very first line is `---` and a later line
    is `---` (or `...`). Invalid YAML is still removed from the body (Obsidian shows it as a
    broken properties block, not as text) and reported as `bad_frontmatter`.
    `body_start_line` is the 1-based file line where `body` starts.
    """
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return {}, text, 1, []
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            break
    else:
        return {}, text, 1, []
    raw = "\n".join(lines[1:end])
    body = "\n".join(lines[end + 1 :])
    warnings: list[VaultWarning] = []
    data: dict[str, Any] = {}
    try:
        loaded = yaml.safe_load(raw) if raw.strip() else {}
    except (yaml.YAMLError, ValueError, TypeError, AttributeError) as exc:
        # PyYAML's constructors raise plain ValueError etc. for values that look like
        # timestamps or tagged scalars but are not, e.g. `created: 2024-02-30`.
        loaded = None
        warnings.append(
            VaultWarning("bad_frontmatter", f"frontmatter is not valid YAML: {exc}", note)
        )
    if loaded is not None and expands_beyond_limits(loaded):
        loaded = None
        warnings.append(
            VaultWarning(
                "bad_frontmatter",
                f"frontmatter expands to more than {MAX_VALUES} values or {MAX_CHARS} "
                "characters (YAML aliases); its properties are ignored",
                note,
            )
        )
    if isinstance(loaded, dict):
        data = {str(k): v for k, v in loaded.items()}
        warnings.extend(_cap_names(data, note))
    elif loaded is not None:
        warnings.append(
            VaultWarning("bad_frontmatter", "frontmatter is not a mapping of properties", note)
        )
    return data, body, end + 2, warnings


def as_string_list(value: Any, split_spaces: bool = False) -> list[str]:
    """Frontmatter `tags` / `aliases` come as a list, a comma separated string, or null.
    Tags may also be space separated (`split_spaces=True`); aliases may contain spaces."""
    if value is None:
        return []
    if isinstance(value, str):
        parts = value.split(",")
        items = [v for part in parts for v in (part.split() if split_spaces else [part])]
    elif isinstance(value, list | tuple):
        items = [str(v) for v in value if v is not None]
    else:
        items = [str(value)]
    return [i.strip().lstrip("#") for i in items if i.strip().lstrip("#")]


def expands_beyond_limits(value: Any) -> bool:
    """True when `value` walked as a tree (every shared reference counted again) holds more
    than `MAX_VALUES` values or `MAX_CHARS` characters. Stops as soon as it knows, so a value
    that would expand forever (a recursive alias) costs at most `MAX_VALUES` steps."""
    values = chars = 0
    stack = [value]
    while stack:
        item = stack.pop()
        values += 1
        if values > MAX_VALUES:
            return True
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set):
            stack.extend(item)
        else:
            chars += len(item) if isinstance(item, str | bytes) else 8
            if chars > MAX_CHARS:
                return True
    return False


def _cap_names(data: dict[str, Any], note: str) -> list[VaultWarning]:
    warnings = []
    for key in ("aliases", "alias", "tags", "tag"):
        value = data.get(key)
        if isinstance(value, str):  # "a, b, c": as the chunker will split it
            value = as_string_list(value, split_spaces=key.startswith("tag"))
        if isinstance(value, list | tuple) and len(value) > MAX_NAMES:
            data[key] = list(value[:MAX_NAMES])
            warnings.append(
                VaultWarning(
                    "bad_frontmatter",
                    f"`{key}` lists {len(value)} entries; only the first {MAX_NAMES} are used",
                    note,
                )
            )
    return warnings
