"""``generate_register_command_stream``: the register command words of a list of operations.

Per operation, in order: its registers (each written only when its value changes), BLOCKDEP for
a block operation, the waits that order it after the operations it depends on, and the
operation command; PARALLEL_MODE first on an Ethos-U65, STOP last. The output-stage registers
(scales, zero points, activation, precisions) come from ``output_stage.output_stage_registers``
and are written where the reference writes them, so the streams can be compared word for word.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from npuplan.emit.native import registers as reg
from npuplan.emit.native.accesses import Accesses, block_accesses, dma_accesses, lut_span, tile_spans
from npuplan.emit.native.checks import check_dma, check_feature_map, check_limits, check_streams
from npuplan.emit.native.dependencies import BlockOp, Waits, blockdep
from npuplan.emit.native.hardware import SHRAM_REGION, NativeArch, arch_of
from npuplan.emit.native.output_stage import output_stage_registers
from npuplan.emit.native.shared_buffer import OpFacts, ShramRegisters, shram_registers
from npuplan.emit.native.view import Fm, feature_map, has_ifm2, kernel_of, padding_of, ranges, scalar_of, uses_lut
from npuplan.errors import EmitError
from npuplan.regstream.words import CODE_OF

_C = CODE_OF
_POOL_MODES = {"MAX": 0, "AVERAGE": 1, "REDUCE_SUM": 2}
_ELEMENTWISE_MODES = {"MUL": 0, "ADD": 1, "SUB": 2, "MIN": 3, "MAX": 4, "LRELU": 5, "ABS": 6, "CLZ": 7, "SHR": 8,
                      "SHL": 9}
_UNARY = frozenset({"ABS", "LRELU", "CLZ"})
_RESAMPLING = {"NONE": 0, "NEAREST": 1, "TRANSPOSE": 2}
_OP_CODES = {"Conv2D": _C["NPU_OP_CONV"], "ConvDepthWise": _C["NPU_OP_DEPTHWISE"], "Pooling": _C["NPU_OP_POOL"],
             "ElementWise": _C["NPU_OP_ELEMENTWISE"]}
# IFM2_BROADCAST bits: broadcast along H, W, C; operands reversed; IFM2 is a scalar
_BROADCAST_H, _BROADCAST_W, _BROADCAST_C, _REVERSED, _SCALAR = 1, 2, 4, 1 << 6, 1 << 7

# Where the output-stage registers go among the others (the reference's order): (name, code)
_STAGE_FIRST = reg.codes("OPA_SCALE", "OPB_SCALE", "OFM_SCALE")  # elementwise: before the rest
_STAGE_IFM = reg.codes("IFM_ZERO_POINT", "IFM_PRECISION")
_STAGE_OFM = reg.codes("OFM_ZERO_POINT", "OFM_PRECISION")
_STAGE_ACTIVATION = reg.codes("ACTIVATION", "ACTIVATION_MIN", "ACTIVATION_MAX")
_STAGE_POOL = reg.codes("OFM_SCALE")
_STAGE_IFM2 = reg.codes("IFM2_ZERO_POINT", "IFM2_PRECISION")
_BLOCK = tuple(_C[n] for n in ("OFM_BLK_HEIGHT_M1", "OFM_BLK_WIDTH_M1", "OFM_BLK_DEPTH_M1"))
_SHRAM = tuple(_C[n] for n in ("IFM_IB_END", "AB_START", "IFM2_IB_START", "ACC_FORMAT"))
_MAX_WORDS = 1 << 22  # 16 MiB of command words: the hardware's limit
_SHRAM_MEMO: dict[tuple[object, ...], ShramRegisters] = {}  # shared-buffer registers of the operations seen


def _quantise(value: float, quantization: Any) -> int:
    """``value`` in ``quantization``'s integers, rounded half away from zero (float32 division)."""
    scale = 1.0 if quantization is None or quantization.scale_f32 is None else quantization.scale_f32
    zero_point = 0 if quantization is None else int(quantization.zero_point)
    ratio = np.float32(value) / np.float32(scale)
    return zero_point + int(np.trunc(ratio + (-0.5 if ratio < 0 else 0.5)))


