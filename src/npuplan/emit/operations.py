"""The plan's commands as the API's operations: each NPU stripe one ``NpuBlockOperation``, each
DMA one ``NpuDmaOperation``, with every address taken from the deploy layout."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import ModuleType
from typing import Any

import numpy as np

from npuplan.commands.layout import weight_buffer_name
from npuplan.commands.stream import input_rows
from npuplan.commands.types import Address, BufferKind, Box, DmaCommand, DmaPurpose, NpuStripeCommand, Operand
from npuplan.emit.features import edge_padded_tiles, feature_map, strided_view, transposed_ofm
from npuplan.emit.layout import DeployLayout
from npuplan.emit.mean import mean_rescale
from npuplan.emit.regions import FLASH_REGION
from npuplan.emit.upscale import aligned, aligned_commands
from npuplan.emit.vela import explicit_scaling
from npuplan.emit.weights import EncodedOp, reduced_scaling
from npuplan.errors import EmitError
from npuplan.hw.memory import MemArea
from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import (CLAMP_RANGES, Activation, BlockType, NpuOp, Padding, PoolKind, Resampling, Rounding,
                                element_type)
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType
from npuplan.lowering.deployable import is_copy
from npuplan.lowering.resize import RESIZE_TYPES
from npuplan.records import record

_CLAMPS = {a: r for a, r in CLAMP_RANGES.items() if a is not Activation.NONE}  # the clamps an output stage applies
_RESAMPLING = {Resampling.NONE: "NONE", Resampling.NEAREST: "NEAREST", Resampling.TRANSPOSE: "TRANSPOSE"}
_ELEMENTWISE = {"ADD": "ADD", "SUB": "SUB", "MUL": "MUL", "MAXIMUM": "MAX", "MINIMUM": "MIN", "ABS": "ABS",
                "SHR": "SHR", "SHL": "SHL", "CLZ": "CLZ"}
_ROUNDING = {Rounding.TFL: "TFL", Rounding.NATURAL: "NATURAL", Rounding.TRUNCATE: "TRUNCATE"}


@record(eq=False, slots=False)
class Context:
    """What translating a command needs: the API, the regions, the layout and the plan's records."""

    api: ModuleType
    regions: Mapping[MemArea, int]
    layout: DeployLayout
    ops: Mapping[str, NpuOp]
    encoded: Mapping[str, EncodedOp]
    nhcwb16: frozenset[str]  # buffers kept in NHCWB16
    block_configs: Mapping[str, tuple[int, int, int]]  # op -> OFM block (height, width, depth)
    striped: frozenset[str] = frozenset()  # ops whose OFM is produced in more than one row stripe


def _fm(ctx: Context, operand: Operand, tensor: Tensor, view: Shape4D,
        view_rows: tuple[int, int] | None = None, view_channels: tuple[int, int] | None = None) -> Any:
    name = operand.buffer.name
    if operand.buffer.kind is BufferKind.CONSTANT:  # read from its copy in the flash tensor
        flash = Address(MemArea.OFF_CHIP_FLASH, ctx.layout.constant_offsets[tensor.name], tensor.size_bytes)
        return feature_map(ctx.api, operand, tensor, view, nhcwb16=False, address=flash,
                           regions={MemArea.OFF_CHIP_FLASH: FLASH_REGION}, view_rows=view_rows)
    nhcwb16 = name in ctx.nhcwb16  # the placement's format (a rolling buffer of a map kept NHWC is NHWC)
    return feature_map(ctx.api, operand, tensor, view, nhcwb16=nhcwb16, address=ctx.layout.addresses[name],
                       regions=ctx.regions, view_rows=view_rows, view_channels=view_channels)


