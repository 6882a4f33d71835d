"""Could a local price decide a network's lowering forms without planning each in full? Measures it.

``api.plan_prepared`` plans every lowering a model offers in full (the plain one, each other form
of ``PreparedModel.variants``: a MEAN summed in parallel rows, MUL+MAX unfolded, a REDUCE_MAX tree,
a concatenation written in place; their least-peak reorders; the chosen one's Vela forms) and keeps
the best. A form rewrites a few ops. This bench prices each form locally against the plain
lowering's full plan: plain's cycles moved by ``npuplan.form_price.change_cycles`` (the ops the
form writes less those it replaces, each op whole with every map in fast storage, by the one cost
oracle). It plans every lowering in full itself, whatever ``api`` skips. Then, per network with more than one lowering:

  lowering  its full plan's NPU cycles  the local estimate  estimate / full plan  CPU s  won/lost

and overall: the CPU share of the full plans that lost (what a perfect local decision could save),
how far the estimate is from the full plan for the winners (how far it may under-promise a form
that wins), and how many losing plans a margin M (plan a form in full only when its estimate is
within M of the best full plan so far, the lowering of least estimate planned first, as
``plan_forms._planned_by_price`` does with M = 0.2) would have skipped, with the winners it would have lost.
Performance scenarios only (the Size goal compares SRAM peaks, which no local price gives).
Deployable plans (``--emit-tflite``'s) unless ``--no-deployable``. Prints figures; asserts nothing.

Usage: python bench/form_price.py [--zoo DIR ...] [--model NAME ...] [--scenario NAME ...]
           [--margin M ...] [--no-deployable]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from scenarios import SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan import api, plan_forms  # noqa: E402
from npuplan.errors import NpuplanError  # noqa: E402
from npuplan.hw import build_architecture  # noqa: E402
from npuplan.hw.memory import Architecture  # noqa: E402
from npuplan.form_price import change_cycles  # noqa: E402
from npuplan.ir.lowered import LoweredGraph  # noqa: E402
from npuplan.options import Optimise, PlanOptions  # noqa: E402
from npuplan.schedule.search.planner import packs_unaligned  # noqa: E402

ZOOS = (Path("/work/shared/models"), Path("/work/zoo"), Path("/work/zoo2"), Path("/work/zoo3"))


@dataclass(frozen=True)
class Row:
    network: str
    scenario: str
    label: str
    cycles: int | None  # None: infeasible
    estimate: int
    seconds: float
    won: bool = False


def _lowerings(model: api.PreparedModel, options: PlanOptions, arch: Architecture,
               ) -> list[tuple[str, LoweredGraph]]:
    """The lowerings ``plan_prepared`` plans, named: variants, their reorders, the Vela forms."""
    cpu = frozenset(options.deploy_cpu_ops)
    variants = model.variants(arch.accelerator, concat_in_place=options.concat_in_place,
                              deployable=options.deployable, cpu_ops=cpu, staged_forms=plan_forms._slow_arena(arch))
    named = [("plain" if i == 0 else f"form{i}", v) for i, v in enumerate(variants)]
    for name, v in list(named):
        r = plan_forms._least_peak_variant(v, options, arch, model.orders) if options.reorder else None
        if r is not None:
            named.append((f"{name}+reorder", r))
    for name, v in list(named[:len(variants)]):
        named += [(f"{name}+vela", f) for f in model.forms(arch.accelerator, v, deployable=options.deployable,
                                                           cpu_ops=cpu)]
    return named


def network_rows(path: Path, scenario: str, options: PlanOptions) -> list[Row]:
    model = api.PreparedModel.read(path)
    arch = build_architecture(options)
    encodings, oracle = model.encodings(arch.accelerator), model.oracle(arch)
    named = _lowerings(model, options, arch)
    if len(named) < 2:
        return []
    planned = []
    for _, lowered in named:
        started = time.process_time()
        result = plan_forms._planned(lowered, arch, options, encodings, oracle, lambda _s: None)
        planned.append((result, time.process_time() - started))
    base = planned[0][0]
    if isinstance(base, Exception):
        return []
    base_lowered, base_cycles = named[0][1], base[1].total_npu_cycles
    feasible = [r for r, _ in planned if not isinstance(r, Exception)]
    best = plan_forms._better(feasible, options)
    rows = []
    for (label, lowered), (result, seconds) in zip(named, planned):
        change = change_cycles(base_lowered, lowered, arch, oracle, pack_unaligned=packs_unaligned(arch, options))
        cycles = None if isinstance(result, Exception) else result[1].total_npu_cycles
        rows.append(Row(path.stem, scenario, label, cycles, base_cycles + change, seconds,
                        won=result is best))
    return rows


def _summary(rows: list[Row], margins: list[float]) -> None:
    total = sum(r.seconds for r in rows)
    lost = [r for r in rows if not r.won]
    print(f"\n{len({(r.network, r.scenario) for r in rows})} network runs with more than one lowering, "
          f"{len(rows)} full plans, {total:.2f} CPU s; the {len(lost)} plans that lost took "
          f"{sum(r.seconds for r in lost):.2f} s ({100 * sum(r.seconds for r in lost) / max(total, 1e-9):.0f}%), "
          f"the plain ones among them {sum(r.seconds for r in lost if r.label == 'plain'):.2f} s")
    winners = [r for r in rows if r.won and r.label != "plain" and r.cycles]
    ratios = sorted(r.estimate / r.cycles for r in winners)
    if ratios:
        print(f"winning forms, estimate / full plan: median {ratios[len(ratios) // 2]:.3f}, max {ratios[-1]:.3f}, "
              f"above 1.05: {sum(x > 1.05 for x in ratios)} of {len(ratios)}")
    for margin in margins:
        skipped, seconds, missed = _simulate(rows, margin)
        print(f"margin {margin:.2f}: would skip {skipped} of {len(lost)} losing plans ({seconds:.2f} CPU s, "
              f"{100 * seconds / max(total, 1e-9):.0f}%) and lose {missed} winners")


def _simulate(rows: list[Row], margin: float) -> tuple[int, float, int]:
    """As ``plan_forms._planned_by_price``: plan the lowering of least estimate first, then each other one
    only when its estimate (the first plan's cycles moved by the two estimates' difference) is within
    ``margin`` of the best plan so far: the losing plans skipped, their CPU seconds (as measured
    here, where plain is planned first), and the winners skipped."""
    skipped = missed = 0
    seconds = 0.0
    for key in dict.fromkeys((r.network, r.scenario) for r in rows):
        group = sorted((r for r in rows if (r.network, r.scenario) == key), key=lambda r: r.estimate)
        first = next((r for r in group if r.cycles is not None), None)
        if first is None:
            continue
        best = first.cycles or 0
        for r in group[group.index(first) + 1:]:
            if first.cycles + r.estimate - first.estimate > best * (1 + margin):
                skipped += not r.won
                seconds += 0.0 if r.won else r.seconds
                missed += r.won
            elif r.cycles is not None:
                best = min(best, r.cycles)
    return skipped, seconds, missed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", type=Path, action="append", help="a folder of models (default: public, zoo, zoo2, zoo3)")
    parser.add_argument("--model", action="append")
    parser.add_argument("--scenario", action="append",
                        choices=[n for n, o in SCENARIOS.items() if o.get("optimise") == "Performance"])
    parser.add_argument("--margin", type=float, action="append")
    parser.add_argument("--no-deployable", action="store_true")
    args = parser.parse_args()
    models = [m for zoo in args.zoo or [z for z in ZOOS if z.is_dir()] for m in sorted(zoo.glob("*.tflite"))
              if not args.model or m.stem in args.model]
    rows: list[Row] = []
    print(f"{'network':28} {'scenario':34} {'lowering':16} {'cycles':>10} {'estimate':>10} {'est/plan':>8} "
          f"{'CPU s':>6}")
    for scenario in args.scenario or [n for n, o in SCENARIOS.items() if o.get("optimise") == "Performance"]:
        options = api.make_options(deployable=not args.no_deployable, **SCENARIOS[scenario])
        assert options.optimise is Optimise.PERFORMANCE
        for path in models:
            try:
                found = network_rows(path, scenario, options)
            except NpuplanError as error:
                print(f"{path.stem:28} {scenario:34} error: {error}")
                continue
            for r in found:
                ratio = f"{r.estimate / r.cycles:8.3f}" if r.cycles else f"{'-':>8}"
                print(f"{r.network:28} {r.scenario:34} {r.label:16} {r.cycles or 0:>10} {r.estimate:>10} {ratio} "
                      f"{r.seconds:6.2f}{'  won' if r.won else ''}", flush=True)
            rows += found
    _summary(rows, args.margin or [0.05, 0.2, 0.5])


if __name__ == "__main__":
    main()
