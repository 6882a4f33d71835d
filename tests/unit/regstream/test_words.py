"""Command words and driver payloads decoded from hand-built streams (no Vela needed)."""

from __future__ import annotations

import struct

import pytest

from npuplan.errors import ValidationError
from npuplan.regstream.events import DmaEvent, NpuEvent, WaitEvent, events, stream_events
from npuplan.regstream.footprint import intervals
from npuplan.regstream.words import CODE_OF, decode_words, payload_words


def cmd0(name: str, param: int = 0) -> list[int]:
    return [CODE_OF[name] | (param << 16)]


def cmd1(name: str, value: int) -> list[int]:
    return [CODE_OF[name] | ((value >> 32) << 16), value & 0xFFFFFFFF]


def test_cmd0_and_cmd1_words_decode_with_their_values():
    words = cmd0("OFM_HEIGHT_M1", 7) + cmd1("OFM_BASE0", 0x12345) + cmd0("NPU_OP_STOP", 0xFFFF)
    decoded = decode_words(words)
    assert [(w.name, w.value) for w in decoded] == [("OFM_HEIGHT_M1", 7), ("OFM_BASE0", 0x12345),
                                                    ("NPU_OP_STOP", 0xFFFF)]
    assert [w.offset for w in decoded] == [0, 1, 3]


def test_unknown_opcode_is_a_validation_error():
    with pytest.raises(ValidationError, match="unknown cmd0 opcode"):
        decode_words([0x3FF])


def _payload(stream: list[int]) -> bytes:
    words = [int.from_bytes(b"COP1", "little"), 0x1 | (0x10 << 16), 1 << 28, 0, 0x5, 0x2 | (len(stream) << 16)]
    return struct.pack(f"<{len(words) + len(stream)}I", *words, *stream)


def test_payload_header_is_skipped_and_product_read():
    stream = cmd0("NPU_OP_DMA_WAIT", 0)
    payload = payload_words(_payload(stream))
    assert payload.words == stream and payload.product == 1


def test_registers_persist_between_operations_and_a_kick_snapshots_them():
    setup = (cmd0("OFM_HEIGHT_M1", 3) + cmd0("OFM_WIDTH_M1", 1) + cmd0("OFM_DEPTH_M1", 15) + cmd0("OFM_REGION", 1)
             + cmd1("OFM_BASE0", 256) + cmd1("OFM_STRIDE_X", 16) + cmd1("OFM_STRIDE_Y", 32) + cmd1("OFM_STRIDE_C", 1)
             + cmd0("OFM_HEIGHT0_M1", 3) + cmd0("IFM_REGION", 1) + cmd0("IFM_HEIGHT0_M1", 3)
             + cmd0("IFM_DEPTH_M1", 15) + cmd1("IFM_STRIDE_X", 16) + cmd1("IFM_STRIDE_Y", 32))
    words = (setup + cmd0("NPU_OP_POOL") + cmd1("OFM_BASE0", 512) + cmd0("NPU_OP_POOL")
             + cmd0("DMA0_SRC_REGION", 0) + cmd0("DMA0_DST_REGION", 0x103) + cmd1("DMA0_LEN", 2048)
             + cmd0("NPU_OP_DMA_START") + cmd0("NPU_OP_DMA_WAIT", 0))
    found = events(decode_words(words))
    assert [type(e) for e in found] == [NpuEvent, NpuEvent, DmaEvent, WaitEvent]
    first, second = found[0], found[1]
    assert isinstance(first, NpuEvent) and isinstance(second, NpuEvent)
    assert (first.ofm.height, first.ofm.width, first.ofm.depth) == (4, 2, 16)
    assert second.ofm.bases[0] == 512 and second.ofm.height == 4  # the rest carried over
    assert isinstance(found[2], DmaEvent) and found[2].dst.region == -1  # internal memory (bit 8)
    starts, ends = intervals(first.ofm)
    assert list(starts) == [256, 288, 320, 352] and list(ends - starts) == [32] * 4


def test_events_straight_from_the_words_match_the_decoded_words():
    setup = (cmd0("OFM_HEIGHT_M1", 3) + cmd0("OFM_DEPTH_M1", 15) + cmd1("OFM_BASE0", (1 << 33) + 256)
             + cmd1("OFM_STRIDE_Y", 32) + cmd0("IFM_DEPTH_M1", 15) + cmd1("IFM_STRIDE_Y", 32))
    words = (setup + cmd0("NPU_OP_POOL") + cmd0("NPU_OP_PMU_MASK") + cmd1("DMA0_LEN", 64) + cmd0("NPU_OP_DMA_START")
             + cmd0("NPU_OP_KERNEL_WAIT", 1) + cmd0("NPU_OP_STOP") + cmd0("NPU_OP_POOL"))
    found = stream_events(words)
    assert found == events(decode_words(words))
    assert [type(e) for e in found] == [NpuEvent, DmaEvent, WaitEvent]  # nothing after the stop
    assert isinstance(found[0], NpuEvent) and found[0].ofm.bases[0] == (1 << 33) + 256


def test_an_unknown_opcode_after_the_stop_is_still_an_error():
    with pytest.raises(ValidationError, match="command word 2: unknown cmd0 opcode"):
        stream_events(cmd0("NPU_OP_POOL") + cmd0("NPU_OP_STOP") + [0x3FF])


def test_a_stream_of_only_a_stop_is_empty_not_invalid():
    """Vela 5.2.0's legacy core writes ethos-u operators whose stream is the one word NPU_OP_STOP
    (zoo8's WaveNet, between two CPU operators); a driver runs them as nothing, so must we."""
    assert stream_events(cmd0("NPU_OP_STOP", 0xFFFF)) == []


def test_register_writes_without_an_operation_or_a_stop_are_refused():
    with pytest.raises(ValidationError, match="runs no operation"):
        stream_events(cmd0("OFM_HEIGHT_M1", 3))
