"""Adding and removing a source (`vault-rag sources add|remove` and `POST /v1/sources`,
`DELETE /v1/sources/{name}`): the checks both run, with the same sentences, and the change to
`sources.json`. Indexing the new source is the caller's: `vault-rag index` for the CLI, the
server's `ServedSources.added` for HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from vault_rag.settings import Settings, SourceSpec
from vault_rag.source_indexes.collections import remove_source_data
from vault_rag.source_indexes.specs import (
    VAULT,
    SourceError,
    added_specs,
    all_specs,
    check_specs,
    save_added,
)
from vault_rag.sources.web.urls import WebUrlError, check_start_url

Kind = Literal["code", "vault", "markdown", "web"]
KINDS: tuple[Kind, ...] = ("code", "vault", "markdown", "web")


class SourceTaken(SourceError):
    """The name is the vault's or another source's."""


class SourceMissing(SourceError):
    """No source added with that name."""


class SourceInSettings(SourceError):
    """Declared in the settings file: removed there, not here."""


def new_spec(
    name: str,
    kind: str,
    where: str,
    include: list[str] | None = None,
    exclude: list[str] | None = None,
    max_pages: int | None = None,
    *,
    relative_ok: bool = True,
) -> SourceSpec:
    """The source asked for, its fields checked (a web source's URL: http(s) only, no
    credentials). `relative_ok`: a relative folder is taken from the current directory (the
    CLI); over HTTP it is refused (the server's directory means nothing to the caller)."""
    try:
        chosen = parse_kind(kind)
        if chosen == "web":
            return SourceSpec(
                name=name,
                url=check_start_url(where),
                kind="web",
                include=include or [],
                exclude=exclude or [],
                max_pages=max_pages,
            )
        if max_pages is not None:
            raise SourceError("--max-pages is for --kind web only")
        path = Path(where).expanduser()
        if not relative_ok and not path.is_absolute():
            raise SourceError(f"{where!r} is not an absolute path: give the folder's full path")
        return SourceSpec(
            name=name,
            path=path.resolve(),
            kind=chosen,
            include=include or [],
            exclude=exclude or [],
        )
    except (WebUrlError, ValidationError, ValueError) as exc:
        if isinstance(exc, SourceError):
            raise
        raise SourceError(message(exc)) from exc


def parse_kind(word: str) -> Kind:
    if word not in KINDS:
        raise SourceError(f"--kind must be code, vault, markdown or web, not {word!r}")
    return word  # type: ignore[return-value]


def message(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
    return str(exc)


def add_source(settings: Settings, vault: Path, spec: SourceSpec) -> SourceSpec:
    """Check `spec` beside the vault and every other source (name free, folder readable and
    overlapping nothing) and keep it in `sources.json`. Raises SourceError (SourceTaken)."""
    data = settings.resolved_data_dir()
    existing = all_specs(settings, data)
    if spec.name == VAULT or any(other.name == spec.name for other in existing):
        raise SourceTaken(f"the name {spec.name!r} is taken: choose another")
    problem = check_specs(vault, [*existing, spec], data)[spec.name]
    if isinstance(problem, SourceError):
        raise problem
    save_added(data, [*added_specs(data), spec])
    return spec


def forget_source(settings: Settings, name: str) -> None:
    """Take an added source out of `sources.json` (its index stays: `remove_source_data`).
    Raises SourceError (SourceMissing, SourceInSettings)."""
    data = settings.resolved_data_dir()
    if name == VAULT:
        raise SourceError("the vault itself is not a source")
    if any(spec.name == name for spec in settings.sources):
        raise SourceInSettings(
            f"source {name!r} is declared in the settings file: remove it there; the next "
            "`vault-rag index` removes its index"
        )
    added = added_specs(data)
    if not any(spec.name == name for spec in added):
        raise SourceMissing(f"no source named {name!r} (`vault-rag sources list`)")
    save_added(data, [spec for spec in added if spec.name != name])


def remove_source(settings: Settings, name: str) -> bool:
    """`forget_source`, then its index; whether there was one."""
    forget_source(settings, name)
    return remove_source_data(settings, name)
