"""Size keeps feature maps of unaligned depth packed (NHWC); Performance where that plans faster."""

from __future__ import annotations

from npuplan.api import make_options
from npuplan.hw import build_architecture
from npuplan.schedule import plan_schedule
from npuplan.schedule.model.network import build_network

from .chains import conv_chain


def test_size_stores_unaligned_depths_packed() -> None:
    graph = conv_chain([(4, 1), (16, 1), (4, 1)], h=32, w=32, c=8)
    bricks, packed = build_network(graph), build_network(graph, pack_unaligned=True)
    assert bricks.fms["t0"].format == "NHCWB16" and bricks.fms["t0"].size_bytes == 32 * 32 * 16
    assert packed.fms["t0"].format == "NHWC" and packed.fms["t0"].size_bytes == 32 * 32 * 4
    assert packed.fms["t1"].format == "NHCWB16"  # a depth of 16 loses nothing to bricks


def _floor_bytes(graph, *, packed: bool) -> int:
    from npuplan.errors import InfeasiblePlan
    from npuplan.schedule.pricing.cost_adapter import default_oracle
    from npuplan.schedule.model.limits import Limits
    from npuplan.schedule.search.planner import _plan

    tiny = make_options(arena_cache_size=16)
    arch = build_architecture(tiny)
    try:
        _plan(build_network(graph, pack_unaligned=packed), arch, tiny, default_oracle(arch), Limits.of(arch))
    except InfeasiblePlan as error:
        return error.needed_bytes
    raise AssertionError("16 bytes cannot hold this network")


def test_performance_packs_where_the_budget_binds_and_packed_plans_faster() -> None:
    graph = conv_chain([(4, 1), (4, 1), (4, 1)], h=64, w=64, c=4)
    bricks, packed = _floor_bytes(graph, packed=False), _floor_bytes(graph, packed=True)
    assert packed < bricks
    roomy = make_options(arena_cache_size=1 << 20)
    assert not any("kept NHWC" in n for n in plan_schedule(graph, build_architecture(roomy), roomy).notes)
    tight = make_options(arena_cache_size=packed)
    schedule = plan_schedule(graph, build_architecture(tight), tight)
    assert schedule.sram_peak_bytes <= packed and any("kept NHWC" in n for n in schedule.notes)


def test_performance_takes_the_packed_layout_where_bricks_fit_only_slower() -> None:
    """Bricks' max schedule fits 31454 bytes, but not with every weight buffer; packed, it does,
    and plans faster: without planning both, 31454 B planned slower than 30348 B (packed then)."""
    from bench.schedule_graphs import network

    graph = network([("conv", 24, 3, 1), ("conv", 48, 1, 1), ("conv", 8, 3, 1), ("conv", 48, 3, 1)], 24, 16)
    plans = [plan_schedule(graph, build_architecture(o), o)
             for o in (make_options(arena_cache_size=30348), make_options(arena_cache_size=31454))]
    assert all("feature maps of unaligned depth kept NHWC" in p.notes for p in plans)
    assert _cycles(plans[1]) <= _cycles(plans[0])


def _cycles(schedule) -> int:  # type: ignore[no-untyped-def]
    return sum(int(o.cost.total_cycles) for o in schedule.ops)


def test_performance_plans_both_layouts_where_their_roomiest_plans_tie() -> None:
    """op_sub on U65-256 Dedicated_Sram: both layouts' roomiest plans take 7837 cycles (the maps they
    store differently stay off-chip there), but within 384 KiB the packed one plans faster (3998 vs
    4239 cycles, the cache holding half the bytes): the layout of fewer feature-map bytes goes first, and the faster is kept."""
    from pathlib import Path

    import npuplan.schedule.search.planner as planner
    from npuplan.api import plan
    from npuplan.schedule.pricing.cost_adapter import default_oracle
    from npuplan.schedule.model.limits import Limits

    options = dict(accelerator_config="ethos-u65-256", system_config="Ethos_U65_High_End",
                   memory_mode="Dedicated_Sram", arena_cache_size=393216)
    seen = []
    fastest = planner._fastest_layout

    def spy(lowered, arch, plan_options, oracle, limits):  # type: ignore[no-untyped-def]
        seen.append((lowered, arch, plan_options))
        return fastest(lowered, arch, plan_options, oracle, limits)

    planner._fastest_layout = spy
    try:
        result = plan(Path(__file__).parents[2] / "data" / "layout" / "op_sub.tflite", **options)
    finally:
        planner._fastest_layout = fastest
    lowered, arch, plan_options = seen[-1]
    alone = [planner._plan(build_network(lowered, pack_unaligned=p), arch, plan_options, default_oracle(arch),
                           Limits.of(arch)).total_npu_cycles for p in (False, True)]
    assert alone[0] != alone[1]
    assert result.schedule.total_npu_cycles == min(alone)
