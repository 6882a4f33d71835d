"""The machine layer on tiny command streams built in code: DMAs, feature-map layouts, tiles,
precisions, broadcast, the lookup-table memory, weight streams per core, and the errors.

The datapath is replaced by a recorder (what the machine hands it, and an OFM chosen by the test),
so these tests see the addressing alone."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import npuplan.sim.datapath as datapath
from npuplan.emit.native.payload import create_driver_payload
from npuplan.codec.encode import encode_biases, encode_weights
from npuplan.errors import ValidationError
from npuplan.hw.accelerator import ACCELERATORS
from npuplan.regstream.words import encode_commands
from npuplan.sim import execute_stream
from npuplan.sim.machine import lut_base

U55 = ACCELERATORS["ethos-u55-128"]
U65_512 = ACCELERATORS["ethos-u65-512"]
BRICK, SIGNED = 1 << 6, 1
PRECISION_16, PRECISION_32 = 1 << 2, 2 << 2  # IFM size field (bits 2-3)
OFM_PRECISION_16, OFM_PRECISION_32 = 1 << 1, 2 << 1  # OFM size field (bits 1-2)


def words(*commands: tuple[str, int]) -> list[int]:
    """Command words of ``(register or operation name, value)`` pairs."""
    return encode_commands(list(commands))


def payload(*commands: tuple[str, int], accelerator: Any = U55) -> bytes:
    return create_driver_payload(words(*commands, ("NPU_OP_STOP", 0)), accelerator)


class Recorder:
    """Stands in for ``datapath.compute``: keeps each call's arguments, returns ``result`` (or
    the IFM when None)."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.result: np.ndarray | None = None

    def __call__(self, op: str, param: int, regs: Any, ifm: np.ndarray, ifm2: np.ndarray | None = None,
                 **kwargs: Any) -> np.ndarray:
        self.calls.append({"op": op, "param": param, "regs": dict(regs), "ifm": ifm, "ifm2": ifm2, **kwargs})
        return ifm.copy() if self.result is None else self.result


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Iterator[Recorder]:
    found = Recorder()
    monkeypatch.setattr(datapath, "compute", found)
    yield found


