"""Invariants of the scheduler on random networks (chains, residual blocks, concats) and budgets.

The budget is a cap: every plan's allocated peak, every op's usage and the command stream's own
allocation stay within it and the stream validates; otherwise ``InfeasiblePlan`` names a figure
above the budget at which planning succeeds.
"""

from __future__ import annotations

import sys
from pathlib import Path

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from npuplan.api import fit_allocation
from npuplan.commands import build_command_stream, validate
from npuplan.errors import InfeasiblePlan
from npuplan.hw import build_architecture
from npuplan.hw.memory import MemArea
from npuplan.options import Optimise, PlanOptions, Search
from npuplan.schedule import plan_schedule

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit" / "schedule"))
from chains import conv_chain  # noqa: E402

from bench.schedule_graphs import network, networks  # noqa: E402

layers = st.lists(st.tuples(st.sampled_from([8, 16, 32]), st.sampled_from([1, 2])), min_size=1, max_size=4)
SETTINGS = settings(max_examples=15, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))


def _options(budget: int | None, optimise: Optimise = Optimise.PERFORMANCE) -> PlanOptions:
    return PlanOptions(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                       memory_mode="Shared_Sram", arena_cache_size_bytes=budget, optimise=optimise)


def _cycles(schedule) -> float:  # type: ignore[no-untyped-def]
    return sum(float(o.cost.total_cycles) for o in schedule.ops)


@SETTINGS
@given(layers=layers, size=st.sampled_from([16, 24, 32]), budget=st.integers(4_000, 120_000))
def test_no_plan_exceeds_the_budget(layers, size, budget) -> None:  # type: ignore[no-untyped-def]
    graph = conv_chain(layers, h=size, w=size)
    options = _options(budget)
    try:
        schedule = plan_schedule(graph, build_architecture(options), options)
    except InfeasiblePlan as err:
        assert err.needed_bytes > budget
        return
    assert schedule.sram_peak_bytes <= budget
    assert all(o.sram_usage_bytes <= budget for o in schedule.ops)


def _plan_or_error(graph, budget: int, optimise: Optimise = Optimise.PERFORMANCE):  # type: ignore[no-untyped-def]
    """Schedule and allocate as ``npuplan.plan`` does: ``(arch, (schedule, allocation))`` or the error."""
    options = _options(budget, optimise)
    arch = build_architecture(options)
    try:
        return arch, fit_allocation(plan_schedule(graph, arch, options), graph, arch, options)
    except InfeasiblePlan as err:
        return arch, err


def _assert_within(graph, arch, planned, budget: int) -> None:  # type: ignore[no-untyped-def]
    schedule, allocation = planned
    assert schedule.sram_peak_bytes <= budget and allocation.peak_bytes(MemArea.SRAM) <= budget
    assert all(o.sram_usage_bytes <= budget for o in schedule.ops)
    commands = build_command_stream(schedule, graph, arch, allocation.addresses)
    assert validate(commands, graph, arch, allocation.addresses, sram_limit_bytes=budget) == []


@st.composite
def networks_and_budgets(draw, low: float = -0.2, high: float = 1.1):  # type: ignore[no-untyped-def]
    """A random network and a budget around the range from its floor (the error's figure) to its
    max schedule's peak: ``floor + f * (max - floor)`` with ``low <= f <= high``."""
    graph = draw(networks)
    _, roomy = _plan_or_error(graph, 1 << 24)
    _, tight = _plan_or_error(graph, 16)
    floor = tight.needed_bytes if isinstance(tight, InfeasiblePlan) else 16
    return graph, max(16, int(floor + (roomy[0].sram_peak_bytes - floor) * draw(st.floats(low, high))))


NET_SETTINGS = settings(max_examples=40, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))


@NET_SETTINGS
@given(case=networks_and_budgets(), optimise=st.sampled_from([Optimise.PERFORMANCE, Optimise.SIZE]))
def test_random_networks_never_exceed_the_budget_and_validate(case, optimise) -> None:  # type: ignore[no-untyped-def]
    graph, budget = case
    arch, result = _plan_or_error(graph, budget, optimise)
    if isinstance(result, InfeasiblePlan):
        assert result.needed_bytes > budget and result.budget_bytes == budget
        assert result.op and result.why and str(result.needed_bytes) in result.hint
        return
    _assert_within(graph, arch, result, budget)


@NET_SETTINGS
@given(case=networks_and_budgets(-0.5, 0.0))
def test_the_error_names_a_budget_that_plans(case) -> None:  # type: ignore[no-untyped-def]
    graph, budget = case
    _, result = _plan_or_error(graph, budget)
    if not isinstance(result, InfeasiblePlan):
        return
    arch, enough = _plan_or_error(graph, result.needed_bytes)
    assert not isinstance(enough, InfeasiblePlan), enough
    _assert_within(graph, arch, enough, result.needed_bytes)
    _, short = _plan_or_error(graph, result.needed_bytes - 16)
    assert isinstance(short, InfeasiblePlan)


@st.composite
def networks_and_budget_pairs(draw):  # type: ignore[no-untyped-def]
    """A random network and two budgets ``small <= large`` between its floor and its max peak."""
    graph, small = draw(networks_and_budgets(0.0, 1.1))
    return graph, small, small + int(small * draw(st.floats(0.0, 0.6))) + 16


STRICT_SETTINGS = settings(max_examples=60, derandomize=True, deadline=None,
                           suppress_health_check=list(HealthCheck))


