"""`vault-rag` command line. Commands only parse options and print; the work lives in the
stage modules. Each submodule registers its commands on `app`."""

from vault_rag.cli import (  # noqa: F401  (registers commands)
    answer_eval_commands,
    ask_commands,
    demo,
    doctor_commands,
    eval_commands,
    feedback_commands,
    index_commands,
    mcp_commands,
    notes,
    remote_commands,
    serve_commands,
    sources_commands,
    store_commands,
)
from vault_rag.cli.app import app

__all__ = ["app"]
