"""Comparing two register command streams command by command."""

from __future__ import annotations

from npuplan.regstream.compare import compare
from npuplan.regstream.words import CODE_OF, PAYLOAD32


def _set0(name: str, value: int) -> list[int]:
    return [CODE_OF[name] | (value << 16)]


def _set1(name: str, value: int) -> list[int]:
    assert CODE_OF[name] & PAYLOAD32
    return [CODE_OF[name], value]


def _stream(*, wait: int = 0, base: int = 0x100, zero_point: int = 0) -> list[int]:
    return (_set1("DMA0_SRC", 0x40) + _set0("NPU_OP_DMA_START", 0) + _set1("IFM_BASE0", base)
            + _set0("IFM_ZERO_POINT", zero_point) + _set0("NPU_OP_DMA_WAIT", wait) + _set0("NPU_OP_CONV", 0)
            + _set0("NPU_OP_STOP", 0xFFFF))


def test_a_stream_matches_itself():
    c = compare(_stream(), _stream())
    assert c.ok and c.identical and (c.commands, c.matching, c.operations, c.matching_operations) == (4, 4, 2, 2)


def test_a_different_register_wait_or_length_is_a_mismatch():
    assert "IFM_BASE0" in (compare(_stream(), _stream(base=0x200)).first_mismatch or "")
    assert "NPU_OP_DMA_WAIT(0)" in (compare(_stream(), _stream(wait=1)).first_mismatch or "")
    shorter = compare(_stream(), _stream()[:-1])
    assert not shorter.ok and shorter.operations == 2


def test_ignored_registers_are_left_out():
    c = compare(_stream(zero_point=5), _stream(), ignore=("IFM_ZERO_POINT",))
    assert c.ok and not c.identical and c.identical_outside_ignored
    assert not compare(_stream(zero_point=5), _stream()).ok
