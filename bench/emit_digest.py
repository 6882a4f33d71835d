"""The SHA-256 of every emitted file, to check that an emitter speed-up changes no output byte.

For each public scenario (``scenarios.SCENARIOS``) and model (the public models and the bundled
test models): the sha256 of the file ``plan_and_emit`` writes, or the one-line error. Diff two
runs' output:

  python bench/emit_digest.py > before.txt   (in one tree)
  python bench/emit_digest.py > after.txt    (in the other)
  diff before.txt after.txt

The tree whose ``src`` is imported is the one this script lives in. Prints digests; asserts nothing.

Usage: python bench/emit_digest.py [--models DIR ...] [--scenario NAME ...] [--model NAME ...]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from scenarios import SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.api import plan_and_emit  # noqa: E402
from npuplan.errors import NpuplanError  # noqa: E402

PUBLIC_MODELS = Path("/work/shared/models")  # the public models, where this machine has them
MODEL_DIRS = tuple(d for d in (PUBLIC_MODELS, HERE.parent / "tests" / "data") if d.is_dir())


def digest(model: Path, options: dict[str, str]) -> str:
    """The emitted file's sha256 and size in bytes, or the error."""
    try:
        _, emitted = plan_and_emit(model, **options)
    except NpuplanError as error:
        return f"error: {error}"
    return f"{hashlib.sha256(emitted.data).hexdigest()} {len(emitted.data):>10}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, action="append", help="a folder of models (default: public, bundled)")
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    parser.add_argument("--model", action="append")
    args = parser.parse_args()
    for name in args.scenario or SCENARIOS:
        for folder in args.models or MODEL_DIRS:
            for model in sorted(folder.glob("*.tflite")):
                if args.model and model.stem not in args.model:
                    continue
                print(f"{name:36} {folder.name:7} {model.stem:24} {digest(model, SCENARIOS[name])}", flush=True)


if __name__ == "__main__":
    main()
