"""A digest of every plan on the zoo, to check that a speed-up leaves the plans unchanged.

For each scenario (the three public ones and the 256 KiB budget) and model: cycles_total, the
reported SRAM peak and a short hash of the plan document (schedule, allocation,
commands; timings left out), or the error when the model does not fit. Diff two runs' output:

  python bench/plan_digest.py > before.txt   (in one tree)
  python bench/plan_digest.py > after.txt    (in the other)
  diff before.txt after.txt

The tree whose ``src`` is imported is the one this script lives in. Prints figures; asserts nothing.

``--deployable`` digests the plans ``--emit-tflite`` makes (``deployable=True``: the forms the
emitter can write), without emitting them.

Usage: python bench/plan_digest.py [--zoo DIR ...] [--scenario NAME ...] [--model NAME ...] [--deployable]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from scenarios import BUDGET_256K, SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.api import plan  # noqa: E402
from npuplan.errors import NpuplanError  # noqa: E402
from npuplan.report.plan_json import plan_document  # noqa: E402
from npuplan.report.model import build_report  # noqa: E402

ALL_SCENARIOS = {**SCENARIOS, **BUDGET_256K}


def digest(model: Path, options: dict[str, str]) -> str:
    try:
        result = plan(model, **options)
    except NpuplanError as exc:
        return f"error: {exc}"
    report = build_report(result)
    document = plan_document(result, report)
    if document.get("allocation"):
        document["allocation"].pop("allocation_seconds", None)  # a timing, not part of the plan
    text = json.dumps(document, sort_keys=True, default=str)
    return (f"cycles {report.cycles_total:>14.1f} sram {result.sram_memory_used_bytes:>9} "
            f"plan {hashlib.sha1(text.encode()).hexdigest()[:12]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", type=Path, action="append", help="a folder of models (default: tests/data)")
    parser.add_argument("--scenario", action="append", choices=sorted(ALL_SCENARIOS))
    parser.add_argument("--model", action="append")
    parser.add_argument("--deployable", action="store_true", help="the plans --emit-tflite makes")
    args = parser.parse_args()
    models = [m for zoo in args.zoo or [HERE.parent / "tests" / "data"] for m in sorted(zoo.glob("*.tflite"))]
    if args.model:
        models = [m for m in models if m.stem in args.model]
    extra = {"deployable": True} if args.deployable else {}
    for name in args.scenario or ALL_SCENARIOS:
        for model in models:
            label = f"{model.parent.name}/{model.stem}" if args.zoo and len(args.zoo) > 1 else model.stem
            print(f"{name:36} {label:26} {digest(model, {**ALL_SCENARIOS[name], **extra})}", flush=True)


if __name__ == "__main__":
    main()