def _strided(ctx: Context, operand: Operand, tensor: Tensor, view: Shape4D, origin: Shape4D | None,
             step: tuple[int, int]) -> Any:
    """A strided view (``NpuOp.ifm_step``) of a whole map: the stream's box spans it in the
    tensor's coordinates, its channels from the view's origin."""
    o = origin or Shape4D(0, 0, 0, 0)
    if operand.buffer.name in ctx.nhcwb16:
        raise EmitError(operand.tensor, "a strided view of an NHCWB16 map")
    channels = (operand.box.start[3] - o.c, operand.box.end[3] - o.c)
    return strided_view(ctx.api, operand, tensor, view, origin=o, step=step, channels=channels,
                        address=ctx.layout.addresses[operand.buffer.name], regions=ctx.regions)


def _whole_ofm_view(op: NpuOp, command: NpuStripeCommand) -> bool:
    """Whether the stripe writes a reshaped OFM view whole (the stream records its box as the whole
    tensor, in the tensor's coordinates, not the view's)."""
    box, full, view = command.ofm.box, op.ofm.shape4d, op.ofm_shape
    reshaped = (view.h, view.w, view.c) != (full.h, full.w, full.c) and op.ofm_write_offset is None
    return reshaped and box.start[1:] == (0, 0, 0) and box.end[1:] == (full.h, full.w, full.c)


def ofm_rows(op: NpuOp, command: NpuStripeCommand) -> tuple[int, int]:
    """The OFM rows a stripe writes, in the op's own OFM view (for a copy into a box of its
    tensor, rows of that box: the stream's box is in the tensor's rows)."""
    if _whole_ofm_view(op, command) or op.ofm_step is not None:  # a strided view is written whole
        return 0, op.ofm_shape.h
    (a, b), shift = command.ofm.box.rows, op.ofm_write_offset.h if op.ofm_write_offset is not None else 0
    return a - shift, b - shift


def _ofm_channels(op: NpuOp, command: NpuStripeCommand) -> tuple[int, int]:
    """The OFM channels a stripe writes, in the op's own OFM view (a whole reshaped view: its
    weight slice's channels, all of them without one; a box written at an offset: less the offset)."""
    if not _whole_ofm_view(op, command):
        shift = op.ofm_write_offset.c if op.ofm_write_offset is not None else 0  # a box of a concatenation
        return command.ofm.box.start[3] - shift, command.ofm.box.end[3] - shift
    piece = command.weight_slice
    return (0, op.ofm_shape.c) if piece is None else (piece.depth_start, piece.depth_end)


def _ifm_view_channels(op: NpuOp, command: NpuStripeCommand) -> tuple[int, int] | None:
    """The channels of a reshaped IFM view a per-channel op (depthwise, pool) reads in a stripe of
    one weight slice: the slice's (the stream records the view as the whole tensor); None: all."""
    piece = command.weight_slice
    if piece is None or op.block_type not in (BlockType.DEPTHWISE, BlockType.POOLING):
        return None
    return piece.depth_start, piece.depth_end


def view_rows(op: NpuOp, command: NpuStripeCommand) -> tuple[int, int]:
    """The IFM rows (in the op's IFM view) this stripe's kernel reads: all of them for the whole OFM."""
    a, b = ofm_rows(op, command)
    return (0, op.ifm_shape.h) if (a, b) == (0, op.ofm_shape.h) else input_rows(op, op.ifm_shape, (a, b))


def _reshaped(op: NpuOp) -> bool:
    full = op.ifm.shape4d
    return (op.ifm_shape.h, op.ifm_shape.w, op.ifm_shape.c) != (full.h, full.w, full.c)


