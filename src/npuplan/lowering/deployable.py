"""Which lowered operators the deploy path (``npuplan plan --emit-tflite``) can emit exactly.

The emitter translates each NPU stripe into the register command stream through Vela's external
API; that needs every number the hardware uses (weights, biases, scales, clamps). The operators
below are those whose NPU operations carry all of them in the lowered graph. Any other operator,
and any operator whose NPU operations use a feature not listed, stays on the CPU in a deployable
plan, with the reason. A LUT activation is fused into a convolution or binary elementwise
producer as Vela fuses it (the producer's output stage writes the table's input quantization,
``NpuOp.lut_input_quant``); otherwise it runs as its own operation (an ADD of zero whose output
goes through the table the lowering computed, ``NpuOp.lut``), and one without a table stays on
the CPU.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor
from npuplan.ir.lowered import Activation, BlockType, CpuOp, LoweredOp, NpuOp, Resampling, element_type
from npuplan.ir.types import DataType
from npuplan.lowering.broadcasts import broadcast_constant
from npuplan.lowering.grouped import conv_groups, has_depth_multiplier
from npuplan.lowering.lut_tables import LUT_ACTIVATIONS, lut_reason
from npuplan.lowering.memory_ops import PAD_TYPES
from npuplan.lowering.operands import swaps_operands

DEPLOYABLE_TYPES = frozenset({
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D", "MAX_POOL_2D", "ADD", "SUB", "MUL",
    "CONCATENATION", "PAD", "RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR", "TRANSPOSE_CONV", "TRANSPOSE",
    *LUT_ACTIVATIONS, "RELU", "RELU6", "RELU_N1_TO_1",  # a clamp that could not be fused: a 1x1 average pool
    "MEAN", "ABS", "SLICE", "STRIDED_SLICE", "SPLIT", "SPLIT_V", "UNPACK", "PACK", "QUANTIZE", "MAXIMUM", "MINIMUM",
    "REDUCE_MAX", "PRELU", "SQUARED_DIFFERENCE", "RESHAPE", "SQUEEZE", "EXPAND_DIMS",  # reshapes left: copies
    "SOFTMAX", "REDUCE_MIN", "MIRROR_PAD", "PADV2", "ARG_MAX", "BATCH_MATMUL", "TILE",
})
# Types whose lowering is several NPU operations the emitter expresses one by one (a resize by 4
# or 8 is a chain of x2 upscaling pools; a REDUCE_MAX over width and depth, two max pools; a TRANSPOSE
# of three merged axes, two 1x1 pools).
_MULTI_OP_TYPES = frozenset({"CONCATENATION", "PAD", "RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR", "MEAN", "SPLIT",
                             "SPLIT_V", "UNPACK", "PACK", "PRELU", "SQUARED_DIFFERENCE", "SOFTMAX", "REDUCE_MAX",
                             "REDUCE_MIN", "MIRROR_PAD", "PADV2", "TRANSPOSE", "ARG_MAX",
                             "BATCH_MATMUL", "TILE"})
_COPY_TYPES = frozenset({"CONCATENATION", "PACK", "MIRROR_PAD", *PAD_TYPES})
# Activations the output stage applies as a clamp (no table needed).
CLAMP_ACTIVATIONS = frozenset({Activation.NONE, Activation.RELU, Activation.RELU6, Activation.RELU_N1_TO_1})
# Activations the output stage computes: a lookup table, or the hardware's 16-bit tanh and sigmoid.
_FUNCTIONS = frozenset({Activation.LUT, Activation.TANH, Activation.SIGMOID})
# Standalone activation operators fused into their producer in a deployable plan.
FUSABLE_STANDALONE = frozenset({"RELU", "RELU6", "RELU_N1_TO_1", *LUT_ACTIVATIONS})
_FM_TYPES = frozenset({DataType.INT8, DataType.UINT8, DataType.INT16})
# TFLite operators whose int32 form is plain integer arithmetic (quantization ignored, wrapping)
_INT32_ARITHMETIC = frozenset({"ADD", "SUB", "MUL"})
# Vela operator names (NpuOp.op_type) each deployable TFLite type may lower to.
_OP_TYPES = frozenset({"Conv2DBias", "DepthwiseConv2DBias", "FullyConnected", "AvgPool", "MaxPool", "Add", "Sub", "Mul",
                       "Conv2DBackpropInputSwitchedBias", "Abs", "Maximum", "Minimum"})
# Operations only a fixed-point decomposition (a softmax's, ``NpuOp.fixed_point``) runs.
_FIXED_POINT_OP_TYPES = frozenset({"ReduceSum", "SHR", "SHL", "CLZ"})
# The IFM resampling each NPU operation may use: nearest x2 for the average pools of a resize (or
# their depthwise form), transpose x2 (zeros inserted) for the convolution of a TRANSPOSE_CONV.
_RESAMPLING = {"AvgPool": Resampling.NEAREST, "DepthwiseConv2DBias": Resampling.NEAREST,
               "Conv2DBackpropInputSwitchedBias": Resampling.TRANSPOSE}


def is_copy(op: NpuOp) -> bool:
    """One input of a CONCATENATION, or a PAD's input or fill, copied into its box of the output
    (a 1x1 average pool)."""
    offset = op.ofm_write_offset
    return (op.tflite_type in _COPY_TYPES and op.op_type == "AvgPool" and op.kernel.elements == 1
            and op.ofm_write_shape is not None and offset is not None and offset.n == 0)


def _slice_write(op: NpuOp) -> bool:
    """A producer writing its whole OFM straight into its slice of a concatenation
    (``memory_ops.fuse_concat_writes``): a box of the concatenated tensor at a non-batch offset."""
    offset = op.ofm_write_offset
    return (offset is not None and offset.n == 0 and op.ofm_write_shape == op.ofm_shape
            and op.ofm_frame is None and not op.writes_transposed)


def _wide(op: NpuOp, tensor: Tensor) -> bool:
    """A MEAN's int32 sums (its depthwise sums' OFM, the Mul's operands) or a SQUARED_DIFFERENCE's
    int32 steps, which Vela's decompositions and the emitter carry in 32 bits: scale 1 and zero
    point 0, or no quantization (raw values, no scaling) for a SQUARED_DIFFERENCE's; any int32
    value of a fixed-point decomposition (a softmax's raw steps); an ARG_MAX's int32 or int64
    indices (its output, unquantized: the widening cast writes raw integers, an int64's as its
    32-bit halves)."""
    if op.tflite_type == "ARG_MAX" and tensor is op.ofm and tensor.quant is None:
        return tensor.dtype in (DataType.INT32, DataType.INT64)
    if tensor.dtype != DataType.INT32:
        return False
    if op.fixed_point is not None:
        return True
    if op.tflite_type not in ("MEAN", "SQUARED_DIFFERENCE"):
        return False
    if tensor.quant is None:
        return op.tflite_type == "SQUARED_DIFFERENCE"
    return tuple(tensor.quant.scale[:1]) == (1.0,) and tuple(tensor.quant.zero_point[:1]) == (0,)


def _streamed_constant(op: NpuOp) -> bool:
    """Whether ``op``'s constant first operand is one the hardware reads: a scalar or a map of the
    output's shape the lowering swaps to the second place (``swaps_operands``), or, for an
    elementwise op whose feature map is broadcast (a resize from one pixel, an ADD of zeros), a map
    of the output's shape read from the flash as a PAD's fill is (the hardware broadcasts the
    second operand only)."""
    if swaps_operands(op):
        return True
    return (op.block_type is BlockType.ELEMENTWISE and op.ifm2 is not None and not op.ifm2.is_constant
            and op.ifm_shape == op.ofm_shape and op.ifm.shape4d == op.ofm_shape)


def npu_op_reason(op: NpuOp) -> str | None:
    """Why the emitter cannot express ``op`` exactly, or None when it can."""
    if op.op_type not in _OP_TYPES and not (op.fixed_point is not None and op.op_type in _FIXED_POINT_OP_TYPES):
        return f"its NPU operation {op.op_type} is not emitted yet"
    if op.activation is Activation.LUT and op.lut is None and op.tflite_type == "SOFTMAX":
        return ("its exp table is undefined for beta x input scale below 2**-27 (the table's fixed-point rescale "
                "would shift left by a negative amount)")
    if op.activation is Activation.LUT and op.lut is None:
        return lut_reason(op.tflite_type, op.ifm.dtype) or f"{op.tflite_type}'s lookup table could not be computed"
    if op.activation not in CLAMP_ACTIVATIONS and op.activation not in _FUNCTIONS:
        return f"activation {op.activation} is not emitted (only clamps, lookup tables and 16-bit tanh/sigmoid)"
    if op.activation in (Activation.TANH, Activation.SIGMOID) and op.ifm.dtype != DataType.INT16:
        return f"an {op.ifm.dtype} {op.activation} without a lookup table is not emitted"
    if op.resampling is not Resampling.NONE and _RESAMPLING.get(op.op_type) is not op.resampling:
        return f"{op.resampling} IFM resampling of {op.op_type} is not emitted"
    if (op.ofm_write_offset is not None or op.ofm_write_shape is not None) and not (
            is_copy(op) or _slice_write(op) or op.ofm_step is not None):
        return "writes at an offset inside a tensor (not emitted yet, but for CONCATENATION's, PAD's and PACK's copies)"
    for tensor, view in ((op.ifm, op.ifm_shape), (op.ofm, op.ofm_write_shape or op.ofm_shape)):
        if view.elements * element_type(tensor).size_bytes > tensor.size_bytes and not (
                tensor is op.ifm and op.reads_at_offset):
            # the lowering worked out a shape the file does not declare: the declared shapes of a
            # network exported with dynamic dimensions are placeholders, and TFLite Micro
            # allocates and runs the declared ones
            return (f"it {'reads' if tensor is op.ifm else 'writes'} {view} values of '{tensor.name}', declared "
                    f"{list(tensor.shape)} (a dynamic shape TFLite Micro does not run)")
    fms = [t for t in (op.ifm, op.ifm2, op.ofm) if t is not None]
    if op.fixed_point is None and op.tflite_type in _INT32_ARITHMETIC and any(t.dtype == DataType.INT32 for t in fms):
        return (f"an int32 {op.tflite_type}: TFLite computes it unscaled and wraps on overflow, the NPU "
                "saturates (Vela's default core runs it so; the file keeps TFLite's result)")
    if any(t.dtype not in _FM_TYPES and not _wide(op, t) for t in fms):
        return "only 8-bit feature maps are emitted yet"
    if any((t.quant is None or not t.quant.is_valid) and not _wide(op, t) for t in fms):
        return "a feature map has no quantization"
    if any(len(t.quant.scale) > 1 for t in (*fms, op.ifm2) if t is not None and t.quant is not None) and (
            op.block_type is not BlockType.CONV and op.block_type is not BlockType.DEPTHWISE
            and op.block_type is not BlockType.VECTOR_PRODUCT):
        return "an operand quantized per channel is not emitted (the output stage scales per tensor)"
    if op.elementwise in ("MAXIMUM", "MINIMUM") and any(
            t is not None and t.quant is not None and op.ofm.quant is not None
            and tuple(t.quant.scale[:1]) != tuple(op.ofm.quant.scale[:1]) for t in (op.ifm, op.ifm2)):
        # the hardware compares the operands less their zero points, unscaled
        return "a MAXIMUM/MINIMUM rescaling its operands (the hardware compares them unscaled) is not emitted"
    # a PAD's fill and a concatenated constant (a class token) are copied from the flash; so is a
    # fixed-point step's constant IFM read (as Vela reads it)
    if op.ifm.is_constant and not (op.tflite_type in _COPY_TYPES and is_copy(op)) and op.fixed_point is None:
        if op.block_type is not BlockType.ELEMENTWISE:
            return "its input feature map is a constant (it computes a constant; not emitted)"
        if not _streamed_constant(op):
            return "a constant first operand the hardware cannot take as the second is not emitted"
    constant, other = (op.ifm, op.ifm2) if op.ifm.is_constant else (op.ifm2, op.ifm)
    if constant is not None and other is not None and constant.is_constant and constant.dtype != other.dtype:
        return f"a {constant.dtype} constant operand of a {other.dtype} operation is not emitted"
    if op.ifm2 is not None and op.ifm_shape != op.ofm_shape and (op.ifm2_shape != op.ofm_shape or op.reads_at_offset):
        return "both operands broadcast (the hardware broadcasts the second only) is not emitted"
    if op.ifm_shape.n != 1 or op.ofm_shape.n != 1:
        return "batches above 1 are not emitted yet"
    if op.weights is not None and (op.weight_tensor is None or op.weight_tensor.quant is None):
        return "weights without quantization"
    if op.block_type is BlockType.DEPTHWISE and op.ifm_shape.c != op.ofm_shape.c:
        return "a depth multiplier above 1 is not emitted yet"
    if op.block_type in (BlockType.CONV, BlockType.VECTOR_PRODUCT) and op.weights is not None and (
            op.weights.shape[-1] != op.ifm_shape.c):
        return "a grouped convolution is not emitted yet"
    return None


# Why the larger decompositions are not emitted: each is expressible as the API's operations (Vela's
# own are), but npuplan's lowering models their geometry and costs, not every number they run with.
_NOT_EMITTED = {
    "UNIDIRECTIONAL_SEQUENCE_LSTM": ("UNIDIRECTIONAL_SEQUENCE_LSTM is not emitted yet: its lowering lacks Vela's "
                                     "explicit gate scalings and clamps, and its state updates write at offsets "
                                     "the emitter does not express"),
}


def _by_groups(op: Op) -> bool:
    """A convolution lowered to one convolution per group of channels (``lowering.grouped``), each
    reading its input channels and writing its output channels at their depth offsets."""
    return conv_groups(op) > 1 or has_depth_multiplier(op)


def deployable(op: Op, lowered: tuple[LoweredOp, ...]) -> tuple[LoweredOp, ...]:
    """``lowered`` (the lowering of ``op``) if the emitter can express it, else ``op`` as a CPU op
    with the reason."""
    if all(isinstance(o, CpuOp) for o in lowered):
        return lowered
    reason: str | None = None
    if op.type not in DEPLOYABLE_TYPES:
        reason = _NOT_EMITTED.get(op.type, f"{op.type} is not emitted by the deploy path yet")
    elif len(lowered) != 1 and op.type not in _MULTI_OP_TYPES and not _by_groups(op) and not all(
            isinstance(o, NpuOp) and o.strided_views for o in lowered):  # a dilated kernel's phases
        reason = f"{op.type} lowers to {len(lowered)} NPU operations (not emitted yet)"
    else:
        npu = [o for o in lowered if isinstance(o, NpuOp)]
        reason = next((r for r in map(npu_op_reason, npu) if r is not None), None)
    if reason is None:
        return lowered
    return (CpuOp(op, f"kept on the CPU for deployment: {reason}"),)


# CPU operators that compute the same values on any shape with the same last axis (they work
# element by element, or along the last axis only).
_RESHAPE_INVARIANT = frozenset({
    "SOFTMAX", "LOGISTIC", "TANH", "RELU", "RELU6", "RELU_N1_TO_1", "HARD_SWISH", "QUANTIZE", "DEQUANTIZE",
    "LEAKY_RELU", "EXP", "ABS", "RSQRT", "LOG", "GELU",
})


def _twin_inputs(op: Op, source: Graph) -> list[tuple[Tensor | None, Tensor | None]] | None:
    """The (source, rewritten) input pairs of ``op`` and the source operator with its outputs,
    type and options, or None when there is none (``op`` is not a source operator rewired)."""
    twin = next((s for s in source.ops if s.outputs == op.outputs), None)
    if twin is None or twin.type != op.type or dict(twin.options) != dict(op.options):
        return None
    if len(twin.inputs) != len(op.inputs):
        return None
    return [(a, b) for a, b in zip(twin.inputs, op.inputs) if a is not b]


def folded_inputs_only(op: Op, source: Graph) -> bool:
    """Whether ``op`` is a source operator whose only rewrite is constant folding: an input the
    source computed (a SHAPE, a PACK of sizes...) is now its constant value, of the same type and
    shape. Written with that constant, the CPU runs it as the source ran it."""
    pairs = _twin_inputs(op, source)
    return pairs is not None and all(
        a is not None and b is not None and b.is_constant and a.dtype == b.dtype
        and (tuple(a.shape) == tuple(b.shape) or _broadcast_of(a, b)) for a, b in pairs)


def _broadcast_of(a: Tensor, b: Tensor) -> bool:
    """Whether constant ``b`` is constant ``a`` written out at ``b``'s shape (``lowering.broadcasts``):
    the CPU computes the same with either."""
    if not a.is_constant or a.quant != b.quant or b.data is None:
        return False
    wide = broadcast_constant(a, tuple(b.shape))
    return wide is not None and wide.data is not None and np.array_equal(wide.data, b.data)


def reshape_invariant(op: Op, source: Graph) -> bool:
    """Whether ``op`` is a source operator whose inputs a removed no-op reshape rewired, and which
    computes the same on the rewired inputs (same type and options, inputs of the same element
    type, quantization, size and last axis): it can then run on the CPU as it is."""
    if op.type not in _RESHAPE_INVARIANT:
        return False
    pairs = _twin_inputs(op, source)
    return pairs is not None and all(
        a is not None and b is not None and a.dtype == b.dtype and a.quant == b.quant and a.elements == b.elements
        and bool(a.shape) and bool(b.shape) and a.shape[-1] == b.shape[-1] for a, b in pairs)


def gather_split_writes(ops: Sequence[LoweredOp]) -> tuple[LoweredOp, ...]:
    """``ops`` with the NPU operations writing one tensor (a CONCATENATION's or PAD's copies) run
    together when a CPU operator falls between them: the earlier writers move to just before the
    last one. A deployable file replaces each NPU partition by one operator whose outputs are its
    own; a tensor written in two partitions would be the output of two operators (and the first
    would hand on a tensor it has not completely written). Moving a copy later keeps every
    dependency: its input exists already, and nothing reads the tensor before its last writer."""
    writers: dict[str, list[int]] = {}
    for k, op in enumerate(ops):
        if isinstance(op, NpuOp):
            writers.setdefault(op.ofm.name, []).append(k)
    moved: dict[int, list[int]] = {}  # last writer's position -> the earlier writers to run before it
    for positions in writers.values():
        first, last = positions[0], positions[-1]
        if len(positions) > 1 and any(isinstance(ops[k], CpuOp) for k in range(first, last)):
            moved[last] = positions[:-1]
    if not moved:
        return tuple(ops)
    skip = {k for earlier in moved.values() for k in earlier}
    out: list[LoweredOp] = []
    for k, op in enumerate(ops):
        out.extend(ops[j] for j in moved.get(k, ()))
        if k not in skip:
            out.append(op)
    return tuple(out)