@STRICT_SETTINGS
@given(case=networks_and_budget_pairs(), search=st.sampled_from([Search.CASCADE, Search.AUTO]))
@example(case=(network([("conv", 24, 1, 1), ("conv", 24, 1, 2)], h=24, w=2), 1300, 1814), search=Search.CASCADE)
# bricks fit 2328 B only as two cascades (6108 cycles); packed maps plan 5088 within 1968 B
@example(case=(network([("residual", 8, 1, 1), ("residual", 16, 1, 1)], 22, 4), 1968, 2328), search=Search.AUTO)
# the floor schedule in bricks (4467 B, 260384 cycles) against packed (4017 B, 254798)
@example(case=(network([("conv", 8, 3, 1), ("residual", 8, 3, 1), ("concat", 16, 16, 1), ("concat", 8, 8, 1),
                        ("concat", 8, 8, 1), ("conv", 24, 1, 1), ("conv", 24, 3, 2)], 21, 6), 4017, 4467),
         search=Search.AUTO)
# bricks' max schedule fits 31454 B but not with every weight buffer; packed it does (30348 B)
@example(case=(network([("conv", 24, 3, 1), ("conv", 48, 1, 1), ("conv", 8, 3, 1), ("conv", 48, 3, 1)], 24, 16),
               30348, 31454), search=Search.AUTO)
# packed, the floor plan (2880 B, 35413 cycles) beat the one search candidate within 2928 B (43917)
@example(case=(network([("conv", 24, 3, 1), ("residual", 8, 3, 1), ("concat", 8, 16, 1), ("conv", 24, 3, 1)], 10, 6),
               2880, 2928), search=Search.AUTO)
def test_larger_budget_is_never_slower(case, search) -> None:  # type: ignore[no-untyped-def]
    """More SRAM never plans slower, strictly: Performance takes the fastest candidate (exact ties
    by smaller peak) and proposes the same kinds of candidate at every budget (both layouts of
    unaligned maps where the budget binds, cascades where faster, the floor plan where whole maps
    do not fit)."""
    graph, small, large = case
    tight_options, roomy_options = replace(_options(small), search=search), replace(_options(large), search=search)
    try:
        tight = plan_schedule(graph, build_architecture(tight_options), tight_options)
    except InfeasiblePlan:
        return
    roomy = plan_schedule(graph, build_architecture(roomy_options), roomy_options)
    assert _cycles(roomy) <= _cycles(tight)


def test_larger_budget_where_whole_feature_maps_first_fit() -> None:
    """Once a violation of the cascade search alone: 4808 cycles at 9580 B (cascaded, the second
    op's weights held whole, their copy charged), 10784 at 9701 B, where the max schedule fits and
    was taken. Cascades where faster are now proposed at every budget."""
    graph = network([("conv", 24, 1, 1), ("conv", 48, 1, 1)], h=11, w=11)
    small, large = replace(_options(9580), search=Search.CASCADE), replace(_options(9701), search=Search.CASCADE)
    tight = plan_schedule(graph, build_architecture(small), small)
    roomy = plan_schedule(graph, build_architecture(large), large)
    assert _cycles(roomy) <= _cycles(tight)


def test_default_search_where_whole_feature_maps_first_fit() -> None:
    graph = network([("conv", 24, 1, 1), ("conv", 48, 1, 1)], h=11, w=11)
    tight, roomy = (plan_schedule(graph, build_architecture(_options(b)), _options(b)) for b in (9580, 9701))
    assert _cycles(roomy) <= _cycles(tight)


@SETTINGS
@given(layers=layers, size=st.sampled_from([16, 32]))
def test_size_peak_not_above_performance_peak(layers, size) -> None:  # type: ignore[no-untyped-def]
    graph = conv_chain(layers, h=size, w=size)
    perf, small = _options(None), _options(None, Optimise.SIZE)
    p = plan_schedule(graph, build_architecture(perf), perf)
    s = plan_schedule(graph, build_architecture(small), small)
    assert s.sram_peak_bytes <= p.sram_peak_bytes


@SETTINGS
@given(layers=layers, size=st.sampled_from([16, 24, 32]))
def test_size_plans_replay_cleanly(layers, size) -> None:  # type: ignore[no-untyped-def]
    """Size cascades (one-row producers, rolling buffers, buffered weights) pass the command replay."""
    from npuplan.commands import build_command_stream, plan_addresses, validate

    graph = conv_chain(layers, h=size, w=size)
    options = _options(None, Optimise.SIZE)
    arch = build_architecture(options)
    schedule = plan_schedule(graph, arch, options)
    addresses = plan_addresses(schedule, graph, arch)
    commands = build_command_stream(schedule, graph, arch, addresses)
    assert validate(commands, graph, arch, addresses) == []


@SETTINGS
@given(h=st.integers(4, 24), w=st.integers(2, 12), c=st.sampled_from([8, 16, 24]),
       k_left=st.sampled_from([1, 3, 5]), k_right=st.sampled_from([1, 3]))
def test_size_on_residual_diamonds_replays_and_stays_below_performance(h, w, c, k_left, k_right) -> None:  # type: ignore[no-untyped-def]
    """Branches and an in-place ADD: the Size plan replays cleanly and peaks no higher than Performance."""
    from npuplan.commands import build_command_stream, plan_addresses, validate
    from bench.command_graphs import diamond

    graph = diamond(h=h, w=w, c=c, k_left=k_left, k_right=k_right)
    size, perf = _options(None, Optimise.SIZE), _options(None)
    arch = build_architecture(size)
    schedule = plan_schedule(graph, arch, size)
    addresses = plan_addresses(schedule, graph, arch)
    assert validate(build_command_stream(schedule, graph, arch, addresses), graph, arch, addresses) == []
    assert schedule.sram_peak_bytes <= plan_schedule(graph, build_architecture(perf), perf).sram_peak_bytes