def _padding(api: ModuleType, op: NpuOp, command: NpuStripeCommand) -> Any:
    """This stripe's padding: the rows its kernel needs above/below the IFM box it reads."""
    k = op.kernel
    a, b = ofm_rows(op, command)
    lo, hi = command.ifm.box.rows if command.ifm is not None else (0, 0)
    if op.ifm_read_offset is not None:  # a slice read where it lies: its rows start at the offset
        lo, hi = lo - op.ifm_read_offset.h, hi - op.ifm_read_offset.h
    if command.ifm is not None and _reshaped(op):
        lo, hi = view_rows(op, command)
    if op.ifm_step is not None:  # a strided view, read whole
        lo, hi = 0, op.ifm_shape.h
    up = op.upscale  # the kernel's rows are rows of the upscaled IFM, the box's rows of the IFM
    need_lo = a * k.stride_y - k.padding.top
    need_hi = (b - 1) * k.stride_y + k.dilated_height - k.padding.top
    if lo * up != max(need_lo, 0) and not aligned(op, (a, b), lo):
        # the IFM base is the box's first row: it must be the first (upscaled) row the kernel reads
        raise EmitError(op.name, f"a stripe's IFM box starts at row {lo}{' (upscaled x2)' if up > 1 else ''}, "
                        f"its kernel reads from row {max(need_lo, 0)}")
    if command.ifm is not None and op.ifm_read_offset is None and not _reshaped(op) and (
            command.ifm.box.start[2] != 0 or command.ifm.box.end[2] != op.ifm.shape4d.w):
        raise EmitError(op.name, "a stripe reads part of the IFM's width (not emitted)")
    return api.NpuPadding(top=max(0, lo * up - need_lo), left=k.padding.left, bottom=max(0, need_hi - hi * up),
                          right=_right_padding(op))


def _right_padding(op: NpuOp) -> int:
    """The columns the kernel reads right of the IFM: the hardware takes the IFM's width to be the
    columns the OFM's kernel windows span less the left and right padding, so a right padding the
    windows never reach (a PAD or SAME padding a stride skips) must not be emitted, or every window
    would read one column further left (the same rule as the bottom padding's, per stripe)."""
    k = op.kernel
    need = (op.ofm_shape.w - 1) * k.stride_x + k.dilated_width - k.padding.left
    return min(k.padding.right, max(0, need - op.ifm_shape.w * op.upscale))


def _operation(api: ModuleType, op: NpuOp) -> Any:
    if op.block_type in (BlockType.CONV, BlockType.VECTOR_PRODUCT):
        return api.NpuConv2DOperation()
    if op.block_type is BlockType.DEPTHWISE:
        return api.NpuConvDepthWiseOperation()
    if op.block_type is BlockType.POOLING and op.pool in (PoolKind.MAX, PoolKind.AVERAGE):
        return api.NpuPoolingOperation(api.NpuPoolingOp.MAX if op.pool is PoolKind.MAX else api.NpuPoolingOp.AVERAGE)
    if op.block_type is BlockType.REDUCE_SUM:
        return api.NpuPoolingOperation(api.NpuPoolingOp.REDUCE_SUM)
    if op.block_type is BlockType.ELEMENTWISE and op.elementwise in _ELEMENTWISE:
        return api.NpuElementWiseOperation(getattr(api.NpuElementWiseOp, _ELEMENTWISE[op.elementwise]))
    raise EmitError(op.name, f"{op.op_type} ({op.block_type}) has no operation in the emitting interface")


def _activation(api: ModuleType, op: NpuOp, lut_index: int = 0) -> Any:
    if op.activation is Activation.NONE:
        return None
    if op.activation is Activation.LUT:  # the table is DMA'd to slot ``lut_index`` (``emit.luts``)
        act = api.NpuActivation(api.NpuActivationOp.TABLE_LOOKUP)
        act.lookup_table_index = lut_index
        return act
    if op.activation in (Activation.TANH, Activation.SIGMOID):  # the hardware's 16-bit functions
        tanh = op.activation is Activation.TANH
        act = api.NpuActivation(api.NpuActivationOp.TANH if tanh else api.NpuActivationOp.SIGMOID)
        act.min, act.max = (-1.0 if tanh else 0.0), 1.0  # the function's range, as Vela clamps it
        return act
    if op.activation not in _CLAMPS:
        raise EmitError(op.name, f"activation {op.activation} is not emitted")
    act = api.NpuActivation(api.NpuActivationOp.NONE_OR_RELU)
    act.min, act.max = _CLAMPS[op.activation]
    return act


