"""Does a larger budget ever plan slower? A sweep over random networks, wider than the property test.

Draws random networks (conv chains, residual blocks and concats: the property tests' own
builder, ``tests/property/schedule/graphs.network``) from a seeded generator, plans each on
u55-128 Shared_Sram Performance at eleven budgets from its floor (the error's figure) to just
above its max schedule's peak, and counts the budget pairs ``small < large`` whose plan at
``large`` is more than ``EQUAL_SPEED_FRACTION`` (the planner's documented equal-speed rule)
slower than at ``small``. Prints per search: pairs, violations, the worst ratio, and the first
few violating networks. Asserts nothing.

Usage: python bench/budget_sweep.py [--networks N] [--seed S] [--search auto|cascade|pareto ...]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from npuplan.errors import InfeasiblePlan  # noqa: E402
from npuplan.hw import build_architecture  # noqa: E402
from npuplan.options import PlanOptions, Search  # noqa: E402
from npuplan.schedule import plan_schedule  # noqa: E402
from npuplan.schedule.search.planner import EQUAL_SPEED_FRACTION  # noqa: E402
from bench.schedule_graphs import network  # noqa: E402

FRACTIONS = (0.0, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 0.97, 1.0, 1.05)  # of the way from floor to max peak


def random_blocks(rng: random.Random) -> list[tuple[str, int, int, int]]:
    """Blocks as ``graphs.network`` takes them, drawn like the property tests' ``BLOCKS``."""
    blocks = []
    for _ in range(rng.randint(1, 7)):
        kind = rng.choice(["conv", "conv", "conv", "residual", "concat"])
        if kind == "conv":
            blocks.append(("conv", rng.choice([8, 24, 48]), rng.choice([1, 3]), rng.choice([1, 1, 2])))
        elif kind == "residual":
            blocks.append(("residual", rng.choice([8, 16]), rng.choice([1, 3]), 1))
        else:
            blocks.append(("concat", rng.choice([8, 16]), rng.choice([8, 16]), 1))
    return blocks


def planned(graph, budget: int, search: Search) -> tuple[float | None, int]:  # type: ignore[no-untyped-def]
    """``(cycles, peak)`` of the plan within ``budget``, or ``(None, bytes needed)``."""
    options = PlanOptions(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                          memory_mode="Shared_Sram", arena_cache_size_bytes=budget, search=search)
    try:
        schedule = plan_schedule(graph, build_architecture(options), options)
    except InfeasiblePlan as err:
        return None, err.needed_bytes
    return sum(float(o.cost.total_cycles) for o in schedule.ops), schedule.sram_peak_bytes


def sweep(graph, search: Search) -> list[tuple[tuple[int, float], tuple[int, float]]]:  # type: ignore[no-untyped-def]
    """Every pair of budgets of one network; the ones that violate are returned, all counted."""
    _, max_peak = planned(graph, 1 << 24, search)
    _, floor = planned(graph, 16, search)
    budgets = sorted({int(floor + (max_peak - floor) * f) for f in FRACTIONS})
    results = [(b, c) for b in budgets if (c := planned(graph, b, search)[0]) is not None]
    return [(results[i], results[j]) for i in range(len(results)) for j in range(i + 1, len(results))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--search", action="append", choices=[s.value for s in Search])
    args = parser.parse_args()
    searches = [Search(s) for s in (args.search or ["auto"])]
    rng = random.Random(args.seed)
    cases = [(random_blocks(rng), rng.randint(8, 40), rng.randint(2, 16)) for _ in range(args.networks)]
    for search in searches:
        pairs, slower = 0, []
        for blocks, h, w in cases:
            for (small, tight), (large, roomy) in sweep(network(blocks, h, w), search):
                pairs += 1
                if roomy > tight * (1 + EQUAL_SPEED_FRACTION):
                    slower.append((roomy / tight, blocks, h, w, small, tight, large, roomy))
        worst = max((s[0] for s in slower), default=1.0)
        print(f"{search.value}: {pairs} budget pairs over {len(cases)} networks, {len(slower)} slower by more "
              f"than {EQUAL_SPEED_FRACTION:.0%} at the larger budget (worst {worst:.3f}x)")
        for ratio, blocks, h, w, small, tight, large, roomy in sorted(slower, reverse=True)[:5]:
            print(f"  {ratio:.3f}x  network({blocks}, h={h}, w={w}): {tight:.0f} cycles at {small} B, "
                  f"{roomy:.0f} at {large} B")


if __name__ == "__main__":
    main()
