"""Is a form with its tables apart (Vela's LUT as a pool) worth planning in full? Measures the local
price ``plan_forms._apart_may_win`` decides by against the form's full plan.

Per network and Performance scenario where the chosen lowering (``plan_forms.planned_lowerings``,
before Vela's forms) has forms with tables apart (``plan_forms.vela_forms``): the chosen plan's
NPU cycles; the least local price of those forms (``form_price.change_cycles``) with every map in
fast storage and with the network's inputs and outputs in the arena, as a share of those cycles;
the full plan of the form of least price (planned whatever the rule says) against them; whether it
won and whether the rule (``_APART_PRICE_MARGIN``) plans it. Then the largest optimistic price of
a winner, the winners the rule skips, and the CPU seconds of the plans it skips. Prints figures;
asserts nothing.

Usage: python bench/apart_price.py [--zoo DIR ...] [--model NAME ...] [--scenario NAME ...] [--deployable]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from scenarios import SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan import api, plan_forms  # noqa: E402
from npuplan.errors import NpuplanError  # noqa: E402
from npuplan.form_price import change_cycles  # noqa: E402
from npuplan.hw import build_architecture  # noqa: E402
from npuplan.options import Optimise  # noqa: E402
from npuplan.prepared import PreparedModel  # noqa: E402

ZOOS = (Path("/work/shared/models"), HERE.parent / "tests" / "data", Path("/work/zoo"), Path("/work/zoo2"),
        Path("/work/zoo3"))
PERFORMANCE = [n for n, o in SCENARIOS.items() if o.get("optimise") == "Performance"]


def network_row(path: Path, options: api.PlanOptions) -> tuple[float, float, float, float, bool] | None:
    """(fast price, ends price, full plan's change: shares of the chosen plan's cycles; CPU s of
    that plan; whether the rule plans it), or None without tables-apart forms or a feasible plan."""
    model, arch, quiet = PreparedModel.read(path), build_architecture(options), (lambda _s: None)
    planned, bases = plan_forms.planned_lowerings(model, arch, options, quiet)
    chosen = plan_forms._better(planned, options)
    base, _, apart = plan_forms.vela_forms(model, chosen, bases, arch, options)
    if not apart:
        return None
    oracle, pack = model.oracle(arch, options.optimise), plan_forms.packs_unaligned(arch, options)
    cycles = chosen[1].total_npu_cycles
    prices = [change_cycles(base, f, arch, oracle, pack_unaligned=pack) for f in apart]
    ends = min(change_cycles(base, f, arch, oracle, pack_unaligned=pack, arena_ends=True) for f in apart)
    started = time.process_time()
    result = plan_forms._planned(apart[prices.index(min(prices))], arch, options, model.encodings(arch.accelerator),
                                 oracle, quiet)
    seconds = time.process_time() - started
    if isinstance(result, Exception):
        return None
    planned_rule = plan_forms._apart_may_win(base, apart, prices, cycles, arch, oracle, pack)
    return min(prices) / cycles, ends / cycles, result[1].total_npu_cycles / cycles - 1, seconds, planned_rule


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", type=Path, action="append")
    parser.add_argument("--model", action="append")
    parser.add_argument("--scenario", action="append", choices=PERFORMANCE)
    parser.add_argument("--deployable", action="store_true")
    args = parser.parse_args()
    models = [m for zoo in args.zoo or [z for z in ZOOS if z.is_dir()] for m in sorted(zoo.glob("*.tflite"))
              if not args.model or m.stem in args.model]
    print(f"{'network':28} {'scenario':34} {'fast':>7} {'ends':>7} {'planned':>8} {'CPU s':>6}  won  rule")
    rows = []
    for scenario in args.scenario or PERFORMANCE:
        options = api.make_options(deployable=args.deployable, **SCENARIOS[scenario])
        assert options.optimise is Optimise.PERFORMANCE
        for path in models:
            try:
                row = network_row(path, options)
            except NpuplanError:
                continue
            if row is not None:
                fast, ends, change, seconds, rule = row
                print(f"{path.stem:28} {scenario:34} {fast:+7.3f} {ends:+7.3f} {change:+8.3f} {seconds:6.2f}  "
                      f"{'won' if change < 0 else '   '}  {'plans' if rule else 'skips'}", flush=True)
                rows.append(row)
    winners = [r for r in rows if r[2] < 0]
    print(f"\n{len(rows)} runs with tables-apart forms, {len(winners)} won; largest optimistic price of a winner: "
          f"{max((min(r[0], r[1]) for r in winners), default=float('nan')):+.3f}; winners the rule skips: "
          f"{sum(not r[4] for r in winners)}; plans it skips: {sum(not r[4] for r in rows)} "
          f"({sum(r[3] for r in rows if not r[4]):.2f} of {sum(r[3] for r in rows):.2f} CPU s)")


if __name__ == "__main__":
    main()
