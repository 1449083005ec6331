"""Write the sidecar's OpenAPI spec to shared-schemas/openapi.json, or check it is current.

python scripts/export_openapi.py           # write
python scripts/export_openapi.py --check   # exit 1 when the file differs from the code
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path

from vault_rag.api import create_app
from vault_rag.settings import Settings

TARGET = Path(__file__).resolve().parent.parent / "shared-schemas" / "openapi.json"


def render() -> str:
    # Defaults only (no validation, no sources): no settings file or environment leaks in.
    settings = Settings.model_construct()
    spec = create_app(settings, token="export").openapi()
    return json.dumps(spec, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the file is not current")
    args = parser.parse_args()
    text = render()
    if not args.check:
        TARGET.write_text(text, encoding="utf-8")
        print(f"wrote {TARGET}")
        return 0
    current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
    if current == text:
        print(f"{TARGET.name} is current")
        return 0
    diff = difflib.unified_diff(
        current.splitlines(),
        text.splitlines(),
        "openapi.json (file)",
        "openapi.json (code)",
        lineterm="",
    )
    sys.stderr.write("\n".join(list(diff)[:80]) + "\n")
    sys.stderr.write(
        f"{TARGET} differs from the code: run `python scripts/export_openapi.py` and commit it\n"
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
