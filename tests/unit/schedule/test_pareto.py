"""The Pareto search: within the budget, the same infeasibility error, auto keeps the better plan."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from npuplan.cost import Direction, Purpose
from npuplan.errors import InfeasiblePlan
from npuplan.hw import build_architecture
from npuplan.hw.memory import MemArea
from npuplan.options import Optimise, PlanOptions, Search
from npuplan.schedule import Schedule, plan_schedule
from npuplan.schedule.pricing.costing import Costed
from npuplan.schedule.search.frontier import Point
from npuplan.schedule.search.planner import EQUAL_SPEED_FRACTION
from npuplan.schedule.search.pareto import CYCLES, SEED, Option, Step, extend, search_cost, search_heights

from .chains import conv_chain

LAYERS = [(16, 1), (32, 1), (32, 2), (32, 1), (64, 2)]


def _options(budget: int | None, search: Search, optimise: Optimise = Optimise.PERFORMANCE,
             memory_mode: str = "Shared_Sram") -> PlanOptions:
    if memory_mode == "Shared_Sram":
        target = dict(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded")
    else:
        target = dict(accelerator_config="ethos-u65-256", system_config="Ethos_U65_High_End")
    return PlanOptions(**target, memory_mode=memory_mode, arena_cache_size_bytes=budget,  # type: ignore[arg-type]
                       optimise=optimise, search=search)


def _plan(options: PlanOptions, layers=LAYERS, size: int = 64) -> Schedule:  # type: ignore[no-untyped-def]
    return plan_schedule(conv_chain(layers, h=size, w=size), build_architecture(options), options)


def _cycles(schedule: Schedule) -> float:
    return sum(float(o.cost.total_cycles) for o in schedule.ops)  # type: ignore[union-attr]


def test_tight_budget_cascades_within_the_budget() -> None:
    s = _plan(_options(150_000, Search.PARETO))
    assert s.notes[:1] == ("search=pareto",)
    assert s.cascades and s.sram_peak_bytes <= 150_000
    assert all(o.sram_usage_bytes <= 150_000 for o in s.ops)


def test_no_fit_raises_the_cascade_search_error() -> None:
    errors = []
    for search in (Search.CASCADE, Search.PARETO, Search.AUTO):
        with pytest.raises(InfeasiblePlan) as err:
            _plan(_options(4096, search))
        errors.append(err.value)
    assert all(e.budget_bytes == 4096 and e.needed_bytes > 4096 for e in errors)
    assert len({(e.op, e.why) for e in errors}) == 1  # the input that must stay whole, whichever search


@pytest.mark.parametrize("budget", [None, 150_000])
def test_auto_keeps_the_faster_plan(budget: int | None) -> None:
    """Auto takes the faster search's plan, or one within the equal-speed fraction of it with a
    smaller peak (``planner.order_by_speed``)."""
    cascade, pareto, auto = (_plan(_options(budget, s)) for s in (Search.CASCADE, Search.PARETO, Search.AUTO))
    fastest = min((cascade, pareto), key=_cycles)
    assert _cycles(auto) <= _cycles(fastest) * (1 + EQUAL_SPEED_FRACTION)
    assert _cycles(auto) == _cycles(fastest) or auto.sram_peak_bytes <= fastest.sram_peak_bytes
    assert auto.sram_peak_bytes <= (budget or 1 << 32)


def test_auto_size_keeps_the_smaller_peak() -> None:
    plans = [_plan(_options(None, s, Optimise.SIZE)) for s in (Search.CASCADE, Search.PARETO, Search.AUTO)]
    assert plans[2].sram_peak_bytes == min(p.sram_peak_bytes for p in plans[:2])


def test_dedicated_sram_plan_within_the_cache() -> None:
    s = _plan(_options(40_000, Search.PARETO, memory_mode="Dedicated_Sram_384KB"))
    assert s.sram_peak_bytes <= 40_000


@dataclass(frozen=True)
class _Cost:
    bytes: dict = field(default_factory=dict)  # type: ignore[type-arg]


def _costed(cycles: int, moved: dict) -> Costed:  # type: ignore[type-arg]
    return Costed(None, None, None, None, _Cost(moved), cycles, 0)  # type: ignore[arg-type]


def test_search_cost_weighs_slow_memories_and_cycles_as_the_seed() -> None:
    key = (Purpose.FEATURE_MAP, Direction.READ)
    sram = search_cost(_costed(0, {(MemArea.SRAM, *key): 100}))
    dram = search_cost(_costed(0, {(MemArea.DRAM, *key): 100}))
    flash = search_cost(_costed(0, {(MemArea.OFF_CHIP_FLASH, *key): 100}))
    assert (sram, dram, flash) == (100, 1000, 2000)
    assert search_cost(_costed(3, {})) == 120


def test_a_prefetch_is_charged_on_the_previous_steps_tail() -> None:
    step = Step(1, 1, (8,), (), ())
    before = Point(10.0, 500, 450, None)
    plain = extend(before, Option(step, (5.0, 1.0), 300, 300), SEED)
    fetched = extend(before, Option(step, (4.0, 2.0), 320, 320, prefetch_bytes=100), CYCLES)
    assert (plain.cost, plain.peak_bytes, plain.tail_bytes) == (15.0, 500, 300)
    assert (fetched.cost, fetched.peak_bytes) == (12.0, 550)
    assert plain.payload == (step, None)


def test_search_heights_keep_ends_powers_of_two_and_divisors() -> None:
    assert search_heights([1, 2, 3, 4, 5, 6, 7, 8, 13, 20], 40) == [1, 2, 4, 5, 8, 20]
    assert search_heights([2, 3], 9) == [2, 3]


def test_a_dp_run_prices_staging_an_input_so_it_keeps_a_stem_worth_staging_uncascaded() -> None:
    """conv 7x7/2 on a 3-channel input -> PAD -> max pool (resnet's stem), U65 Dedicated_Sram:
    ``choose`` stages the input of an op left out of a cascade, which makes the conv much faster
    than cascading it with the pad's copy. The DP run that prices staging offers the conv alone
    with its input staged, and its cheapest plan on cycles leaves the conv alone; the runs without
    it find cascading the two cheaper (resnet50 on the U65 lost its best plan so, once that
    cascade existed), and the proposals are those of every run."""
    import numpy as np

    from npuplan.ir.types import DataType
    from npuplan.lowering import lower
    from npuplan.schedule.moves.cascades import _context
    from npuplan.schedule.pricing.costing import cost_op
    from npuplan.schedule.model.network import build_network
    from npuplan.schedule.pricing.cost_adapter import default_oracle
    from npuplan.schedule.search.pareto import RUNS, SearchSpace, catalogue, search_frontier, single_options, steps_of
    from npuplan.schedule.model.decisions import max_decisions
    from npuplan.schedule.moves.staging import staged_bases
    from npuplan.schedule.model.usage import fast_buffers, usage_by_time
    from tests.unit.lowering._build import conv, const, fm, graph, model, op

    x, c, p, y = fm("x", (1, 96, 96, 3)), fm("c", (1, 48, 48, 16)), fm("p", (1, 50, 50, 16)), fm("y", (1, 24, 24, 16))
    pads = const("pads", np.array([[0, 0], [1, 1], [1, 1], [0, 0]]), DataType.INT32, None)
    g = graph([conv(x, c, 7, stride=2), op("PAD", [c, pads], [p], 1),
               op("MAX_POOL_2D", [p], [y], 2, padding="VALID", filter_height=3, filter_width=3, stride_h=2,
                  stride_w=2, fused_activation_function="NONE")], [x], [y])
    options = _options(None, Search.PARETO, memory_mode="Dedicated_Sram_384KB")
    arch = build_architecture(options)
    net = build_network(lower(model(g), arch.accelerator), pack_unaligned=False)
    oracle = default_oracle(arch)
    base = max_decisions(net, arch)
    staged = staged_bases(net, base, arch, oracle)
    assert staged[0][1] == 96 * 96 * 3  # the input, staged for the conv alone
    space = SearchSpace(net, arch, oracle, base, tuple(usage_by_time(net, fast_buffers(net, base))),
                        _context(net, base, arch, oracle, with_weights=False), staged=staged)

    priced = single_options(space, 0)
    fast = cost_op(net, staged[0][0], arch, oracle, 0).cycles
    assert [o.staged for o in priced].count(True) == len(priced) // 2  # every weight plan, staged or not
    assert all(o.costs[CYCLES] == fast and o.peak_bytes >= 96 * 96 * 3 for o in priced[1:2])

    def cheapest_steps(staging: bool) -> list[tuple[int, int]]:
        best = search_frontier(space, catalogue(space), arch.arena_cache_size_bytes, CYCLES, staging=staging)[0]
        return [(step.start, step.end) for step in steps_of(best.payload)]

    assert cheapest_steps(True)[0] == (0, 0)
    assert cheapest_steps(False)[0] == (0, 1)
    assert (CYCLES, False) in RUNS and (CYCLES, True) in RUNS
    assert staged_bases(net, base, build_architecture(_options(None, Search.PARETO)), oracle) == {}  # Shared_Sram
    schedule = plan_schedule(lower(model(g), arch.accelerator), arch, options)
    assert schedule.staged_fms == ("x",) and not schedule.cascades