def _upscale(api: ModuleType, op: NpuOp) -> Any:
    return getattr(api.NpuResamplingMode, _RESAMPLING[op.resampling])


def _weights(ctx: Context, op: NpuOp, command: NpuStripeCommand) -> tuple[list[Any], list[Any]]:
    """The weight and bias address ranges this stripe reads (its slice in flash or its buffer slot)."""
    if command.weight_slice is None:
        return [], []
    piece = command.weight_slice
    channels = _ofm_channels(op, command)
    if channels != (piece.depth_start, piece.depth_end):
        raise EmitError(op.name, f"a stripe writes OFM channels {channels[0]}..{channels[1]} "
                        f"with the weights of channels {piece.depth_start}..{piece.depth_end}")
    index = piece.index
    record = ctx.encoded[op.name].slices[index]
    key = (op.name, index)
    assert command.weights is not None
    if command.weights.kind is BufferKind.WEIGHT_BUFFER:
        buffer = ctx.layout.addresses[weight_buffer_name(op.name)]
        region, start = ctx.regions[buffer.area], buffer.offset + ctx.layout.slot_offsets[key]
    else:
        region, start = FLASH_REGION, ctx.layout.flash_offsets[key]
    rng = ctx.api.NpuAddressRange
    return ([rng(region=region, address=start + c.weight_offset, length=c.weight_bytes) for c in record.cores],
            [rng(region=region, address=start + c.scale_offset, length=c.scale_bytes) for c in record.cores])


def stripe_operations(ctx: Context, command: NpuStripeCommand, *, lut_index: int = 0) -> list[Any]:
    """The ``NpuBlockOperation`` of one NPU stripe (two when an upscaling op's stripe must be split,
    ``emit.upscale``); a LUT activation reads its table from slot ``lut_index``. An ``EmitError``
    names the TFLite operator to keep on the CPU instead (``emit.plan_and_emit``)."""
    op = ctx.ops[command.op]
    try:
        return [_stripe_operation(ctx, c, op, lut_index) for c in aligned_commands(op, command)]
    except EmitError as error:
        if error.cpu_fallback is not None:
            raise
        raise EmitError(op.name, error.reason if error.op in (None, op.name) else f"'{error.op}': {error.reason}",
                        cpu_fallback=op.source_index) from None


def _ofm(ctx: Context, command: NpuStripeCommand, op: NpuOp) -> Any:
    """The stripe's OFM: a transpose's written with swapped strides, a reshaped view's whole (its
    rows in stripes are not known: the stream records the whole tensor), else the box."""
    full = op.ofm.shape4d
    if op.ofm_step is not None:
        return _strided(ctx, command.ofm, op.ofm, op.ofm_shape, op.ofm_write_offset, op.ofm_step)
    if op.writes_transposed:
        if op.name in ctx.striped and (op.ofm_shape.h, op.ofm_shape.w) != (full.h, full.w):
            raise EmitError(op.name, "a transpose whose OFM is not square, written in row stripes")
        return transposed_ofm(ctx.api, command.ofm, op.ofm, op.ofm_shape,
                              address=ctx.layout.addresses[command.ofm.buffer.name], regions=ctx.regions)
    if op.ofm_write_offset is not None:  # a box of the tensor (a copy): the stream's box is in its coordinates
        return _fm(ctx, command.ofm, op.ofm, full)
    if (op.ofm_shape.h, op.ofm_shape.w, op.ofm_shape.c) != (full.h, full.w, full.c) and op.name in ctx.striped:
        raise EmitError(op.name, f"a reshaped OFM view {op.ofm_shape} of a {full} tensor written in row stripes")
    channels = _ofm_channels(op, command) if _whole_ofm_view(op, command) else None
    return _fm(ctx, command.ofm, op.ofm, op.ofm_shape, view_channels=channels)


_KERNEL_TYPES = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV"})


