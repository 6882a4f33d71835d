"""The Pareto search on random small chains and diamonds: every plan fits its budget and its
command stream validates; when nothing fits, the error says what was needed."""

from __future__ import annotations

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from npuplan.commands import build_command_stream, plan_addresses, validate
from npuplan.errors import InfeasiblePlan
from npuplan.hw import build_architecture
from npuplan.options import Optimise, PlanOptions, Search
from npuplan.schedule import plan_schedule
from npuplan.schedule.search.frontier import Point, pareto_front, prune
from npuplan.schedule.search.pareto import CYCLES, SEED, Option, Step, extend_all, front_indices

from bench.command_graphs import chain, diamond

LAYER = st.tuples(st.sampled_from([8, 16, 24, 40]), st.sampled_from([1, 3, 5]), st.sampled_from([1, 1, 2]))
TARGETS = {
    "Shared_Sram": dict(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded"),
    "Dedicated_Sram_384KB": dict(accelerator_config="ethos-u65-256", system_config="Ethos_U65_High_End"),
}
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))


@st.composite
def graphs(draw):  # type: ignore[no-untyped-def]
    if draw(st.booleans()):
        layers = draw(st.lists(LAYER, min_size=1, max_size=5))
        return chain(layers, h=draw(st.integers(4, 32)), w=draw(st.integers(1, 16)), c=draw(st.sampled_from([3, 8, 16])))
    return diamond(h=draw(st.integers(3, 24)), w=draw(st.integers(1, 8)), k_left=draw(st.sampled_from([1, 3, 5])),
                   k_right=draw(st.sampled_from([1, 3])))


def _options(mode: str, budget: int, optimise: Optimise, search: Search) -> PlanOptions:
    return PlanOptions(**TARGETS[mode], memory_mode=mode, arena_cache_size_bytes=budget,  # type: ignore[arg-type]
                       optimise=optimise, search=search)


@seed(11)
@SETTINGS
@given(graph=graphs(), budget=st.integers(1_000, 40_000), mode=st.sampled_from(sorted(TARGETS)),
       optimise=st.sampled_from(list(Optimise)))
def test_pareto_plans_fit_and_validate(graph, budget, mode, optimise) -> None:  # type: ignore[no-untyped-def]
    options = _options(mode, budget, optimise, Search.PARETO)
    arch = build_architecture(options)
    try:
        schedule = plan_schedule(graph, arch, options)
    except InfeasiblePlan as err:
        assert err.needed_bytes > budget == err.budget_bytes
        return
    assert schedule.sram_peak_bytes <= budget
    assert all(o.sram_usage_bytes <= budget for o in schedule.ops)
    addresses = plan_addresses(schedule, graph, arch)
    commands = build_command_stream(schedule, graph, arch, addresses)
    assert validate(commands, graph, arch, addresses, sram_limit_bytes=budget) == []


@seed(12)
@SETTINGS
@given(graph=graphs(), budget=st.integers(2_000, 60_000))
def test_auto_is_never_slower_than_the_cascade_search(graph, budget) -> None:  # type: ignore[no-untyped-def]
    plans = []
    for search in (Search.CASCADE, Search.AUTO):
        options = _options("Shared_Sram", budget, Optimise.PERFORMANCE, search)
        try:
            plans.append(plan_schedule(graph, build_architecture(options), options))
        except InfeasiblePlan:
            plans.append(None)
    cascade, auto = plans
    if cascade is not None:
        assert auto is not None
        assert sum(o.npu_cycles for o in auto.ops) <= sum(o.npu_cycles for o in cascade.ops)
        assert auto.sram_peak_bytes <= budget


POINT = st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6))  # cost, peak, tail: small, so ties


@st.composite
def fronts_and_options(draw):  # type: ignore[no-untyped-def]
    drawn = draw(st.lists(POINT, max_size=8))
    plans = pareto_front(Point(float(c), p, t, ("plan", k)) for k, (c, p, t) in enumerate(drawn))
    raw = draw(st.lists(st.tuples(POINT, st.sampled_from([0, 0, 1, 3])), max_size=8))
    options = [Option(Step(k, k, (1,), (), ()), (float(c), float(c)), p, t, f) for k, ((c, p, t), f) in enumerate(raw)]
    return plans, options


@seed(13)
@settings(max_examples=300, deadline=None)
@given(fronts_and_options(), st.sampled_from([SEED, CYCLES]))
def test_lean_extensions_keep_the_front(case, metric) -> None:  # type: ignore[no-untyped-def]
    """The extensions ``extend_all`` leaves out with ``lean`` change no point of the front, nor
    which of equal points is kept (plans cheapest first, as the search's fronts are)."""
    plans, options = case
    assert pareto_front(extend_all(plans, options, metric, lean=True)) == \
        pareto_front(extend_all(plans, options, metric))


@seed(17)
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30).map(float), st.integers(0, 30)), min_size=1, max_size=40),
       st.integers(2, 12))
def test_front_indices_are_what_prune_keeps(points, cap) -> None:  # type: ignore[no-untyped-def]
    """A cascade's step options on a 2-D front (bytes as both peak and tail) are found without
    ``prune``, but are the ones it keeps."""
    pruned = prune([Point(c, b, b, k) for k, (c, b) in enumerate(points)], limit_bytes=max(b for _, b in points),
                   cap=cap)
    assert sorted(front_indices(points, cap)) == sorted(p.payload for p in pruned)
