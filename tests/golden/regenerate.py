"""Regenerate the golden files: ``python -m tests.golden.regenerate --why "reason the numbers moved"``."""

from __future__ import annotations

import argparse
import json

from tests.golden.cases import CASES, GOLDEN, figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--why", required=True, help="why the numbers moved (kept in the file)")
    args = parser.parse_args()
    for name in CASES:
        document = {"why": args.why, **figures(name)}
        (GOLDEN / f"{name}.json").write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
        print(f"wrote {name}.json")


if __name__ == "__main__":
    main()