def _natural_rounding(op: NpuOp) -> bool:
    """Where Vela rounds the output stage NATURAL (to nearest, halves up): a
    resize's average (TFLite's reference), a 16-bit convolution or fully-connected layer scaled
    as TFLite's 64-bit path (``reduced_scaling``: not with 32-bit biases), and a
    1x1 average pool copying a slice into place (a CONCATENATION's, PAD's or PACK's copy)."""
    if op.tflite_type in RESIZE_TYPES:
        return not _raw_average(op)
    if op.tflite_type in _KERNEL_TYPES and op.ifm.dtype == DataType.INT16:
        return reduced_scaling(op)
    return op.tflite_type != "QUANTIZE" and is_copy(op)


_CLAMP_TYPES = frozenset({"RELU", "RELU6", "RELU_N1_TO_1", "PRELU"})


def _raw_average(op: NpuOp) -> bool:
    """An average of raw values, zero points left in, rounded TFL (halves away from zero), as
    TFLite's kernel computes it, which needs the input's quantization to be the output's: with the
    zero points taken out first, the hardware's rounding of the division would see other signs than
    TFLite's and differ by one (Vela sets both zero points 0 here too). Such averages: an
    AVERAGE_POOL_2D, and the unpadded window average ending an align_corners RESIZE_BILINEAR
    (``lowering.resize``: TFLite interpolates the raw values and rounds halves away from zero)."""
    aligned_bilinear = (op.tflite_type == "RESIZE_BILINEAR" and op.kernel.elements > 1
                        and op.kernel.padding == Padding())
    return ((op.tflite_type == "AVERAGE_POOL_2D" or aligned_bilinear) and op.pool is PoolKind.AVERAGE
            and op.activation is Activation.NONE
            and op.ifm.quant is not None and op.ofm.quant is not None and op.ifm.quant.scale[:1] == op.ofm.quant.scale[:1]
            and op.ifm.quant.zero_point[:1] == op.ofm.quant.zero_point[:1] and not is_copy(op))


def _raw_interpolation(op: NpuOp) -> bool:
    """A half-pixel bilinear resize's phase (``lowering.resize``): TFLite interpolates the raw
    values, zero points left in, so the hardware reads and writes them with zero points 0 (as Vela)."""
    return op.tflite_type == "RESIZE_BILINEAR" and op.block_type is BlockType.DEPTHWISE and op.edge_padding


def _pad_with_edges(api: ModuleType, npu: Any, op: NpuOp) -> None:
    """The kernel's padding as the IFM's edges read again (``NpuOp.edge_padding``): the tiles of
    the whole IFM re-based, no zero padding."""
    if (npu.ifm.tiles.height_0, npu.ifm.shape.height) != (op.ifm_shape.h, op.ifm_shape.h):
        raise EmitError(op.name, "an edge-padded IFM read in part")
    p = op.kernel.padding
    npu.ifm.tiles = edge_padded_tiles(api, npu.ifm, (p.top, p.left, p.bottom, p.right))
    npu.padding = api.NpuPadding(top=0, left=0, bottom=0, right=0)


def _rescaling_clamp(op: NpuOp) -> bool:
    """A standalone clamp (a PRELU with alpha 0 among them) run as a 1x1 average pool whose input
    and output scales differ (Vela gives it the explicit scale of their ratio)."""
    return (op.tflite_type in _CLAMP_TYPES and op.pool is PoolKind.AVERAGE and op.kernel.elements == 1
            and op.activation in _CLAMPS and op.ifm.quant is not None and op.ofm.quant is not None
            and op.ifm.quant.scale[:1] != op.ofm.quant.scale[:1])


def broadcast_first(op: NpuOp) -> bool:
    """Whether ``op``'s first operand is the broadcast one (the hardware broadcasts the second only):
    it runs with the operands reversed, as Vela runs it."""
    return (op.block_type is BlockType.ELEMENTWISE and op.ifm2 is not None and op.ifm2_shape is not None
            and op.ifm_shape != op.ofm_shape and op.ifm2_shape == op.ofm_shape and op.ifm_read_offset is None
            and op.ifm2_read_offset is None)


