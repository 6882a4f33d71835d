"""Size keeps feature maps of unaligned depth packed (NHWC); Performance only to fit a budget."""

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


def test_performance_packs_only_when_nothing_fits_otherwise() -> None:
    graph = conv_chain([(4, 1), (4, 1), (4, 1)], h=64, w=64, c=4)
    bricks, packed = _floor_bytes(graph, packed=False), _floor_bytes(graph, packed=True)
    assert packed < bricks
    roomy = make_options(arena_cache_size=1 << 20)
    assert not any("kept NHWC" in n for n in plan_schedule(graph, build_architecture(roomy), roomy).notes)
    tight = make_options(arena_cache_size=packed)
    schedule = plan_schedule(graph, build_architecture(tight), tight)
    assert schedule.sram_peak_bytes <= packed and any("kept NHWC to fit" in n for n in schedule.notes)