def fm(prefix: str, *, base: int = 0, shape: tuple[int, int, int], precision: int = SIGNED, element: int = 1,
       region: int = 1, brick: bool = False, tiles: tuple[int, int, int, tuple[int, int, int, int]] | None = None
       ) -> list[tuple[str, int]]:
    """The registers of a feature map laid out densely (NHWC or NHCWB16) from ``base``; ``tiles``:
    (height 0, height 1, width 0, bases) instead of one tile."""
    h, w, d = shape
    if brick:
        stride_x, stride_c = 16 * element, 16 * element * w
        stride_y = stride_c * -(-d // 16)
    else:
        stride_x, stride_c, stride_y = d * element, element, d * element * w
    h0, h1, w0, bases = tiles or (h, h, w, (base, 0, 0, 0))
    out = [(f"{prefix}_REGION", region), (f"{prefix}_PRECISION", precision | (BRICK if brick else 0)),
           (f"{prefix}_HEIGHT0_M1", h0 - 1), (f"{prefix}_HEIGHT1_M1", h1 - 1), (f"{prefix}_WIDTH0_M1", w0 - 1),
           (f"{prefix}_STRIDE_X", stride_x), (f"{prefix}_STRIDE_Y", stride_y), (f"{prefix}_STRIDE_C", stride_c)]
    out += [(f"{prefix}_BASE{k}", b) for k, b in enumerate(bases)]
    if prefix == "IFM":
        out.append(("IFM_DEPTH_M1", d - 1))
    if prefix == "OFM":
        out += [("OFM_HEIGHT_M1", h - 1), ("OFM_WIDTH_M1", w - 1), ("OFM_DEPTH_M1", d - 1)]
    return out


def stored(values: np.ndarray, *, brick: bool, dtype: str = "i1") -> np.ndarray:
    """The bytes of an HWC array laid out densely as NHWC or NHCWB16."""
    if brick:
        h, w, d = values.shape
        padded = np.zeros((h, w, -(-d // 16) * 16), dtype=values.dtype)
        padded[:, :, :d] = values
        values = padded.reshape(h, w, -1, 16).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(values.astype(dtype)).view(np.uint8).reshape(-1).copy()


POOL_1X1 = [("KERNEL_HEIGHT_M1", 0), ("KERNEL_WIDTH_M1", 0), ("KERNEL_STRIDE", 0)]


def test_dma_copies_one_dimension() -> None:
    flash = np.arange(64, dtype=np.uint8)
    scratch = np.zeros(64, dtype=np.uint8)
    execute_stream(payload(("DMA0_SRC_REGION", 0), ("DMA0_SRC", 8), ("DMA0_DST_REGION", 1), ("DMA0_DST", 32),
                           ("DMA0_LEN", 16), ("NPU_OP_DMA_START", 0), ("NPU_OP_DMA_WAIT", 0)),
                   {0: flash, 1: scratch})
    assert scratch[32:48].tolist() == list(range(8, 24))
    assert not scratch[:32].any() and not scratch[48:].any()


def test_dma_strides_the_destination_in_two_and_three_dimensions() -> None:
    flash = np.arange(1, 25, dtype=np.uint8)
    two_d = np.zeros(32, dtype=np.uint8)
    execute_stream(payload(("DMA0_SRC_REGION", 0), ("DMA0_SRC", 0), ("DMA0_DST_REGION", 1 | 1 << 9),
                           ("DMA0_DST", 0), ("DMA0_LEN", 4), ("DMA0_SIZE0", 3), ("DMA0_SKIP0", 4),
                           ("NPU_OP_DMA_START", 0)), {0: flash, 1: two_d})
    assert two_d[:24].tolist() == [1, 2, 3, 4, 0, 0, 0, 0, 5, 6, 7, 8, 0, 0, 0, 0, 9, 10, 11, 12, 0, 0, 0, 0]
    three_d = np.zeros(40, dtype=np.uint8)
    execute_stream(payload(("DMA0_SRC_REGION", 0), ("DMA0_SRC", 0), ("DMA0_DST_REGION", 1 | 2 << 9),
                           ("DMA0_DST", 0), ("DMA0_LEN", 2), ("DMA0_SIZE0", 2), ("DMA0_SKIP0", 1),
                           ("DMA0_SIZE1", 2), ("DMA0_SKIP1", 3), ("NPU_OP_DMA_START", 0)), {0: flash, 1: three_d})
    # rows 3 bytes apart, planes 2 * 3 + 3 = 9 bytes apart
    assert three_d[:14].tolist() == [1, 2, 0, 3, 4, 0, 0, 0, 0, 5, 6, 0, 7, 8]


def test_dma_into_the_lookup_table_memory_reaches_the_datapath(recorder: Recorder) -> None:
    table = np.arange(256, dtype=np.int64) - 128
    flash = table.astype(np.int8).view(np.uint8)
    scratch = np.zeros(64, dtype=np.uint8)
    execute_stream(payload(("DMA0_SRC_REGION", 0), ("DMA0_SRC", 0), ("DMA0_DST_REGION", 1 << 8),
                           ("DMA0_DST", lut_base(U55) + 256), ("DMA0_LEN", 256), ("NPU_OP_DMA_START", 0),
                           *fm("IFM", shape=(1, 1, 4)), *fm("OFM", base=16, shape=(1, 1, 4)), *POOL_1X1,
                           ("ACTIVATION", 17), ("NPU_OP_POOL", 0)), {0: flash, 1: scratch})
    assert recorder.calls[0]["lut"].tolist() == table.tolist()


def test_nhwc_and_brick_layouts_read_and_write_the_same_values(recorder: Recorder) -> None:
    values = np.random.default_rng(1).integers(-128, 128, (3, 5, 21))
    for brick in (False, True):
        recorder.calls.clear()
        data = stored(values, brick=brick)
        scratch = np.concatenate([data, np.zeros(data.size, dtype=np.uint8)])
        execute_stream(payload(*fm("IFM", shape=values.shape, brick=brick),
                               *fm("OFM", base=data.size, shape=values.shape, brick=brick), *POOL_1X1,
                               ("NPU_OP_POOL", 0)), {1: scratch})
        assert recorder.calls[0]["ifm"].tolist() == values.tolist()
        if brick:  # channels past the depth in the last brick are not written
            written = scratch[data.size:].reshape(3, 2, 5, 16)
            assert not written[:, 1, :, 5:].any()
        assert np.array_equal(scratch[data.size:], data)


def test_four_tiles_read_each_quarter_from_its_own_base(recorder: Recorder) -> None:
    values = np.arange(6 * 7 * 3).reshape(6, 7, 3) - 60
    h0, h1, w0 = 4, 2, 3  # tile 0: rows 0-3 x columns 0-2; tile 1: rows 0-1 x 3-6; 2: rows 4-5 x 0-2; 3: rows 2-5 x 3-6
    quarters = [values[:h0, :w0], values[:h1, w0:], values[h0:, :w0], values[h1:, w0:]]
    # the tiles share one row stride: lay each quarter out with the widest row (4 columns)
    row = 4 * 3
    pieces = [np.pad(q, ((0, 0), (0, 4 - q.shape[1]), (0, 0))) for q in quarters]
    scratch = np.zeros(4 * 6 * row + 64, dtype=np.uint8)
    bases = (0, 6 * row, 12 * row, 18 * row)
    for base, piece in zip(bases, pieces):
        data = stored(piece, brick=False)
        scratch[base:base + data.size] = data
    commands = fm("IFM", shape=values.shape, tiles=(h0, h1, w0, bases))
    commands = [c for c in commands if c[0] != "IFM_STRIDE_Y"] + [("IFM_STRIDE_Y", row)]
    out = np.zeros(values.size, dtype=np.uint8)
    execute_stream(payload(*commands, *fm("OFM", region=3, shape=values.shape), *POOL_1X1, ("NPU_OP_POOL", 0)),
                   {1: scratch, 3: out})
    assert recorder.calls[0]["ifm"].tolist() == values.tolist()
    assert np.array_equal(out, stored(values, brick=False))


@pytest.mark.parametrize(("precision", "ofm_precision", "dtype", "low", "high"), [
    (0, 0, "u1", 0, 256), (PRECISION_16 | SIGNED, OFM_PRECISION_16 | SIGNED, "<i2", -32768, 32768),
    (PRECISION_16, OFM_PRECISION_16, "<u2", 0, 65536), (PRECISION_32 | SIGNED, OFM_PRECISION_32 | SIGNED, "<i4",
                                                        -(1 << 31), 1 << 31)])
def test_precisions_read_and_write_their_element_size(recorder: Recorder, precision: int, ofm_precision: int,
                                                      dtype: str, low: int, high: int) -> None:
    values = np.random.default_rng(2).integers(low, high, (2, 3, 5))
    element = np.dtype(dtype).itemsize
    data = stored(values, brick=False, dtype=dtype)
    scratch = np.concatenate([data, np.zeros(data.size, dtype=np.uint8)])
    execute_stream(payload(*fm("IFM", shape=values.shape, precision=precision, element=element),
                           *fm("OFM", base=data.size, shape=values.shape, precision=ofm_precision, element=element),
                           *POOL_1X1, ("NPU_OP_POOL", 0)), {1: scratch})
    assert recorder.calls[0]["ifm"].tolist() == values.tolist()
    assert np.array_equal(scratch[data.size:], data)


def test_ifm_box_follows_kernel_stride_padding_and_upscaling(recorder: Recorder) -> None:
    scratch = np.zeros(4096, dtype=np.uint8)
    common = [*fm("IFM", shape=(1, 1, 2)), *fm("OFM", base=2048, shape=(4, 5, 2)), ("KERNEL_HEIGHT_M1", 2),
              ("KERNEL_WIDTH_M1", 2), ("KERNEL_STRIDE", 3), ("IFM_PAD_TOP", 1), ("IFM_PAD_LEFT", 1)]
    recorder.result = np.zeros((4, 5, 2), dtype=np.int64)
    execute_stream(payload(*common, ("NPU_OP_POOL", 0)), {1: scratch})
    assert recorder.calls[0]["ifm"].shape == (3 * 2 + 3 - 1, 4 * 2 + 3 - 1, 2)
    execute_stream(payload(*common, ("IFM_UPSCALE", 1), ("NPU_OP_POOL", 0)), {1: scratch})
    assert recorder.calls[1]["ifm"].shape == (4, 5, 2)  # half the rows and columns, rounded up


def test_ifm2_broadcasts_and_scalars(recorder: Recorder) -> None:
    scratch = np.zeros(1024, dtype=np.uint8)
    common = [*fm("IFM", shape=(3, 4, 5)), *fm("IFM2", base=128, shape=(3, 4, 5)),
              *fm("OFM", base=256, shape=(3, 4, 5))]
    execute_stream(payload(*common, ("IFM2_BROADCAST", 0b101), ("NPU_OP_ELEMENTWISE", 1),
                           ("IFM2_BROADCAST", 1 << 7), ("NPU_OP_ELEMENTWISE", 1),
                           ("NPU_OP_ELEMENTWISE", 6)), {1: scratch})
    assert recorder.calls[0]["ifm2"].shape == (1, 4, 1)
    assert recorder.calls[1]["ifm2"] is None and recorder.calls[2]["ifm2"] is None  # scalar; ABS is unary


@pytest.mark.parametrize(("kind", "stride", "ifm_bits"), [
    ("NPU_OP_CONV", 0, 8),  # depth-first
    ("NPU_OP_CONV", 1 << 2, 8),  # part-kernel-first (KERNEL_STRIDE bit 2)
    ("NPU_OP_CONV", 1 << 3 | 1 << 4, 16),  # dilation 2x2 (bits 3, 4), 16-bit IFM
    ("NPU_OP_DEPTHWISE", 0, 8),
])
def test_dual_core_streams_each_hold_every_second_channel(recorder: Recorder, kind: str, stride: int,
                                                          ifm_bits: int) -> None:
    rng = np.random.default_rng(3)
    depthwise, dilation = kind == "NPU_OP_DEPTHWISE", 2 if stride & (1 << 3) else 1
    volume = rng.integers(-100, 100, (13, 3, 2, 1 if depthwise else 20))
    biases, multipliers, shifts = rng.integers(-(1 << 38), 1 << 38, 13), rng.integers(0, 1 << 31, 13), \
        rng.integers(0, 64, 13)
    flash = bytearray()
    streams = {}
    for core in (0, 1):
        weights = encode_weights(volume[core::2], ofm_ublock_depth=8, ifm_ublock_depth=8,
                                 dilation_xy=(dilation, dilation), ifm_bits=ifm_bits, ofm_block_depth=8,
                                 depthwise=depthwise, part_kernel_first=bool(stride & (1 << 2)))
        scales = encode_biases(biases[core::2], multipliers[core::2], shifts[core::2])
        scales += bytes(-len(scales) % 16)
        streams[core] = (len(flash), len(weights), len(flash) + len(weights), len(scales))
        flash += weights + scales
    recorder.result = np.zeros((2, 2, 13), dtype=np.int64)
    element = ifm_bits // 8
    precision = SIGNED | (PRECISION_16 if ifm_bits == 16 else 0)
    scratch = np.zeros(2048, dtype=np.uint8)
    execute_stream(payload(*fm("IFM", shape=(8, 8, 13 if depthwise else 20), precision=precision, element=element),
                           *fm("OFM", base=1536, shape=(2, 2, 13)),
                           ("KERNEL_HEIGHT_M1", 3 * dilation - dilation), ("KERNEL_WIDTH_M1", 2 * dilation - dilation),
                           ("KERNEL_STRIDE", stride), ("OFM_BLK_DEPTH_M1", 15), ("WEIGHT_REGION", 0),
                           ("SCALE_REGION", 0), ("WEIGHT_BASE", streams[0][0]), ("WEIGHT_LENGTH", streams[0][1]),
                           ("SCALE_BASE", streams[0][2]), ("SCALE_LENGTH", streams[0][3]),
                           ("WEIGHT1_BASE", streams[1][0]), ("WEIGHT1_LENGTH", streams[1][1]),
                           ("SCALE1_BASE", streams[1][2]), ("SCALE1_LENGTH", streams[1][3]),
                           (kind, 0), accelerator=U65_512), {0: np.frombuffer(bytes(flash), np.uint8), 1: scratch})
    call = recorder.calls[0]
    assert call["weights"].tolist() == volume.tolist()
    assert call["scales"].bias.tolist() == biases.tolist()
    assert call["scales"].scale.tolist() == multipliers.tolist()
    assert call["scales"].shift.tolist() == shifts.tolist()


def test_a_stream_that_decodes_to_too_few_weights_fails() -> None:
    weights = encode_weights(np.ones((8, 1, 1, 16), dtype=np.int64), ofm_ublock_depth=8, ifm_ublock_depth=8,
                             dilation_xy=(1, 1), ifm_bits=8, ofm_block_depth=8, depthwise=False,
                             part_kernel_first=False)
    scales = encode_biases(np.zeros(16), np.ones(16), np.zeros(16))
    flash = np.frombuffer(weights + scales, np.uint8)
    with pytest.raises(ValidationError, match="weight stream decodes to 256 weights, the registers read 512"):
        execute_stream(payload(*fm("IFM", shape=(1, 1, 16)), *fm("OFM", base=64, shape=(1, 1, 16)),
                               ("KERNEL_HEIGHT_M1", 0), ("KERNEL_WIDTH_M1", 0), ("KERNEL_STRIDE", 0),
                               ("OFM_BLK_DEPTH_M1", 15), ("WEIGHT_REGION", 0), ("SCALE_REGION", 0),
                               ("WEIGHT_BASE", 0), ("WEIGHT_LENGTH", len(weights)), ("SCALE_BASE", len(weights)),
                               ("SCALE_LENGTH", len(scales)), ("NPU_OP_CONV", 0)),
                       {0: flash, 1: np.zeros(128, dtype=np.uint8)})


@pytest.mark.parametrize(("commands", "message"), [
    ([*fm("IFM", base=60, shape=(2, 2, 4)), *fm("OFM", shape=(2, 2, 4)), *POOL_1X1, ("NPU_OP_POOL", 0)],
     "IFM touches bytes 60..76 of region 1 (64 bytes)"),
    ([*fm("IFM", region=5, shape=(1, 1, 4)), *fm("OFM", shape=(1, 1, 4)), *POOL_1X1, ("NPU_OP_POOL", 0)],
     "IFM uses region 5, which the operator does not provide"),
    ([("DMA0_SRC_REGION", 1), ("DMA0_SRC", 0), ("DMA0_DST_REGION", 0), ("DMA0_DST", 0), ("DMA0_LEN", 4),
      ("NPU_OP_DMA_START", 0)], "DMA destination is a read-only region"),
    ([("DMA0_SRC_REGION", 1), ("DMA0_SRC", 0), ("DMA0_DST_REGION", 1 << 8), ("DMA0_DST", 0), ("DMA0_LEN", 4),
      ("NPU_OP_DMA_START", 0)], "lie outside ethos-u55-128's lookup-table memory (SHRAM bytes 22528..24576)"),
])
def test_bad_streams_fail_in_one_line(recorder: Recorder, commands: list[tuple[str, int]], message: str) -> None:
    regions = {0: np.frombuffer(bytes(64), np.uint8), 1: np.zeros(64, dtype=np.uint8)}
    with pytest.raises(ValidationError, match=re.escape(message)) as error:
        execute_stream(payload(*commands), regions)
    assert "\n" not in str(error.value)


def test_unknown_command_fails() -> None:
    stream = create_driver_payload(words(("NPU_OP_STOP", 0))[:0] + [0x3FF], U55)
    with pytest.raises(ValidationError, match="unknown cmd0 opcode"):
        execute_stream(stream, {})


def test_registers_the_datapath_rejects_fail_in_one_line() -> None:
    scratch = np.zeros(64, dtype=np.uint8)
    with pytest.raises(ValidationError, match=r"NPU op 0 \(NPU_OP_POOL\): unknown pooling mode 7") as error:
        execute_stream(payload(*fm("IFM", shape=(1, 1, 4)), *fm("OFM", base=16, shape=(1, 1, 4)), *POOL_1X1,
                               ("NPU_OP_POOL", 7)), {1: scratch})
    assert "\n" not in str(error.value)