def _reversed(op: NpuOp, command: NpuStripeCommand) -> tuple[NpuOp, NpuStripeCommand]:
    """``op`` and ``command`` with the operands swapped; the broadcast operand's box is the part of
    it the stripe's OFM box reads (its rows and channels unless broadcast along them)."""
    assert op.ifm2 is not None and op.ifm2_shape is not None and command.ifm2 is not None and command.ifm is not None
    small, (a, b), (c0, c1) = op.ifm_shape, ofm_rows(op, command), _ofm_channels(op, command)
    rows = (a, b) if small.h == op.ofm_shape.h else (0, small.h)
    channels = (c0, c1) if small.c == op.ofm_shape.c else (0, small.c)
    box = Box((0, rows[0], 0, channels[0]), (1, rows[1], small.w, channels[1]))
    swapped = replace(op, ifm=op.ifm2, ifm_shape=op.ifm2_shape, ifm2=op.ifm, ifm2_shape=op.ifm_shape)
    return swapped, replace(command, ifm=command.ifm2, ifm2=replace(command.ifm, box=box))


def _stripe_operation(ctx: Context, command: NpuStripeCommand, op: NpuOp, lut_index: int) -> Any:
    api = ctx.api
    reverse = broadcast_first(op)
    if reverse:
        op, command = _reversed(op, command)
    npu = _operation(api, op)
    npu.reversed_operands = reverse or op.reversed_operands
    npu.name = op.name
    assert command.ifm is not None
    if op.strided_views and op.name in ctx.striped:
        raise EmitError(op.name, "a strided view written in row stripes")
    if op.ifm_step is not None:
        npu.ifm = _strided(ctx, command.ifm, op.ifm, op.ifm_shape, op.ifm_read_offset, op.ifm_step)
    elif op.ifm_read_offset is not None:  # a slice read where it lies: the box is in the tensor itself
        # (in rows of a view of it that keeps its rows: addressed in that view)
        npu.ifm = _fm(ctx, command.ifm, op.ifm, op.ifm_frame or op.ifm.shape4d,
                      view_channels=None if op.ifm_frame is None else _ifm_view_channels(op, command))
    elif _reshaped(op):
        npu.ifm = _fm(ctx, command.ifm, op.ifm, op.ifm_shape, view_rows(op, command), _ifm_view_channels(op, command))
    else:
        npu.ifm = _fm(ctx, command.ifm, op.ifm, op.ifm_shape)
    if command.ifm2 is not None and op.ifm2 is not None and op.ifm2_shape is not None:
        a, b = ofm_rows(op, command)
        rows2 = (a, b) if op.ifm2_shape.h == op.ofm_shape.h else (0, op.ifm2_shape.h)  # else broadcast in H
        view2 = op.ifm2.shape4d if op.ifm2_read_offset is not None else op.ifm2_shape
        npu.ifm2 = _fm(ctx, command.ifm2, op.ifm2, view2, rows2)
    scalar = scalar_ifm2(op)
    if scalar is not None:
        npu.ifm2_scalar = scalar
    npu.ofm = _ofm(ctx, command, op)
    if op.fixed_point is not None:
        _raw_operands(api, npu, op.fixed_point)
    elif op.activation is Activation.LUT:  # the output stage writes the table's input values
        npu.ofm.quantization = _stage_quantization(api, op, npu)
    elif _raw_average(op) or _raw_interpolation(op):
        for fm in (npu.ifm, npu.ofm):
            fm.quantization = api.NpuQuantization(scale_f32=fm.quantization.scale_f32, zero_point=0)
    elif op.elementwise == "ABS":  # the generator takes a unary op's output scale from the OFM's (as Vela sets it)
        ifm_q, ofm_q = npu.ifm.quantization, npu.ofm.quantization
        npu.ofm.quantization = api.NpuQuantization(scale_f32=ifm_q.scale_f32 / ofm_q.scale_f32,
                                                   zero_point=ofm_q.zero_point)
    k = op.kernel
    npu.kernel = api.NpuKernel(k.width, k.height, k.stride_x, k.stride_y, k.dilation_x, k.dilation_y)
    npu.padding = _padding(api, op, command)
    if op.edge_padding:
        _pad_with_edges(api, npu, op)
    npu.activation = _activation(api, op, lut_index)
    npu.ifm_upscale = _upscale(api, op)
    if _natural_rounding(op):
        npu.rounding_mode = api.NpuRoundingMode.NATURAL
    # a requantizing copy, or a standalone clamp rescaling (Vela's explicit scaling): scaled by the
    # scale ratio as one multiplier, as TFLite's kernels compute it
    npu.fused_quantize = op.tflite_type == "QUANTIZE" or _rescaling_clamp(op)
    h, w, d = ctx.block_configs[op.name]
    npu.block_config = api.NpuShape3D(height=h, width=w, depth=d)
    if op.block_type in (BlockType.CONV, BlockType.VECTOR_PRODUCT):
        enc = ctx.encoded[op.name]
        npu.block_traversal = (api.NpuBlockTraversal.PART_KERNEL_FIRST if enc.part_kernel_first
                               else api.NpuBlockTraversal.DEPTH_FIRST)
    npu.weights, npu.biases = _weights(ctx, op, command)
    rescale = mean_rescale(op, ctx.ops.values())
    if op.tflite_type == "PRELU" and op.elementwise == "ADD" and op.activation is not Activation.LUT:
        rescale = (1, 0)  # the negative and positive parts, each in the output's scale: summed unscaled (as Vela)
    if op.rescale is not None and op.block_type is BlockType.ELEMENTWISE:
        rescale = op.rescale
    if rescale is not None:
        npu.rescale = rescale
    if op.fixed_point is not None and op.block_type is BlockType.POOLING:  # scaled by 1, as Vela's
        npu.rescale = explicit_scaling(api, 1, 0)
    if op.fixed_point is not None and op.block_type is BlockType.REDUCE_SUM and op.rescale is not None:
        npu.rescale = explicit_scaling(api, *op.rescale)  # a BATCH_MATMUL's sums, scaled to its output
    return npu


