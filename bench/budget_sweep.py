"""Does a larger budget ever plan slower? A sweep over random networks, wider than the property test.

Draws random networks (conv chains, residual blocks and concats: the property tests' own
builder, ``bench/schedule_graphs.network``) from a seeded generator, plans each on u55-128
Shared_Sram Performance at eleven budgets from its floor (the error's figure) to just above its
max schedule's peak, and counts the budget pairs ``small < large`` whose plan at ``large`` is
slower than at ``small`` (strictly: Performance takes the fastest candidate, exact ties by smaller
peak). Prints per search: pairs, inversions, the worst ratio, and the first few inverted networks.
Asserts nothing.

With ``--zoo DIR ...`` it sweeps real networks instead, through the whole planner (``api``: every
lowering and order variant): each model in u55-128 (Ethos_U55_High_End_Embedded, Shared_Sram) and
U65-256 (Ethos_U65_High_End, Dedicated_Sram), Performance, at ``--arena-cache-size`` budgets of
``ZOO_BUDGETS_KIB``, and lists every inversion: a budget pair ``small < large`` whose plan at
``large`` has more ``cycles_total`` than at ``small``. ``--random-nets N`` does the same for the
seeded TFLite networks of ``bench/random_graphs.py`` (seeds ``--seed`` on) at the smaller budgets
of ``RANDOM_BUDGETS_KIB``, where most of them bind.

Usage: python bench/budget_sweep.py [--networks N] [--seed S] [--search auto|cascade|pareto ...]
       python bench/budget_sweep.py --zoo DIR [DIR ...] [--model NAME ...]
       python bench/budget_sweep.py --random-nets N [--seed S]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from npuplan.api import PreparedModel, make_options, plan_prepared  # noqa: E402
from npuplan.errors import InfeasiblePlan, NpuplanError  # noqa: E402
from npuplan.report import build_report  # noqa: E402
from npuplan.report.summary import summary_row  # noqa: E402
from npuplan.hw import build_architecture  # noqa: E402
from npuplan.options import PlanOptions, Search  # noqa: E402
from npuplan.schedule import plan_schedule  # noqa: E402
from bench.random_graphs import random_network  # noqa: E402
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


ZOO_BUDGETS_KIB = (64, 128, 256, 384, 512, 1024, 2048)
ZOO_SCENARIOS = {
    "u55_128_shared_perf": dict(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                                memory_mode="Shared_Sram", optimise="Performance"),
    "u65_256_dedicated_perf": dict(accelerator_config="ethos-u65-256", system_config="Ethos_U65_High_End",
                                   memory_mode="Dedicated_Sram", optimise="Performance"),
}


def zoo_cycles(model: PreparedModel, options: dict[str, str], budget_bytes: int) -> float | None:
    """The plan's total cycles within ``budget_bytes``, or None when it does not fit."""
    plan_options = make_options(**options, arena_cache_size=budget_bytes)
    try:
        result = plan_prepared(model, plan_options)
    except InfeasiblePlan:
        return None
    return float(summary_row(build_report(result))["cycles_total"])


RANDOM_BUDGETS_KIB = (4, 8, 16, 24, 32, 48, 64, 96, 128, 256)


def zoo_sweep(models: list[tuple[str, Callable[[], PreparedModel]]],
              budgets_kib: tuple[int, ...] = ZOO_BUDGETS_KIB) -> None:
    """Every model of ``models`` (name, reader: read once per scenario, not all held at once) at
    every budget of ``budgets_kib`` in ``ZOO_SCENARIOS``; prints the inversions and a count per
    scenario (a model that does not read is skipped)."""
    for scenario, options in ZOO_SCENARIOS.items():
        pairs, inversions = 0, []
        for name, read in models:
            try:
                model = read()
            except NpuplanError:
                continue
            figures = [(kib, c) for kib in budgets_kib if (c := zoo_cycles(model, options, kib * 1024))]
            for i, (small, tight) in enumerate(figures):
                for large, roomy in figures[i + 1:]:
                    pairs += 1
                    if roomy > tight:
                        inversions.append((roomy / tight, name, small, tight, large, roomy))
            print(f"  {scenario} {name}: " + " ".join(f"{k}k={c:.0f}" for k, c in figures), flush=True)
        worst = max((r for r, *_ in inversions), default=1.0)
        print(f"{scenario}: {pairs} budget pairs over {len(models)} models, {len(inversions)} inversions "
              f"(worst {worst:.4f}x)")
        for ratio, name, small, tight, large, roomy in sorted(inversions, reverse=True):
            print(f"  {ratio:.4f}x  {name}: {tight:.0f} cycles at {small} KiB, {roomy:.0f} at {large} KiB")


def _random_model(seed: int) -> PreparedModel:
    return PreparedModel(random_network(seed), f"random_{seed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--search", action="append", choices=[s.value for s in Search])
    parser.add_argument("--zoo", type=Path, nargs="*", help="sweep these zoos' models instead of random networks")
    parser.add_argument("--model", nargs="*", help="with --zoo: only these models")
    parser.add_argument("--random-nets", type=int, help="sweep this many seeded random TFLite networks instead")
    args = parser.parse_args()
    if args.zoo:
        paths = [m for z in args.zoo for m in sorted(z.glob("*.tflite")) if not args.model or m.stem in args.model]
        zoo_sweep([(m.stem, partial(PreparedModel.read, m)) for m in paths])
        return
    if args.random_nets:
        seeds = range(args.seed, args.seed + args.random_nets)
        zoo_sweep([(f"random_{s}", partial(_random_model, s)) for s in seeds], RANDOM_BUDGETS_KIB)
        return
    searches = [Search(s) for s in (args.search or ["auto"])]
    rng = random.Random(args.seed)
    cases = [(random_blocks(rng), rng.randint(8, 40), rng.randint(2, 16)) for _ in range(args.networks)]
    for search in searches:
        pairs, slower = 0, []
        for blocks, h, w in cases:
            for (small, tight), (large, roomy) in sweep(network(blocks, h, w), search):
                pairs += 1
                if roomy > tight:
                    slower.append((roomy / tight, blocks, h, w, small, tight, large, roomy))
        worst = max((s[0] for s in slower), default=1.0)
        print(f"{search.value}: {pairs} budget pairs over {len(cases)} networks, {len(slower)} slower at the "
              f"larger budget (worst {worst:.4f}x)")
        for ratio, blocks, h, w, small, tight, large, roomy in sorted(slower, reverse=True)[:5]:
            print(f"  {ratio:.4f}x  network({blocks}, h={h}, w={w}): {tight:.0f} cycles at {small} B, "
                  f"{roomy:.0f} at {large} B")


if __name__ == "__main__":
    main()
