"""Invariants of the scheduler on random conv chains and budgets."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npuplan.errors import InfeasiblePlan
from npuplan.hw import build_architecture
from npuplan.options import Optimise, PlanOptions
from npuplan.schedule import plan_schedule

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit" / "schedule"))
from chains import conv_chain  # noqa: E402

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


@SETTINGS
@given(layers=layers, size=st.sampled_from([16, 32]), budget=st.integers(20_000, 80_000),
       extra=st.integers(1, 100_000))
def test_larger_budget_is_never_slower(layers, size, budget, extra) -> None:  # type: ignore[no-untyped-def]
    graph = conv_chain(layers, h=size, w=size)
    small, large = _options(budget), _options(budget + extra)
    try:
        tight = plan_schedule(graph, build_architecture(small), small)
    except InfeasiblePlan:
        return
    roomy = plan_schedule(graph, build_architecture(large), large)
    assert _cycles(roomy) <= _cycles(tight) * 1.0001


@SETTINGS
@given(layers=layers, size=st.sampled_from([16, 32]))
def test_size_peak_not_above_performance_peak(layers, size) -> None:  # type: ignore[no-untyped-def]
    graph = conv_chain(layers, h=size, w=size)
    perf, small = _options(None), _options(None, Optimise.SIZE)
    p = plan_schedule(graph, build_architecture(perf), perf)
    s = plan_schedule(graph, build_architecture(small), small)
    assert s.sram_peak_bytes <= p.sram_peak_bytes