def scalar_ifm2(op: NpuOp) -> float | None:
    """The real value of ``op``'s IFM2 when it is a constant scalar (a rank-0 tensor of at most 16
    bits) of a quantized elementwise operation: the hardware reads it from its IFM2_SCALAR
    register, not from memory, as Vela runs a TFLite scalar (and as ``hw.block_config`` sizes the
    shared buffer for it); None otherwise."""
    t = op.ifm2
    if (op.block_type is not BlockType.ELEMENTWISE or t is None or len(t.shape) != 0 or t.data is None
            or t.dtype.bits > 16 or op.fixed_point is not None or op.ifm2_read_offset is not None):
        return None
    value = int(np.asarray(t.data).reshape(-1)[0])
    if t.quant is None or not t.quant.scale:
        return float(value)
    return float((value - int(t.quant.zero_point[0])) * float(t.quant.scale[0]))


def _stage_quantization(api: ModuleType, op: NpuOp, npu: Any) -> Any:
    """What a LUT op's output stage scales to (``NpuOp.output_stage_quant``): a standalone LUT
    op's IFM quantization (no rescale), or the input of a LUT fused into ``op``."""
    stage = op.lut_input_quant
    if stage is None:
        return npu.ifm.quantization
    return api.NpuQuantization(scale_f32=float(stage.scale[0]), zero_point=int(stage.zero_point[0]))


