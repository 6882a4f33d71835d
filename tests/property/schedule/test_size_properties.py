"""Size against Performance on random networks (chains, residual blocks, concats), both searches."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npuplan.hw import build_architecture
from npuplan.options import Optimise, PlanOptions, Search
from npuplan.schedule import plan_schedule

from bench.schedule_graphs import networks

TARGETS = {
    "Shared_Sram": dict(accelerator_config="ethos-u55-64", system_config="Ethos_U55_Deep_Embedded"),
    "Dedicated_Sram_384KB": dict(accelerator_config="ethos-u65-256", system_config="Ethos_U65_High_End"),
}


@settings(max_examples=30, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(graph=networks, memory_mode=st.sampled_from(sorted(TARGETS)), search=st.sampled_from([Search.AUTO, Search.CASCADE]))
def test_size_peak_is_never_above_performance_peak(graph, memory_mode, search) -> None:  # type: ignore[no-untyped-def]
    peaks = {}
    for optimise in (Optimise.PERFORMANCE, Optimise.SIZE):
        options = PlanOptions(**TARGETS[memory_mode], memory_mode=memory_mode, optimise=optimise,  # type: ignore[arg-type]
                              search=search)
        peaks[optimise] = plan_schedule(graph, build_architecture(options), options).sram_peak_bytes
    assert peaks[Optimise.SIZE] <= peaks[Optimise.PERFORMANCE]
