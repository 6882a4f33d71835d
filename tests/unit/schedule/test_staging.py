"""Dedicated_Sram: a network input read with short DRAM bursts is DMA'd whole into the cache first."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from npuplan.commands import DmaCommand, ViolationKind, build_command_stream, plan_addresses, validate
from npuplan.commands.types import DmaPurpose
from npuplan.hw import build_architecture
from npuplan.ir.lowered import Kernel, LoweredGraph
from npuplan.ir.shape import Shape4D
from npuplan.options import PlanOptions
from npuplan.schedule import plan_schedule

from .chains import conv, fm

U65 = PlanOptions(accelerator_config="ethos-u65-256", system_config="Ethos_U65_High_End",
                  memory_mode="Dedicated_Sram_384KB")
SHARED = PlanOptions(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                     memory_mode="Shared_Sram")


def _rgb_stem() -> LoweredGraph:
    x = fm("image", 96, 96, 3)
    first = conv("stem", x, fm("stem", 48, 48, 16), k=3, stride=2, seed=1)
    second = conv("next", first.ofm, fm("next", 48, 48, 16), k=1, seed=2)
    return LoweredGraph("rgb", (first, second), (x,), (second.ofm,))


def _cycles(schedule) -> float:  # type: ignore[no-untyped-def]
    return sum(float(o.cost.total_cycles) for o in schedule.ops)


def test_a_3_channel_input_is_staged_and_the_plan_is_faster() -> None:
    arch = build_architecture(U65)
    staged = plan_schedule(_rgb_stem(), arch, U65)
    plain = plan_schedule(_rgb_stem(), arch, replace(U65, fm_staging=False))
    assert staged.staged_fms == ("image",) and plain.staged_fms == ()
    assert _cycles(staged) < _cycles(plain)
    assert staged.op("stem").sram_usage_bytes >= 96 * 96 * 3  # the copy is counted in the cache
    assert staged.sram_peak_bytes <= arch.arena_cache_size_bytes


def test_shared_sram_never_stages() -> None:
    assert plan_schedule(_rgb_stem(), build_architecture(SHARED), SHARED).staged_fms == ()


def test_the_staged_copy_validates_and_a_dropped_copy_is_caught() -> None:
    graph, arch = _rgb_stem(), build_architecture(U65)
    schedule = plan_schedule(graph, arch, U65)
    addresses = plan_addresses(schedule, graph, arch)
    commands = build_command_stream(schedule, graph, arch, addresses)
    copies = [c for c in commands if isinstance(c, DmaCommand) and c.purpose is DmaPurpose.FEATURE_MAP]
    assert [c.dst.name for c in copies] == ["image#staged"]
    assert validate(commands, graph, arch, addresses) == []
    dropped = tuple(c for c in commands if c not in copies)
    found = validate(dropped, graph, arch, addresses)
    assert found and found[0].kind is ViolationKind.MISSING_DATA and found[0].tensor == "image"


def _two_readers() -> LoweredGraph:
    """A TCN's input read by its first convolution and by the residual branch's 1x1 convolution."""
    x = fm("signal", 1, 800, 3)
    first = conv("first", x, fm("first", 1, 800, 16), k=1, seed=3)
    residual = conv("residual", x, fm("residual", 1, 800, 16), k=1, seed=4)
    return LoweredGraph("tcn", (first, residual), (x,), (first.ofm, residual.ofm))


def _staged_once(graph: LoweredGraph, name: str):  # type: ignore[no-untyped-def]
    """``graph`` planned on U65 with staging: ``name`` is staged, the plan faster than without, one
    DMA copies it (before its first reader) and the stream validates; the schedule."""
    arch = build_architecture(U65)
    staged = plan_schedule(graph, arch, U65)
    plain = plan_schedule(graph, arch, replace(U65, fm_staging=False))
    assert staged.staged_fms == (name,)
    assert _cycles(staged) < _cycles(plain)
    addresses = plan_addresses(staged, graph, arch)
    commands = build_command_stream(staged, graph, arch, addresses)
    copies = [c for c in commands if isinstance(c, DmaCommand) and c.purpose is DmaPurpose.FEATURE_MAP]
    assert [c.dst.name for c in copies] == [f"{name}#staged"]
    assert validate(commands, graph, arch, addresses) == []
    return staged


def test_an_input_of_two_readers_is_copied_once_and_lives_until_its_last_reader() -> None:
    staged = _staged_once(_two_readers(), "signal")
    assert staged.op("residual").sram_usage_bytes >= 800 * 3  # the copy still held for the second reader


def _rows_of_patches() -> LoweredGraph:
    """A patchify stem's convolutions (``lowering.patch_rows``): each reads its rows of the
    network input where they lie (a box at a row offset), through a view of 4-column patches."""
    x = fm("image", 32, 32, 3)
    frame = Shape4D(1, 32, 8, 12)
    ops = []
    for k in range(8):
        op = conv(f"row{k}", x, fm(f"row{k}", 1, 8, 16), k=1, seed=k)
        ops.append(replace(op, ifm_shape=Shape4D(1, 4, 8, 12), ifm_read_offset=Shape4D(0, 4 * k, 0, 0),
                           ifm_frame=frame, weights=np.ones((16, 4, 1, 12), np.int8), kernel=Kernel(4, 1)))
    return LoweredGraph("patches", tuple(ops), (x,), tuple(o.ofm for o in ops))


def test_an_input_read_in_boxes_at_offsets_is_staged_once_for_all_its_readers() -> None:
    staged = _staged_once(_rows_of_patches(), "image")
    assert staged.op("row7").sram_usage_bytes >= 32 * 32 * 3  # held until the last row's convolution
