"""Emit and validate the zoo networks (default /work/zoo/*.tflite) in the three public scenarios.

Usage: python bench/deploy_zoo.py [--zoo DIR] [--scenario NAME ...] [MODEL ...]

Each network is planned deployably and emitted (``npuplan.emit.plan_and_emit``), and the file
replayed by ``npuplan validate``'s checker. Prints one line per model and scenario (emitted, with
its NPU operations and notes' count of CPU fallbacks, or the one-line refusal), then the counts and
the refusals grouped by reason (the part of the message after the operator's name). Asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from pathlib import Path

from scenarios import DUAL_CORE, SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src")]

from npuplan.emit import plan_and_emit  # noqa: E402
from npuplan.errors import EmitError  # noqa: E402
from npuplan.regstream import validate_tflite  # noqa: E402


def _reason(error: Exception) -> str:
    """The refusal without operator names and numbers, to group alike refusals."""
    text = re.sub(r"'[^']*'", "'…'", str(error))
    return re.sub(r"\d+", "N", text)[:160]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*")
    parser.add_argument("--zoo", default="/work/zoo")
    parser.add_argument("--scenario", action="append", choices=sorted({**SCENARIOS, **DUAL_CORE}),
                        help="default: the three public scenarios (the dual-core one on request)")
    args = parser.parse_args()
    paths = [Path(m) for m in args.models] or sorted(Path(args.zoo).glob("*.tflite"))
    counts: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    for path in paths:
        for name in args.scenario or list(SCENARIOS):
            try:
                planned, emitted = plan_and_emit(path, **{**SCENARIOS, **DUAL_CORE}[name])
                validate_tflite(emitted.data)
                cpu = sum(1 for o in planned.lowered.ops if not hasattr(o, "ifm"))
                counts["emitted and valid"] += 1
                print(f"{path.stem} {name}: emitted {emitted.npu_operations} NPU ops, {emitted.command_streams} "
                      f"partitions, {cpu} CPU ops", flush=True)
            except EmitError as error:
                counts["refused"] += 1
                reasons[_reason(error)] += 1
                print(f"{path.stem} {name}: refused: {error}", flush=True)
            except Exception as error:  # noqa: BLE001 - a crash is a finding
                counts["crash"] += 1
                reasons[f"crash {type(error).__name__}"] += 1
                print(f"{path.stem} {name}: CRASH {type(error).__name__}: {error}", flush=True)
    print(dict(counts))
    for reason, n in reasons.most_common():
        print(f"{n:4d}  {reason}")


if __name__ == "__main__":
    main()
