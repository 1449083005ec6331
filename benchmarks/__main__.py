"""`python -m benchmarks NAME [ARGS]`: run one benchmark; with no NAME, list them."""

from __future__ import annotations

import importlib
import sys

from benchmarks import BENCHMARKS


def main(argv: list[str]) -> int:
    if not argv or argv[0] in {"-h", "--help", "list"}:
        print("python -m benchmarks NAME [ARGS]   (NAME --help for its arguments)\n")
        for name, what in BENCHMARKS.items():
            print(f"  {name:<10} {what}")
        return 0
    name = argv[0].replace("-", "_")
    if name not in BENCHMARKS:
        print(f"no benchmark named {argv[0]!r}; `python -m benchmarks` lists them", file=sys.stderr)
        return 2
    module = importlib.import_module(f"benchmarks.{name}")
    return int(module.main(argv[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