def _broadcast(op: Any) -> int:
    """IFM2_BROADCAST: the axes IFM2 is broadcast along, reversed operands, a scalar IFM2."""
    flags = _REVERSED if getattr(op, "reversed_operands", False) else 0
    if scalar_of(op) is not None:
        return flags | _SCALAR
    a, b = op.ifm.shape, op.ifm2.shape
    return flags | (_BROADCAST_H if a.height != b.height else 0) | (_BROADCAST_W if a.width != b.width else 0) | (
        _BROADCAST_C if a.depth != b.depth else 0)


def _ifm_block_depth(arch: NativeArch, op: Any, kind: str, ifm_bits: int) -> int:
    """A convolution's IFM block depth as BLOCKDEP counts jobs (others: the OFM's depth)."""
    if kind != "Conv2D":
        return int(op.ofm.shape.depth)
    ub = arch.accelerator.ifm_ublock.depth
    return min(256 // ifm_bits, -(-int(op.ifm.shape.depth) // ub) * ub)


def _geometry(op: Any, kind: str, stage: dict[str, int], ifm: Fm, ofm: Fm, facts: OpFacts) -> reg.Pairs:
    """IFM, upscaling, padding, OFM and kernel registers, with the output stage's among them."""
    pairs = reg.named(stage, _STAGE_FIRST) if kind == "ElementWise" else []
    pairs += reg.ifm(ifm)
    pairs += reg.named(stage, _STAGE_IFM)
    pairs.append((_C["IFM_UPSCALE"], _RESAMPLING[op.ifm_upscale.name]))
    pad = padding_of(op)
    if pad is not None:
        pairs += reg.padding(pad)
    pairs += reg.ofm(ofm)
    pairs += reg.named(stage, _STAGE_OFM)
    if kind != "ElementWise":
        pairs += reg.kernel(facts.kernel, facts.part_kernel_first)
    return pairs


def _layout(arch: NativeArch, op: Any, facts: OpFacts, second: bool) -> reg.Pairs:
    """OFM block and shared-buffer registers."""
    b = op.block_config
    pairs = list(zip(_BLOCK, (int(b.height) - 1, int(b.width) - 1, int(b.depth) - 1)))
    shram = shram_registers(op, arch.accelerator, op.ifm2 if second else None, facts, _SHRAM_MEMO)
    pairs += ((_SHRAM[0], shram.ib_end), (_SHRAM[1], shram.ab_start))
    if second:
        pairs.append((_SHRAM[2], shram.ib_start2))
    pairs.append((_SHRAM[3], shram.acc_format))
    return pairs


def _second_operand(op: Any, stage: dict[str, int], ifm2: Fm | None) -> reg.Pairs:
    """A binary elementwise operation's IFM2 (a feature map or a scalar) and broadcast registers."""
    pairs = reg.ifm2(ifm2) if ifm2 is not None else []
    pairs += reg.named(stage, _STAGE_IFM2)
    pairs.append((_C["IFM2_BROADCAST"], _broadcast(op)))
    scalar = scalar_of(op)
    if scalar is not None:
        pairs.append((_C["IFM2_SCALAR"], _quantise(scalar, op.ifm2.quantization)))
    return pairs


def _block_registers(s: reg.RegisterStream, arch: NativeArch, op: Any, kind: str, stage: dict[str, int],
                     index: int) -> BlockOp:
    """Write every register of block operation ``op`` (number ``index``, of ``kind``) but BLOCKDEP;
    what BLOCKDEP and the waits read of it."""
    facts = OpFacts(kind, kind == "Conv2D" and op.block_traversal.name == "PART_KERNEL_FIRST", uses_lut(op),
                    kernel_of(op))
    ifm, ofm = feature_map(op.ifm), feature_map(op.ofm)
    second = has_ifm2(op)
    binary = kind == "ElementWise" and op.sub_op_type.name not in _UNARY
    ifm2 = feature_map(op.ifm2) if binary and second else None
    for fm in (ifm, ofm) if ifm2 is None else (ifm, ofm, ifm2):
        check_feature_map(fm, index, kind)
    weights, biases = ranges(op.weights), ranges(op.biases)
    check_streams(weights if len(weights) >= arch.ncores else weights[:1] * arch.ncores, biases, index, kind)
    pairs = _geometry(op, kind, stage, ifm, ofm, facts)
    pairs += reg.core_streams("WEIGHT", weights, arch.ncores)
    pairs += reg.core_streams("SCALE", biases, arch.ncores)
    pairs += reg.named(stage, _STAGE_ACTIVATION)
    pairs += _layout(arch, op, facts, second)
    if kind == "Pooling":
        pairs += reg.named(stage, _STAGE_POOL)
    if binary:
        pairs += _second_operand(op, stage, ifm2)
    s.write(pairs)
    b, pad = op.block_config, padding_of(op)
    return BlockOp(ifm, ifm2, ofm, tile_spans(ifm), tile_spans(ifm2) if ifm2 is not None else [], tile_spans(ofm),
                   (int(b.width), int(b.height), int(b.depth)), facts.kernel, pad[1] if pad else 0,
                   pad[3] if pad else 0, _ifm_block_depth(arch, op, kind, ifm.element_bytes * 8), facts.lut,
                   weights + biases)


def _op_param(op: Any, kind: str) -> int:
    if kind == "Pooling":
        return _POOL_MODES[op.sub_op_type.name]
    if kind == "ElementWise":
        return _ELEMENTWISE_MODES[op.sub_op_type.name]
    return 0


_DMA = tuple(_C[n] for n in ("DMA0_SRC_REGION", "DMA0_SRC", "DMA0_DST_REGION", "DMA0_DST", "DMA0_LEN"))


def _dma(s: reg.RegisterStream, arch: NativeArch, op: Any, index: int) -> Accesses:
    src = (int(op.src.region), int(op.src.address), int(op.src.length))
    dst = (int(op.dest.region), int(op.dest.address), int(op.dest.length))
    accesses = dma_accesses(src, dst)
    check_limits(arch, accesses, index, "Dma")
    check_dma(arch, src, dst, index)
    s.write(zip(_DMA, (src[0], src[1], dst[0], dst[1], src[2])))
    return accesses


def _waits(s: reg.RegisterStream, kernels: int, dmas: int) -> None:
    if kernels >= 0:
        s.command(_C["NPU_OP_KERNEL_WAIT"], kernels)
    if dmas >= 0:
        s.command(_C["NPU_OP_DMA_WAIT"], dmas)


def generate_register_command_stream(operations: Sequence[Any], accelerator: Any) -> list[int]:
    """The command words (32-bit ints) running ``operations`` (``NpuOperation``-like objects) on
    ``accelerator`` (an object with ``.name``, e.g. ``NpuAccelerator.Ethos_U55_128``, or a name)."""
    arch = arch_of(accelerator)
    name = accelerator if isinstance(accelerator, str) else accelerator.name
    s = reg.RegisterStream()
    if arch.is_u65:
        s.write(((_C["PARALLEL_MODE"], arch.ncores - 1),))
    waits = Waits(arch)
    prev: BlockOp | None = None
    tables: dict[int, int] = {}  # shared-buffer address -> length of the table last loaded there
    for index, op in enumerate(operations):
        kind = op.op_type.name
        if kind == "Dma":
            _waits(s, waits.before(_dma(s, arch, op, index), dma=True), -1)
            s.command(_C["NPU_OP_DMA_START"], int(getattr(op, "channel", 0)) * 16 + int(getattr(op, "mode", 0)))
            if int(op.dest.region) == SHRAM_REGION:
                tables[int(op.dest.address)] = int(op.dest.length)
            continue
        record = _block_registers(s, arch, op, kind, output_stage_registers(op, name), index)
        lut = lut_span(arch, int(op.activation.lookup_table_index), tables) if record.lut else None
        accesses = block_accesses(arch, record.ifm_spans, record.ifm2_spans, record.ofm_spans, record.streams, lut)
        check_limits(arch, accesses, index, kind)
        s.write(((_C["BLOCKDEP"], blockdep(arch, prev, record)),))
        prev = record
        _waits(s, -1, waits.before(accesses, dma=False))
        s.command(_OP_CODES[kind], _op_param(op, kind))
    s.command(_C["NPU_OP_STOP"], 0xFFFF)
    if len(s.words) >= _MAX_WORDS:
        raise EmitError(None, f"the command stream of {len(s.words) * 4} bytes exceeds the hardware's 16 MiB")
    return s.words
