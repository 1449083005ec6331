"""Where the settings file and a vault's data dir are, with the standard library and
platformdirs only: `vault-rag search` finds a running sidecar through the data dir before it
imports anything heavy (`serving/search_client.py`). `settings.py` uses the same functions, so the
two cannot disagree about the default locations."""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from pathlib import Path

import platformdirs

APP_NAME = "vault-rag"
SETTINGS_FILE_NAME = "vault-rag.toml"
ENV_PREFIX = "VAULT_RAG_"


def default_data_dir(vault: Path) -> Path:
    root = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    absolute = str(vault.expanduser().resolve())
    slug = re.sub(r"[^\w-]+", "-", Path(absolute).name).strip("-")[:40] or "vault"
    digest = hashlib.sha256(absolute.encode()).hexdigest()[:10]
    return root / "vaults" / f"{slug}-{digest}"


def config_file_path() -> Path:
    """Where the settings file is read from."""
    explicit = os.environ.get("VAULT_RAG_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / SETTINGS_FILE_NAME


def env_setting(name: str) -> str | None:
    """`VAULT_RAG_<NAME>` from the environment, matched without case as pydantic-settings
    does (None when unset)."""
    wanted = (ENV_PREFIX + name).upper()
    for key, value in os.environ.items():
        if key.upper() == wanted:
            return value
    return None


def quick_data_dir(vault: Path, data_dir: Path | None) -> Path | None:
    """The data dir `Settings.resolved_data_dir()` would give for these flags (`--data-dir`,
    then `VAULT_RAG_DATA_DIR`, then the settings file's `data_dir`, then the per-user
    default), without loading the settings. None when it cannot tell cheaply (an unreadable
    or missing settings file, an odd value): the caller then loads the settings the normal way.
    """
    if data_dir is not None:
        return data_dir.expanduser().resolve()
    from_env = env_setting("DATA_DIR")
    if from_env is not None:
        return Path(from_env).expanduser().resolve() if from_env.strip() else None
    file = config_file_path()
    if file.is_file():
        try:
            with file.open("rb") as handle:
                values = tomllib.load(handle)
        except (OSError, tomllib.TOMLDecodeError):
            return None
        value = values.get("data_dir")
        if value is not None:
            return Path(value).expanduser().resolve() if isinstance(value, str) and value else None
    elif os.environ.get("VAULT_RAG_CONFIG"):
        return None  # the settings say what is wrong with it
    return default_data_dir(vault)
