"""SRAM over the schedule from buffer layouts and lifetimes: shared addresses counted once,
constants live throughout, each step at its op's peak command."""

from __future__ import annotations

from npuplan.commands.types import Address, BufferKind
from npuplan.hw.memory import MemArea
from npuplan.report.sram_timeline import sram_steps


def _layout(offset: int, size: int, kind: BufferKind = BufferKind.FEATURE_MAP, area: MemArea = MemArea.SRAM):
    return (Address(area, offset, size), kind, 0, None)


def test_buffers_sharing_addresses_while_live_count_once() -> None:
    layouts = {
        "in": _layout(0, 100),  # 112 bytes with the 16-byte grain
        "out": _layout(0, 100),  # written over "in" (an elementwise op): the same bytes
        "other": _layout(128, 32),
        "flash": _layout(0, 4096, BufferKind.CONSTANT, MemArea.OFF_CHIP_FLASH),
        "table": _layout(512, 64, BufferKind.CONSTANT),
    }
    lifetimes = {"in": (0, 1), "out": (1, 3), "other": (2, 2), "flash": (1, 1), "table": (3, 3)}
    steps = sram_steps(layouts, lifetimes, [0, 0, 1, 2], 4, area="Sram")
    assert [s.total_bytes for s in steps] == [112 + 64, 112 + 32 + 64, 112 + 64, 0]
    assert [s.command for s in steps] == [0, 2, 3, -1]
    shared = steps[0].live[0]
    assert shared.name == "in = out" and shared.kind == "feature_map" and shared.size_bytes == 112
    assert steps[1].bytes_of("constant") == 64 and steps[1].bytes_of("feature_map") == 144
    assert all("flash" not in b.name for s in steps for b in s.live)


def test_buffers_at_one_address_at_different_times_are_two_buffers() -> None:
    layouts = {"a": _layout(0, 64), "b": _layout(0, 64), "c": _layout(64, 16, BufferKind.WEIGHT_BUFFER)}
    lifetimes = {"a": (0, 0), "b": (1, 2), "c": (0, 2)}
    steps = sram_steps(layouts, lifetimes, [0, 1, 1], 2, area="Sram")
    assert [[b.name for b in s.live] for s in steps] == [["a", "c"], ["b", "c"]]
    assert [s.bytes_of("weight_buffer") for s in steps] == [16, 16]
