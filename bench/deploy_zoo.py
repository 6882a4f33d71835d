"""Emit and validate the zoo networks (default /work/zoo/*.tflite) in the benchmark scenarios.

Usage: python bench/deploy_zoo.py [--zoo DIR] [--scenario NAME ... | --scenarios SET] [--jobs N] [MODEL ...]

Each network is planned deployably and emitted (``npuplan.emit.plan_and_emit``), and the file
replayed by ``npuplan validate``'s checker. Prints one line per model and scenario (emitted, with
its NPU operations and count of CPU operators, or the one-line refusal), then the counts, the
refusals grouped by reason (the part of the message after the operator's name) and the CPU
operators of the emitted files grouped by type and reason. A plan that does not fit a scenario's
arena budget is a result of its own (one line), not a crash. ``--scenarios``: ``public`` (default,
the three of bench/scenarios.py), ``wide`` (the dual-core one, the 256 KiB budget and the sixteen
hardware configs of bench/config_sweep.py) or ``all``. ``--jobs``: worker processes (the lines
keep the models' order). Asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from scenarios import BUDGET_256K, DUAL_CORE, SCENARIOS, SWEEP

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src")]

from npuplan.api import plan_and_emit  # noqa: E402
from npuplan.errors import EmitError, InfeasiblePlan, ValidationError  # noqa: E402
from npuplan.regstream import validate_tflite  # noqa: E402

EVERY = {**SCENARIOS, **DUAL_CORE, **BUDGET_256K, **SWEEP}
SETS = {"public": list(SCENARIOS), "wide": [*DUAL_CORE, *BUDGET_256K, *SWEEP], "all": list(EVERY)}


def _reason(error: Exception | str) -> str:
    """The refusal without operator names and numbers, to group alike refusals."""
    text = re.sub(r"'[^']*'", "'…'", str(error))
    return re.sub(r"\d+", "N", text)[:160]


def run_one(job: tuple[Path, str]) -> tuple[str, str, list[str]]:
    """(outcome, printed line, the CPU operators' grouped reasons) of one model in one scenario;
    outcome: ``emitted and valid``, ``refused`` (one-line EmitError), ``does not fit`` (the arena
    budget), ``INVALID`` (the file fails the replay) or ``crash`` (any other exception)."""
    path, name = job
    try:
        planned, emitted = plan_and_emit(path, **EVERY[name])
    except EmitError as error:
        return "refused", f"{path.stem} {name}: refused: {error}", [_reason(error)]
    except InfeasiblePlan as error:
        return "does not fit", f"{path.stem} {name}: does not fit: {error}", ["does not fit the arena budget"]
    except Exception as error:  # noqa: BLE001 - a crash is a finding
        return "crash", f"{path.stem} {name}: CRASH {type(error).__name__}: {error}", [f"crash {type(error).__name__}"]
    try:
        validate_tflite(emitted.data)
    except ValidationError as error:
        return "INVALID", f"{path.stem} {name}: INVALID: {error}", [f"invalid: {_reason(error)}"]
    except Exception as error:  # noqa: BLE001 - a crash is a finding
        return "crash", f"{path.stem} {name}: CRASH {type(error).__name__}: {error}", [f"crash {type(error).__name__}"]
    cpu = planned.lowered.cpu_ops
    refusals = [n for n in emitted.notes if "kept on the CPU (" in n]  # plan_and_emit's fallbacks, with the why
    line = (f"{path.stem} {name}: emitted {emitted.npu_operations} NPU ops, {emitted.command_streams} partitions, "
            f"{len(cpu)} CPU ops" + "".join(f"; {n}" for n in refusals))
    return "emitted and valid", line, [f"{o.tflite_type}: {_reason(o.reason)}" for o in cpu] + [
        f"  of which refused by the emitter: {_reason(n)}" for n in refusals]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*")
    parser.add_argument("--zoo", default="/work/zoo")
    parser.add_argument("--scenario", action="append", choices=sorted(EVERY))
    parser.add_argument("--scenarios", choices=sorted(SETS), default="public")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    paths = [Path(m) for m in args.models] or sorted(Path(args.zoo).glob("*.tflite"))
    jobs = [(path, name) for path in paths for name in args.scenario or SETS[args.scenarios]]
    counts: collections.Counter[str] = collections.Counter()
    refusals: collections.Counter[str] = collections.Counter()
    cpu_reasons: collections.Counter[str] = collections.Counter()
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        for outcome, line, reasons in pool.map(run_one, jobs, chunksize=4):
            counts[outcome] += 1
            (cpu_reasons if outcome == "emitted and valid" else refusals).update(reasons)
            print(line, flush=True)
    print(dict(counts))
    for reason, n in refusals.most_common():
        print(f"{n:4d}  {reason}")
    print(f"CPU operators in the emitted files: {sum(cpu_reasons.values())}")
    for reason, n in cpu_reasons.most_common():
        print(f"{n:4d}  {reason}")


if __name__ == "__main__":
    main()
