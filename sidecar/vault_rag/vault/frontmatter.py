"""YAML frontmatter: metadata for chunks, never chunk text."""

from __future__ import annotations

from typing import Any

import yaml

from vault_rag.vault.types import VaultWarning


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
    if isinstance(loaded, dict):
        data = {str(k): v for k, v in loaded.items()}
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
