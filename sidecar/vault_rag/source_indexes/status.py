"""Each source's index state for `vault-rag status`: what its manifest holds (as the vault's:
`index/status.py`), what its rules left out (`ignored`, `ignored_files`), and the problem that
keeps it from being indexed, if any. Reads manifests only: no model, no store."""

from __future__ import annotations

from typing import Any

from vault_rag.index.status import index_status
from vault_rag.settings import Settings
from vault_rag.source_indexes.specs import SourceError, all_specs, check_specs, source_data_dir
from vault_rag.sources.web.state import web_status


def sources_status(settings: Settings) -> dict[str, dict[str, Any]]:
    """name → its state; {} with no source declared (or when the declarations do not read:
    `problem` under the key "" then)."""
    if settings.vault is None:
        return {}
    data_dir = settings.resolved_data_dir()
    try:
        specs = all_specs(settings, data_dir)
    except SourceError as exc:
        return {"": {"problem": str(exc)}}
    checked = check_specs(settings.vault, specs, data_dir)
    found: dict[str, dict[str, Any]] = {}
    for spec in specs:
        problem = checked[spec.name]
        info = index_status(source_data_dir(data_dir, spec.name))
        info.pop("data_dir", None)
        found[spec.name] = {
            "kind": spec.kind,
            "path": spec.location,
            "problem": str(problem) if isinstance(problem, SourceError) else None,
            **info,
        }
        if spec.kind == "web":  # the crawl: pages, when last fetched, the last run's problems
            found[spec.name]["url"] = spec.url
            found[spec.name]["web"] = web_status(source_data_dir(data_dir, spec.name))
    return found