def _raw_operands(api: ModuleType, npu: Any, rounding: Rounding) -> None:
    """A fixed-point step's operands as raw integers (``NpuOp.fixed_point``): no scale, so the
    output stage applies the explicit rescale or 1; each keeps its zero point but an int32 input,
    read with 0 (as Vela reads a 32-bit IFM); rounded as the step says."""
    for fm, is_input in ((npu.ifm, True), (getattr(npu, "ifm2", None), True), (npu.ofm, False)):
        if fm is None:
            continue
        zero_point = fm.quantization.zero_point if fm.quantization is not None else 0
        if is_input and fm.data_type == api.NpuDataType.INT32:
            zero_point = 0
        fm.quantization = api.NpuQuantization(scale_f32=None, zero_point=zero_point)
    npu.rounding_mode = getattr(api.NpuRoundingMode, _ROUNDING[rounding])


def dma_operation(ctx: Context, command: DmaCommand) -> Any:
    """The ``NpuDmaOperation`` of one DMA: a weight slice record, or a whole staged feature map."""
    rng = ctx.api.NpuAddressRange
    if command.purpose is DmaPurpose.WEIGHTS:
        assert command.weight_slice is not None
        key = (command.op, command.weight_slice.index)
        record = ctx.encoded[command.op].slices[command.weight_slice.index]
        dst = ctx.layout.addresses[command.dst.name]
        src = rng(region=FLASH_REGION, address=ctx.layout.flash_offsets[key], length=record.size_bytes)
        dest = rng(region=ctx.regions[dst.area], address=dst.offset + ctx.layout.slot_offsets[key],
                   length=record.size_bytes)
    else:
        s, d = ctx.layout.addresses[command.src.name], ctx.layout.addresses[command.dst.name]
        src = rng(region=ctx.regions[s.area], address=s.offset, length=command.size_bytes)
        dest = rng(region=ctx.regions[d.area], address=d.offset, length=command.size_bytes)
    dma = ctx.api.NpuDmaOperation(src, dest)
    dma.name = command.tensor
    return dma


def probe_ofm_view(op: NpuOp) -> Shape4D:
    """The OFM shape the block configs of ``op`` are found for: a copy's whole OFM tensor (as the
    plan and Vela size its blocks), else its own OFM."""
    return (op.ofm_frame or op.ofm.shape4d) if op.copies_into_box else op.ofm_shape


def probe_operation(api: ModuleType, op: NpuOp, *, part_kernel_first: bool) -> Any:
    """An operation with ``op``'s whole shapes, kernel, types and activation (no addresses): what
    ``npu_find_block_configs`` reads."""
    npu = _operation(api, op)
    views = [(op.ifm, op.ifm_shape), (op.ifm2, op.ifm2_shape), (op.ofm, probe_ofm_view(op))]
    fms: list[Any] = []
    for tensor, view in views:
        if tensor is None or view is None:
            fms.append(None)
            continue
        fm = api.NpuFeatureMap()
        fm.data_type = getattr(api.NpuDataType, str(element_type(tensor)).upper())
        fm.shape = api.NpuShape3D(height=view.h, width=view.w, depth=view.c)
        quant = tensor.quant
        fm.quantization = None if quant is None else api.NpuQuantization(scale_f32=float(quant.scale[0]),
                                                                         zero_point=int(quant.zero_point[0]))
        fms.append(fm)
    npu.ifm, npu.ifm2, npu.ofm = fms
    scalar = scalar_ifm2(op)
    if scalar is not None:
        npu.ifm2_scalar = scalar
    k = op.kernel
    npu.kernel = api.NpuKernel(k.width, k.height, k.stride_x, k.stride_y, k.dilation_x, k.dilation_y)
    npu.activation = _activation(api, op)
    npu.ifm_upscale = _upscale(api, op)
    if op.block_type in (BlockType.CONV, BlockType.VECTOR_PRODUCT):
        npu.block_traversal = (api.NpuBlockTraversal.PART_KERNEL_FIRST if part_kernel_first
                               else api.NpuBlockTraversal.DEPTH_FIRST)
    return npu
