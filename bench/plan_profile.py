"""Where planning time goes, by package and by function (issue 26: the per-op constant).

Runs ``npuplan.api.plan`` under cProfile on each network in each scenario (Performance: u55-128
High_End Shared_Sram; Size: u55-64 Deep_Embedded Shared_Sram) and prints: the profiled seconds per
npuplan package (own time, summed over its modules: schedule/pricing, schedule/moves, cost, io, ...),
the top functions by own time and by cumulative time, and the calls per op of the costing entry
points (``cost_op`` and its memo misses, ``_cost_with``), so a change to the per-op constant shows as
a count, not only as seconds on a shared machine. cProfile slows the run 2-3x; the shares, not the
seconds, are the figure. Prints figures; asserts nothing.

Usage: python bench/plan_profile.py [--top 25] [--scenario performance size] NET.tflite ...
       (chains: python bench/chain_nets.py --ops 1000 3000)
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from scenarios import SCENARIOS  # noqa: E402

GOALS = {"performance": "u55_128_highend_shared_perf", "size": "u55_64_deep_shared_size"}
# the costing's entry point and the work behind its memo misses: their calls per op are the constant
COUNTED = (("costing.py", "cost_op"), ("costing.py", "_cost_with"), ("usage.py", "fm_buffers"),
           ("cascades.py", "_segment"), ("weights.py", "_ranked"))


def _package(filename: str) -> str:
    """``npuplan/schedule/pricing/x.py`` -> ``schedule/pricing``; outside npuplan: ``(other)``."""
    parts = Path(filename).parts
    if "npuplan" not in parts:
        return "(builtins, stdlib)"
    inner = parts[parts.index("npuplan") + 1:-1]
    return "/".join(inner[:2]) or "(top)"


def profile(model: Path, options: dict[str, str]) -> tuple[pstats.Stats, int]:
    """The profile of one plan and the plan's NPU op count."""
    from npuplan.api import plan

    profiler = cProfile.Profile()
    profiler.enable()
    result = plan(str(model), **options)
    profiler.disable()
    return pstats.Stats(profiler), len(result.lowered.ops)


def report(stats: pstats.Stats, ops: int, top: int) -> None:
    entries = stats.stats  # type: ignore[attr-defined]  # {(file, line, func): (cc, nc, tt, ct, callers)}
    total = sum(tt for _, _, tt, _, _ in entries.values())
    by_package: dict[str, float] = defaultdict(float)
    for (filename, _, _), (_, _, tt, _, _) in entries.items():
        by_package[_package(filename)] += tt
    print(f"  profiled {total:.2f} s, {ops} ops; own time by package:")
    for name, seconds in sorted(by_package.items(), key=lambda kv: -kv[1]):
        if seconds >= 0.01 * total:
            print(f"    {name:24} {seconds:8.2f} s {100 * seconds / total:5.1f}%")
    print("  calls per op:")
    for filename, func in COUNTED:
        calls = sum(nc for (f, _, fn), (_, nc, _, _, _) in entries.items() if f.endswith(filename) and fn == func)
        print(f"    {filename}:{func:14} {calls:8d} calls {calls / max(ops, 1):6.2f} per op")
    for key in ("tottime", "cumtime"):
        print(f"  top {top} by {key}:")
        rows = sorted(entries.items(), key=lambda kv: -kv[1][2 if key == "tottime" else 3])[:top]
        for (filename, line, func), (_, nc, tt, ct, _) in rows:
            where = "/".join(Path(filename).parts[-3:])
            print(f"    {tt:7.2f} {ct:7.2f} {nc:8d}  {where}:{line}({func})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", type=Path, nargs="+")
    parser.add_argument("--scenario", nargs="+", choices=sorted(GOALS), default=sorted(GOALS))
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    for model in args.models:
        for goal in args.scenario:
            print(f"\n{model.stem} {goal} ({GOALS[goal]})")
            stats, ops = profile(model, SCENARIOS[GOALS[goal]])
            report(stats, ops, args.top)


if __name__ == "__main__":
    main()
