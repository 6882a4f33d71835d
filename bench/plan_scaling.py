"""Planning time of large networks and how it grows with the op count (issue 26).

For each network and scenario (Performance: u55-128 High_End Shared_Sram; Size: u55-64
Deep_Embedded Shared_Sram), the CPU seconds ``npuplan.api.plan`` takes in a fresh process (reading,
lowering, operator order, scheduling, allocation; interpreter start-up and imports left out), the
minimum over ``--repeat`` runs, for each source tree given (``--src before=/work/main/src --src
after=src``, side by side in one run), with the plan's cycles and SRAM peak (so a speed-up that
changed a plan shows). Networks: the deep chains of ``chain_nets.py`` (1,000 / 3,000 / 10,000 ops,
written under ``--chains``) and every .tflite in ``--big`` (``zoo/big_models.py``'s unrolled LSTMs,
NASNet-mobile and DenseNet-121, when generated). Then the growth from the smallest to the largest
chain per scenario: time ratio against op-count ratio (1.0 is linear). Prints figures; asserts nothing.

Usage: python bench/plan_scaling.py [--src LABEL=DIR ...] [--repeat 2] [--ops 1000 3000 10000]
                                    [--chains /tmp/npuplan_chains] [--big /tmp/npuplan_big]
                                    [--scenario NAME ...] [--model NAME ...]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from chain_nets import write_chain  # noqa: E402
from scenarios import SCENARIOS  # noqa: E402

GOALS = {"performance": "u55_128_highend_shared_perf", "size": "u55_64_deep_shared_size"}

# One timed plan in a fresh process: prints {"seconds", "ops", "cycles", "sram"} as JSON.
_CHILD = """
import json, sys, time
from npuplan.api import plan
options = json.loads(sys.argv[2])
started = time.process_time()
result = plan(sys.argv[1], **options)
seconds = time.process_time() - started
print(json.dumps({"seconds": seconds, "ops": len(result.lowered.ops), "cycles": result.schedule.total_npu_cycles,
                  "sram": result.sram_memory_used_bytes}))
"""


def timed(src: Path, model: Path, options: dict[str, str], repeat: int) -> dict[str, float] | str:
    """The least of ``repeat`` runs' figures (``_CHILD``), or the error's last line."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    best: dict[str, float] | None = None
    for _ in range(repeat):
        done = subprocess.run([sys.executable, "-c", _CHILD, str(model), json.dumps(options)], env=env,
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return (done.stderr.strip().splitlines() or ["failed"])[-1][:80]
        found = json.loads(done.stdout.strip().splitlines()[-1])
        best = found if best is None or found["seconds"] < best["seconds"] else best
    assert best is not None
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", action="append", default=[], help="LABEL=DIR of an npuplan source tree")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--ops", type=int, nargs="+", default=[1000, 3000, 10000])
    parser.add_argument("--chains", type=Path, default=Path("/tmp/npuplan_chains"))
    parser.add_argument("--big", type=Path, default=Path("/tmp/npuplan_big"))
    parser.add_argument("--scenario", action="append", choices=sorted(GOALS))
    parser.add_argument("--model", action="append")
    args = parser.parse_args()
    trees = [tuple(s.split("=", 1)) for s in args.src] or [("this", str(HERE.parent / "src"))]
    models = [write_chain(args.chains, n) for n in sorted(args.ops)]
    models += sorted(args.big.glob("*.tflite")) if args.big.is_dir() else []
    if args.model:
        models = [m for m in models if m.stem in args.model]
    for goal in args.scenario or GOALS:
        print(f"\n{goal} ({GOALS[goal]}): CPU s of api.plan, min of {args.repeat}; cycles, SRAM bytes")
        chain_seconds: dict[str, dict[int, float]] = {label: {} for label, _ in trees}
        for model in models:
            cells = []
            for label, src in trees:
                found = timed(Path(src), model, SCENARIOS[GOALS[goal]], args.repeat)
                if isinstance(found, str):
                    cells.append(f"{label} error: {found}")
                    continue
                cells.append(f"{label} {found['seconds']:7.2f} s  ops {found['ops']:>6} cycles {found['cycles']:>11} "
                             f"sram {found['sram']:>8}")
                if model.stem.startswith("chain_"):
                    chain_seconds[label][int(found["ops"])] = found["seconds"]
            print(f"  {model.stem:22} " + " | ".join(cells), flush=True)
        for label, seconds in chain_seconds.items():
            if len(seconds) > 1:
                lo, hi = min(seconds), max(seconds)
                growth = math.log(seconds[hi] / seconds[lo]) / math.log(hi / lo)
                print(f"  {label}: {lo} -> {hi} ops: {seconds[lo]:.2f} -> {seconds[hi]:.2f} s "
                      f"(x{seconds[hi] / seconds[lo]:.1f} for x{hi / lo:.0f} ops; exponent {growth:.2f}, 1.0 is linear)")


if __name__ == "__main__":
    main()
