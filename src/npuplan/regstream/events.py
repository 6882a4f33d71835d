"""Replay a decoded command stream's registers into events: NPU operations with the feature maps,
weights and scales they touch, DMA transfers, and waits.

Registers keep their values between operations (the stream only sets what changes), so each
``NPU_OP_*`` takes a snapshot. An operation's IFM extent follows from its OFM and kernel: rows read
``(ofm_h - 1) * stride_y + kernel_h - pad_top - pad_bottom`` (halved for an upscaled IFM), likewise
columns; elementwise IFMs have the OFM's extent, except broadcast axes (extent 1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field

from npuplan.errors import ValidationError
from npuplan.records import record
from npuplan.regstream.words import Decoded, Word, decoded, register_value

# Registers that decide the values an operation computes beyond its geometry: scales, zero points,
# activation and precision (compared between two streams by bench/deploy_compare.py).
OUTPUT_STAGE = ("OFM_SCALE", "OPA_SCALE", "OPB_SCALE", "ACTIVATION", "ACTIVATION_MIN", "ACTIVATION_MAX",
                "IFM_ZERO_POINT", "IFM2_ZERO_POINT", "OFM_ZERO_POINT", "IFM_PRECISION", "IFM2_PRECISION",
                "OFM_PRECISION", "IFM2_BROADCAST")
KINDS = {"NPU_OP_CONV": "Conv2D", "NPU_OP_DEPTHWISE": "DepthWise", "NPU_OP_POOL": "Pooling",
         "NPU_OP_ELEMENTWISE": "ElementWise"}
_IFM_BYTES = {0: 1, 1: 2, 2: 4}  # precision size field (IFM bits 2-3, OFM bits 1-2) -> element bytes


@record
class FeatureMapAccess:
    """A box of a feature map as the hardware addresses it (bytes and elements)."""

    region: int
    bases: tuple[int, int, int, int]
    height_0: int
    height: int
    width: int
    depth: int
    stride_y: int
    stride_x: int
    stride_c: int
    element_bytes: int
    nhcwb16: bool
    # tiles 1 and 3 (the columns from ``width_0`` on; tile 3 from row ``height_1``), used by Vela's
    # edge (TILE) padding; None: every column is in tiles 0 and 2
    height_1: int | None = None
    width_0: int | None = None


@record
class Range:
    """A contiguous byte range of a region."""

    region: int
    address: int
    length: int


@record
class NpuEvent:
    """One NPU operation (``index``: how many came before it in the stream): kind, what it reads and
    writes, and its geometry for reports."""

    index: int
    kind: str
    ifm: FeatureMapAccess
    ifm2: FeatureMapAccess | None
    ofm: FeatureMapAccess
    weights: Range | None
    scales: Range | None
    kernel: tuple[int, int, int, int]  # height, width (dilated extents), stride y, stride x
    block: tuple[int, int, int]  # OFM block height, width, depth
    output_stage: tuple[int, ...] = ()  # the registers of OUTPUT_STAGE, in that order (for comparisons)
    # the second core's weight and scale streams (dual-core Ethos-U65: WEIGHT1_*, SCALE1_*; None
    # where the stream never sets them), and what else the weight stream's order depends on
    weights1: Range | None = None
    scales1: Range | None = None
    dilation: tuple[int, int] = (1, 1)  # y, x (KERNEL_STRIDE bits 4 and 3)
    part_kernel_first: bool = False  # KERNEL_STRIDE bit 2: the weights' traversal
    # what the datapath does beyond geometry (for timing the operation): the NPU_OP_* parameter
    # (pooling: 0 max, 1 average, 2 reduce sum; elementwise: 0 MUL, 1 ADD, 2 SUB, 3 MIN, 4 MAX,
    # 5 LRELU, 6 ABS, 7 CLZ, 8 SHR, 9 SHL), ACC_FORMAT (0 int32, 1 int40, 2 float16) and
    # IFM_UPSCALE (0 none, 1 nearest, 2 zeros inserted)
    mode: int = 0
    acc_format: int = 0
    upscale: int = 0


@record
class DmaEvent:
    index: int
    src: Range
    dst: Range


@record
class WaitEvent:
    """Wait until at most ``outstanding`` operations of the kind (``"dma"``/``"kernel"``) are pending."""

    index: int
    kind: str
    outstanding: int


Event = NpuEvent | DmaEvent | WaitEvent


# The registers of each feature map: precision, region, the four tile bases, tile 0's height less
# one, the Y, X and C strides, tile 1's height and tile 0's width less one.
_FM_REGISTERS = {prefix: (f"{prefix}_PRECISION", f"{prefix}_REGION", tuple(f"{prefix}_BASE{k}" for k in range(4)),
                          f"{prefix}_HEIGHT0_M1", f"{prefix}_STRIDE_Y", f"{prefix}_STRIDE_X", f"{prefix}_STRIDE_C",
                          f"{prefix}_HEIGHT1_M1", f"{prefix}_WIDTH0_M1")
                 for prefix in ("IFM", "IFM2", "OFM")}


def _fm(r: Mapping[str, int], prefix: str, height: int, width: int, depth: int, *, ofm: bool) -> FeatureMapAccess:
    precision_name, region, bases, height_0, stride_y, stride_x, stride_c, height_1, width_0 = _FM_REGISTERS[prefix]
    precision = r.get(precision_name, 0)
    size_field = (precision >> 1) & 0x3 if ofm else (precision >> 2) & 0x3
    element = _IFM_BYTES.get(size_field, 1)
    return FeatureMapAccess(
        region=r.get(region, 0) & 0x7,
        bases=tuple(r.get(name, 0) for name in bases),  # type: ignore[arg-type]
        height_0=r.get(height_0, 0) + 1, height=height, width=width, depth=depth,
        stride_y=r.get(stride_y, 0), stride_x=r.get(stride_x, 0),
        stride_c=r.get(stride_c, 0), element_bytes=element, nhcwb16=bool(precision & (1 << 6)),
        **_right_tiles(r, height_1, width_0, width),
    )


def _right_tiles(r: Mapping[str, int], height_1: str, width_0: str, width: int) -> dict[str, int]:
    """Tile 1's height and tile 0's width when the access reaches the right tiles (1 and 3)."""
    columns = r.get(width_0, width - 1) + 1
    return {"height_1": r.get(height_1, 0) + 1, "width_0": columns} if columns < width else {}


_UNARY_ELEMENTWISE = frozenset({5, 6, 7})  # NPU_OP_ELEMENTWISE's mode: LRELU, ABS, CLZ read no IFM2


def npu_event(index: int, name: str, r: Mapping[str, int], mode: int = 0) -> NpuEvent:
    kind = KINDS[name]
    oh, ow, od = r.get("OFM_HEIGHT_M1", 0) + 1, r.get("OFM_WIDTH_M1", 0) + 1, r.get("OFM_DEPTH_M1", 0) + 1
    kh, kw = r.get("KERNEL_HEIGHT_M1", 0) + 1, r.get("KERNEL_WIDTH_M1", 0) + 1
    stride = r.get("KERNEL_STRIDE", 0)
    sx = (stride & 1) + ((stride >> 6) & 0x7) * 2 + 1
    sy = ((stride >> 1) & 1) + ((stride >> 9) & 0x7) * 2 + 1
    ifm2 = None
    if kind == "ElementWise":
        ih, iw, idp = oh, ow, od
        broadcast = r.get("IFM2_BROADCAST", 0)
        if not broadcast & (1 << 7) and mode not in _UNARY_ELEMENTWISE:  # a second feature map
            ifm2 = _fm(r, "IFM2", 1 if broadcast & 1 else oh, 1 if broadcast & 2 else ow,
                       1 if broadcast & 4 else od, ofm=False)
        kernel = (1, 1, 1, 1)
    else:
        up = 2 if r.get("IFM_UPSCALE", 0) else 1
        pt, pb = r.get("IFM_PAD_TOP", 0), r.get("IFM_PAD_BOTTOM", 0)
        pl, pr = r.get("IFM_PAD_LEFT", 0), r.get("IFM_PAD_RIGHT", 0)
        ih = max(1, -(-((oh - 1) * sy + kh - pt - pb) // up))
        iw = max(1, -(-((ow - 1) * sx + kw - pl - pr) // up))
        idp = r.get("IFM_DEPTH_M1", 0) + 1
        kernel = (kh, kw, sy, sx)
    weights = scales = weights1 = scales1 = None
    if kind in ("Conv2D", "DepthWise"):
        weights = Range(r.get("WEIGHT_REGION", 0) & 0x7, r.get("WEIGHT_BASE", 0), r.get("WEIGHT_LENGTH", 0))
        scales = Range(r.get("SCALE_REGION", 0) & 0x7, r.get("SCALE_BASE", 0), r.get("SCALE_LENGTH", 0))
        if "WEIGHT1_BASE" in r:
            weights1 = Range(weights.region, r["WEIGHT1_BASE"], r.get("WEIGHT1_LENGTH", 0))
        if "SCALE1_BASE" in r:
            scales1 = Range(scales.region, r["SCALE1_BASE"], r.get("SCALE1_LENGTH", 0))
    block = (r.get("OFM_BLK_HEIGHT_M1", 0) + 1, r.get("OFM_BLK_WIDTH_M1", 0) + 1, r.get("OFM_BLK_DEPTH_M1", 0) + 1)
    stage = tuple(r.get(name, 0) for name in OUTPUT_STAGE) if kind in ("Pooling", "ElementWise") else tuple(
        r.get(name, 0) for name in OUTPUT_STAGE[3:])  # convolutions scale per channel (the scale stream)
    return NpuEvent(index, kind, _fm(r, "IFM", ih, iw, idp, ofm=False), ifm2, _fm(r, "OFM", oh, ow, od, ofm=True),
                    weights, scales, kernel, block, stage, weights1, scales1,
                    (((stride >> 4) & 1) + 1, ((stride >> 3) & 1) + 1), bool(stride & 4), mode,
                    r.get("ACC_FORMAT", 0) & 0x3, r.get("IFM_UPSCALE", 0) & 0x3)


INTERNAL_REGION = -1  # a DMA's internal memory (the shared buffer, where lookup tables go)


def _dma_region(param: int) -> int:
    """A DMA region parameter: bits 0-2 the region, bit 8 set for the NPU's internal memory."""
    return INTERNAL_REGION if param & (1 << 8) else param & 0x7


