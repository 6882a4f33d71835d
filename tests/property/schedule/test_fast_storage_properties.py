"""Fast-storage placement never exceeds the cache budget (Dedicated_Sram), for random inputs."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npuplan.hw import build_architecture
from npuplan.options import PlanOptions
from npuplan.schedule import plan_schedule
from npuplan.schedule.moves.placement_groups import Candidate, choose

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit" / "schedule"))
from chains import conv_chain  # noqa: E402

SETTINGS = settings(max_examples=25, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
layers = st.lists(st.tuples(st.sampled_from([8, 16, 32]), st.sampled_from([1, 2])), min_size=1, max_size=5)
candidate = st.builds(
    lambda s, n, size, score, i: Candidate(f"f{i}", s, s + n, size, score),
    st.integers(0, 20), st.integers(0, 8), st.integers(1, 5000), st.integers(-10, 1000), st.integers(0, 10**6),
)


@SETTINGS
@given(cands=st.lists(candidate, max_size=45, unique_by=lambda c: c.name),
       base=st.integers(0, 3000), limit=st.integers(0, 12_000))
def test_choice_never_exceeds_the_limit(cands, base, limit) -> None:  # type: ignore[no-untyped-def]
    usage = [base] * 30
    picked = choose(cands, usage, limit)
    total = list(usage)
    for c in cands:
        if c.name in picked:
            for t in range(c.start, c.end + 1):
                total[t] += c.size_bytes
    assert max(total) <= max(limit, base)


@SETTINGS
@given(layers=layers, size=st.sampled_from([16, 24, 32]), budget=st.integers(0, 80_000))
def test_dedicated_sram_plan_within_cache(layers, size, budget) -> None:  # type: ignore[no-untyped-def]
    options = PlanOptions(accelerator_config="ethos-u65-256", system_config="Ethos_U65_High_End",
                          memory_mode="Dedicated_Sram_384KB", arena_cache_size_bytes=budget)
    schedule = plan_schedule(conv_chain(layers, h=size, w=size), build_architecture(options), options)
    assert schedule.sram_peak_bytes <= budget
    assert all(o.sram_usage_bytes <= budget for o in schedule.ops)


@SETTINGS
@given(layers=layers, size=st.sampled_from([16, 24, 32]), channels=st.sampled_from([3, 8]),
       budget=st.integers(0, 80_000))
def test_staging_fits_the_cache_validates_and_is_never_slower(layers, size, channels, budget) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from npuplan.commands import build_command_stream, plan_addresses, validate

    options = PlanOptions(accelerator_config="ethos-u65-256", system_config="Ethos_U65_High_End",
                          memory_mode="Dedicated_Sram_384KB", arena_cache_size_bytes=budget)
    graph, arch = conv_chain(layers, h=size, w=size, c=channels), build_architecture(options)
    staged = plan_schedule(graph, arch, options)
    plain = plan_schedule(graph, arch, replace(options, fm_staging=False))
    assert staged.sram_peak_bytes <= budget
    assert sum(o.npu_cycles for o in staged.ops) <= sum(o.npu_cycles for o in plain.ops) * 1.0001
    addresses = plan_addresses(staged, graph, arch)
    assert validate(build_command_stream(staged, graph, arch, addresses), graph, arch, addresses,
                    sram_limit_bytes=budget) == []
