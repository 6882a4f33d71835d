"""Differential check of the native output stage (``npuplan.emit.native.output_stage``) against
Vela's register command stream generator, over the public models and the zoos.

Usage:
  python bench/native_outstage_compare.py [--sets public zoo ...] [--scenario NAME ...] [MODEL ...]

Each model is planned deployably and emitted (``npuplan.emit.plan_and_emit``, which runs Vela's
generator on the API operations); every block operation's output-stage registers from
``output_stage_registers`` are compared with the registers Vela's stream holds when it kicks that
operation. Vela's stream is the one trusted: it is the generator the emitted files have run with.
Prints one line per model and scenario (operations matching on every register, of how many, and
the first mismatch), a model the emitter refuses or crashes on as a row, then the totals.
Asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

from scenarios import SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE.parent)]

from npuplan.errors import EmitError  # noqa: E402
from bench.outstage_differential import captured_partitions, output_stage_mismatches  # noqa: E402

SETS = {"public": HERE.parent / "tests" / "data", "zoo": Path("/work/zoo"), "zoo2": Path("/work/zoo2"),
        "zoo3": Path("/work/zoo3"), "zoo_random3": Path("/work/zoo_random3"),
        "zoo_random5": Path("/work/zoo_random5"), "zoo_lstm": Path("/work/zoo_lstm")}


def compare(path: Path, scenario: str, totals: collections.Counter[str]) -> str:
    """One row: the model's operations matching Vela on every output-stage register."""
    try:
        partitions = captured_partitions(path, **SCENARIOS[scenario])
    except EmitError as error:
        totals["refused"] += 1
        return f"refused: {error}"
    except Exception as error:  # noqa: BLE001 - a crash is a finding, not the end of the run
        totals["crash"] += 1
        return f"CRASH {type(error).__name__}: {error}"
    ops = bad = 0
    first = None
    for partition in partitions:
        count, mismatches = output_stage_mismatches(partition)
        ops += count
        bad += len({m.index for m in mismatches})
        first = first or (f"partition {partition.number} {mismatches[0]}" if mismatches else None)
    totals["models"] += 1
    totals["operations"] += ops
    totals["matching"] += ops - bad
    totals["models all matching"] += bad == 0
    return f"{ops - bad}/{ops} operations match" + (f"; first mismatch: {first}" if first else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--sets", nargs="+", choices=sorted(SETS), default=sorted(SETS))
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS),
                        help="default: the three public scenarios")
    args = parser.parse_args()
    paths = args.models or [p for name in args.sets for p in sorted(SETS[name].glob("*.tflite"))]
    totals: collections.Counter[str] = collections.Counter()
    started = time.perf_counter()
    for path in paths:
        for scenario in args.scenario or list(SCENARIOS):
            print(f"{path.parent.name}/{path.stem} {scenario}: {compare(path, scenario, totals)}", flush=True)
    share = totals["matching"] / totals["operations"] if totals["operations"] else 0.0
    print(f"{totals['matching']}/{totals['operations']} operations match on every register ({share:.2%}); "
          f"{totals['models all matching']}/{totals['models']} model runs all matching; "
          f"{totals['refused']} refused, {totals['crash']} crashed; {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