def events(words: list[Word]) -> list[Event]:
    """The operations, DMAs and waits of a decoded stream, in order."""
    return replayed((w.name, w.param, w.payload, w.offset) for w in words)


def stream_events(words: list[int]) -> list[Event]:
    """``events(decode_words(words))`` without a ``Word`` per command word."""
    return replayed(decoded(words))


def replayed(commands: Iterable[Decoded]) -> list[Event]:
    """The operations, DMAs and waits of a stream's commands (``words.decoded``), in order."""
    registers: dict[str, int] = {}
    out: list[Event] = []
    kicks = dmas = 0
    seen = stopped = False
    for name, param, payload, _ in commands:
        seen = True
        if stopped:  # the words after NPU_OP_STOP are decoded all the same: an unknown opcode fails
            continue
        if payload is not None:
            registers[name] = register_value(name, param, payload)
        elif not name.startswith("NPU_OP_"):
            registers[name] = param
        elif name in KINDS:
            out.append(npu_event(kicks, name, registers, param if name in ("NPU_OP_ELEMENTWISE", "NPU_OP_POOL") else 0))
            kicks += 1
        elif name == "NPU_OP_DMA_START":
            length = registers.get("DMA0_LEN", 0)
            dmas += 1
            out.append(DmaEvent(dmas - 1, Range(_dma_region(registers.get("DMA0_SRC_REGION", 0)),
                                                registers.get("DMA0_SRC", 0), length),
                                Range(_dma_region(registers.get("DMA0_DST_REGION", 0)), registers.get("DMA0_DST", 0),
                                      length)))
        elif name in ("NPU_OP_DMA_WAIT", "NPU_OP_KERNEL_WAIT"):
            out.append(WaitEvent(len(out), "dma" if name == "NPU_OP_DMA_WAIT" else "kernel", param & 0xF))
        elif name == "NPU_OP_STOP":
            stopped = True
    if not out and seen and not stopped:  # a lone NPU_OP_STOP is an empty stream (Vela's legacy core writes them)
        raise ValidationError("the command stream runs no operation")
    return out


@record(slots=False)
class NpuStream:
    """One ethos-u operator's decoded stream, its region sizes in bytes and its payload's CONFIG
    word (which accelerator the stream is for)."""

    operator: int
    events: tuple[Event, ...]
    region_bytes: dict[int, int]
    config: int = 0
    region_tensors: dict[int, int] = field(default_factory=dict)  # the tensor each region is
