"""NPU support checks: why a TFLite operator cannot run on the NPU, in Vela 5.2.0's words.

``unsupported_reason(op)`` returns ``None`` when the op can run on the NPU, else a one-line,
human-readable reason (the constraint text Vela prints, with the offending detail). The checks
mirror Vela's semantic checks (graph-level validity) and its NPU constraints (hardware limits);
only the operator types npuplan knows how to lower are accepted.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.model_checks import operand_count_problem
from npuplan.ir.quantized import signed_channel_rows
from npuplan.ir.types import DataType
from npuplan.lowering.argmax import argmax_reason
from npuplan.lowering.batch_matmul import batch_matmul_reason
from npuplan.lowering.decompose import prelu_reason, squared_difference_reason
from npuplan.lowering.grouped import conv_groups
from npuplan.lowering.lstm import LSTM, lstm_reason
from npuplan.lowering.memory_ops import MEMORY_TYPES, mirror_pad_reason
from npuplan.lowering.resize import RESIZE_TYPES, resize_reason, transpose_conv_reason
from npuplan.lowering.slices import SLICE_TYPES, slice_reason
from npuplan.lowering.strided_conv import fold_plan
from npuplan.lowering.tiles import tile_reason
from npuplan.lowering.transposes import transpose_reason

CONV_TYPES = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D"})
POOL_TYPES = frozenset({"AVERAGE_POOL_2D", "MAX_POOL_2D"})
BINARY_ELEMENTWISE = {"ADD": "Add", "SUB": "Sub", "MUL": "Mul", "MAXIMUM": "Maximum", "MINIMUM": "Minimum"}
# Table-lookup unary operators (besides TANH/LOGISTIC): each becomes an Add(x, 0) with its LUT.
LUT_TYPES = frozenset({"HARD_SWISH", "LEAKY_RELU", "EXP", "RSQRT", "GELU", "LOG"})
ACTIVATION_TYPES = frozenset({"RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "TANH", "LOGISTIC"}) | LUT_TYPES
# Operator types npuplan lowers to NPU operations.
LOWERED_TYPES = (
    CONV_TYPES
    | POOL_TYPES
    | frozenset(BINARY_ELEMENTWISE)
    | ACTIVATION_TYPES
    | MEMORY_TYPES
    | frozenset({"FULLY_CONNECTED", "SOFTMAX", "MEAN", "PAD", "CONCATENATION", "TRANSPOSE_CONV", "ABS", "PRELU",
                 "SQUARED_DIFFERENCE", "TRANSPOSE", "MIRROR_PAD", "PADV2", "QUANTIZE", "ARG_MAX", "SUM",
                 "REDUCE_MAX", "REDUCE_MIN", "BATCH_MATMUL", "TILE", LSTM})
    | RESIZE_TYPES
    | SLICE_TYPES
)

# Operators that only move bytes, whose 5-D maps run as their 4-D views (1 x A x B x W x C: 1 x A*B x W x C)
_FIVE_D_VIEWS = MEMORY_TYPES | {"TILE", "PACK"}
_OP_DTYPES = (DataType.UINT8, DataType.INT8, DataType.INT16, DataType.INT32)
# Not MAXIMUM/MINIMUM: neither Vela core runs an int32 one on the NPU (legacy: "int32 only for ADD, ...";
# default: "32-bit feature-maps are not supported"), nor is its arithmetic shown to be TFLite's.
_INT32_OK = frozenset({"ADD", "SUB", "MUL", "MEAN", "RESHAPE", "SQUEEZE", "EXPAND_DIMS",
                       "CONCATENATION", "PAD", "TRANSPOSE", "ABS", "MIRROR_PAD",
                       "ARG_MAX"})
_TENS_DIM_RANGE = (1, 65535)
_STRIDE_RANGE = (1, 3)
_DILATED_HEIGHT_RANGE = (1, 64)
_DILATED_PRODUCT_RANGE = (1, 64 * 64)
_WEIGHTS_LIMIT = 127 * 65536
_FILTER_RANGE = (1, 8)
_FILTER_HEIGHT_RANGE = (1, 256)
_FILTER_PRODUCT_RANGE = (1, 256 * 256)
_FUSED = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1", "TANH")
_MEAN_KERNEL_PRODUCT = {DataType.INT8: 2**24, DataType.UINT8: 2**23, DataType.INT16: 2**16}

Check = Callable[[Op], "str | None"]


def _tensors(op: Op) -> list[Tensor]:
    return [t for t in (*op.inputs, *op.outputs) if t is not None]


def _feature_maps(op: Op) -> list[Tensor]:
    """The non-constant tensors of an op, plus its weights for weighted ops."""
    fms = [t for t in op.inputs if t is not None and not t.is_constant] + list(op.outputs)
    if op.type in CONV_TYPES or op.type == "FULLY_CONNECTED":
        fms += [t for t in op.inputs[1:2] if t is not None]
    return fms


# ---------------------------------------------------------------- generic (semantic) checks
def _arity(op: Op) -> str | None:
    """The operand counts of TFLite (a graph built in code may break them; a read model cannot)."""
    return operand_count_problem(op)


def _no_dynamic(op: Op) -> str | None:
    bad = [t.name for t in _tensors(op) if t.shape == () and not t.is_constant]
    if bad:
        return f"Input(s) and Output tensors must not be dynamic: {', '.join(bad)}"
    return None


def _scales(op: Op) -> str | None:
    """A quantized tensor of scale 0 (an exporter's all-zero tensor, e.g. a FILL of zeros) has no
    rescaling the hardware can apply."""
    bad = [t.name for t in _tensors(op) if t.quant is not None and t.dtype != DataType.INT32 and t.quant.scale
           and any(s == 0 for s in t.quant.scale) and not (t.is_constant and t in op.inputs[1:])]
    return f"Quantization scales must not be 0: {', '.join(bad)}" if bad else None


def _max_4d(op: Op) -> str | None:
    limit = 5 if op.type in _FIVE_D_VIEWS else 4  # a 5-D map is seen as 4-D (``Shape4D.of``)
    bad = [t.name for t in _tensors(op) if len(t.shape) > limit]
    return f"Input(s) and Output tensors must not be greater than 4D: {', '.join(bad)}" if bad else None


def _dtypes(op: Op) -> str | None:
    for t in _feature_maps(op):
        if op.type == "ARG_MAX" and t in op.outputs and t.dtype == DataType.INT64:
            continue  # its index output may be int64 (copied into place as two 32-bit halves)
        if t.dtype not in _OP_DTYPES:
            return f"Tensors must be of type: int16, int32, int8, uint8 ('{t.name}' is {t.dtype})"
        if t.dtype == DataType.INT32 and op.type not in _INT32_OK:
            return f"Tensors which are int32 are only valid for elementwise ops ('{t.name}' is int32)"
    return None


def _quantized(op: Op) -> str | None:
    if op.type in MEMORY_TYPES:
        return None
    for t in _feature_maps(op):
        if t.dtype in (DataType.INT8, DataType.UINT8, DataType.INT16) and (t.quant is None or not t.quant.is_valid):
            return f"Input(s), Output and Weight tensors must have quantization parameters ('{t.name}' has none)"
        if t.quant is not None and not all(math.isfinite(s) for s in t.quant.scale):
            return f"Input(s), Output and Weight tensors with quantization scales must be finite ('{t.name}')"
    return None


def _dims(op: Op) -> str | None:
    for t in _feature_maps(op):
        if t.shape and any(not (_TENS_DIM_RANGE[0] <= d <= _TENS_DIM_RANGE[1]) for d in t.shape):
            return f"Tensor dimensions must be in the range [1, 65535] ('{t.name}' is {list(t.shape)})"
    return None


def _batch(op: Op) -> str | None:
    if op.type in CONV_TYPES | POOL_TYPES and op.inputs and op.inputs[0] is not None:
        shape = op.inputs[0].shape
        if len(shape) == 4 and shape[0] != 1:
            return f"IFM Tensor batch size must be 1 (it is {shape[0]})"
    return None


def _fused_activation(op: Op) -> str | None:
    faf = op.options.get("fused_activation_function", "NONE")
    if faf not in _FUSED:
        return f"The fused activation function (if present) must be one of type: {', '.join(_FUSED)} (it is {faf})"
    return None


# ---------------------------------------------------------------- per operator type
def _width_stride_folds(op: Op) -> bool:
    """A CONV_2D whose width stride above 3 the lowering folds into depth (``strided_conv``)."""
    o, ifm, weights = op.options, op.inputs[0], op.inputs[1]
    sh = int(o.get("stride_h", 1))
    if op.type != "CONV_2D" or ifm is None or weights is None or len(weights.shape) != 4:
        return False
    if not _STRIDE_RANGE[0] <= sh <= _STRIDE_RANGE[1] or conv_groups(op) != 1:
        return False
    plan = fold_plan(ifm.shape4d.w, ifm.shape4d.c, weights.shape[2], int(o.get("stride_w", 1)),
                     padding_mode=str(o.get("padding", "VALID")) if "explicit_padding" not in o else "EXPLICIT",
                     dilation_x=int(o.get("dilation_w_factor", 1)), first=False)
    return plan is not None


def _conv(op: Op) -> str | None:
    o = op.options
    sh, sw = int(o.get("stride_h", 1)), int(o.get("stride_w", 1))
    if not all(_STRIDE_RANGE[0] <= s <= _STRIDE_RANGE[1] for s in (sh, sw)) and not _width_stride_folds(op):
        return f"Stride values for both width and height must be in the range [1, 3] (they are {sh}x{sw})"
    weights = op.inputs[1]
    if weights is None or not weights.is_constant:
        return "Weight tensor must be constant"
    if weights.dtype not in (DataType.INT8, DataType.UINT8):
        return f"Weight tensor must be 8-bit (it is {weights.dtype})"
    if len(weights.shape) != 4:
        return f"Weight tensor must be 4D (it is {list(weights.shape)})"
    ifm, ofm = op.inputs[0], op.outputs[0]
    assert ifm is not None
    out_channels = weights.shape[3] if op.type == "DEPTHWISE_CONV_2D" else weights.shape[0]
    if out_channels != ofm.shape4d.c:
        return f"Weight tensor must have the OFM's {ofm.shape4d.c} output channels (it is {list(weights.shape)})"
    if op.type == "CONV_2D" and (weights.shape[3] == 0 or ifm.shape4d.c % weights.shape[3]):
        return f"Weight tensor input channels must divide the IFM's {ifm.shape4d.c} (it is {list(weights.shape)})"
    _, kh, kw, _ = weights.shape
    dh, dw = int(o.get("dilation_h_factor", 1)), int(o.get("dilation_w_factor", 1))
    dkh, dkw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    if not (_DILATED_HEIGHT_RANGE[0] <= dkh <= _DILATED_HEIGHT_RANGE[1]):
        return f"Dilated kernel height must be in the range [1, 64] (it is {dkh})"
    if not (_DILATED_PRODUCT_RANGE[0] <= dkh * dkw <= _DILATED_PRODUCT_RANGE[1]):
        return f"Product of dilated kernel width and height must be in the range [1, 4096] (it is {dkh * dkw})"
    return _weight_sum(op) or _bias(op) or (_depth_multiplier(op) if op.type == "DEPTHWISE_CONV_2D" else _groups(op))


def _groups(op: Op) -> str | None:
    groups = conv_groups(op)  # weights whose input depth does not divide the IFM's are checked before
    depth = op.outputs[0].shape[-1]
    if groups > 1 and depth % groups:
        return f"OFM depth must be a multiple of the groups (OFM depth {depth}, {groups} groups)"
    return None


def _weight_sum(op: Op) -> str | None:
    weights = op.inputs[1]
    assert weights is not None and weights.data is not None
    zp = weights.quant.zero_point if weights.quant and weights.quant.zero_point else (0,)
    # Sum of absolute (zero-point corrected) weights per output channel.
    rows = signed_channel_rows(weights.data, zp, -1 if op.type == "DEPTHWISE_CONV_2D" else 0)
    worst = int(np.abs(rows, out=rows).sum(axis=1, dtype=np.int64).max()) if rows.size else 0
    if worst > _WEIGHTS_LIMIT:
        return f"The sum of the weights cannot exceed {_WEIGHTS_LIMIT} (it is {worst})"
    return None


def _bias(op: Op) -> str | None:
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    if bias is None:
        return None
    if len(bias.shape) != 1:
        return f"Optional Bias tensor must be of shape: 1D (it is {list(bias.shape)})"
    if bias.dtype not in (DataType.INT32, DataType.INT64):
        return f"Optional Bias tensor must be of type: int32, int64 (it is {bias.dtype})"
    if bias.dtype == DataType.INT64 and bias.data is not None and bias.data.size:
        if int(abs(bias.data.astype("int64")).max()) >= 2**39:
            return "Optional Bias tensor values must fit within 40-bits"
    return None


def _depth_multiplier(op: Op) -> str | None:
    mult = int(op.options.get("depth_multiplier", 1))
    ifm, ofm = op.inputs[0], op.outputs[0]
    if mult > 1 and ifm is not None and ofm.shape[-1] != ifm.shape[-1] * mult:
        return ("For depth multipliers > 1, OFM channels must be IFM channels times the depth multiplier "
                f"(IFM channels {ifm.shape[-1]}, OFM channels {ofm.shape[-1]}, multiplier {mult})")
    return None


def _pool(op: Op) -> str | None:
    o = op.options
    sh, sw = int(o.get("stride_h", 1)), int(o.get("stride_w", 1))
    fh, fw = int(o.get("filter_height", 1)), int(o.get("filter_width", 1))
    valid = o.get("padding") == "VALID" or "explicit_padding" in o
    ifm = op.inputs[0]
    if ifm is not None and (fh, fw) == (sh, sw) == (ifm.shape4d.h, ifm.shape4d.w):
        sh = sw = 1  # one window over the whole IFM, unpadded: lowered with stride 1 (convert_pool)
        valid = True
    if not all(1 <= s <= 3 for s in (sh, sw)) and not (fh == sh and fw == sw and valid):
        return f"Stride values for both width and height must be in the range [1, 3] (they are {sh}x{sw})"
    if op.type == "AVERAGE_POOL_2D" and not valid:
        if not all(_FILTER_RANGE[0] <= f <= _FILTER_RANGE[1] for f in (fh, fw)):
            return f"Kernel filter values for both width and height must be in the range [1, 8] (they are {fh}x{fw})"
        return None
    if not (_FILTER_HEIGHT_RANGE[0] <= fh <= _FILTER_HEIGHT_RANGE[1]):
        return f"Kernel filter height must be in the range [1, 256] (it is {fh})"
    if not (_FILTER_PRODUCT_RANGE[0] <= fh * fw <= _FILTER_PRODUCT_RANGE[1]):
        return f"Product of kernel filter width and height must be in the range [1, 65536] (it is {fh * fw})"
    return None


def _fully_connected(op: Op) -> str | None:
    weights = op.inputs[1]
    if weights is None or not weights.is_constant:
        return "Weight tensor must be constant"
    if weights.dtype not in (DataType.INT8, DataType.UINT8):
        return f"Weight tensor must be 8-bit (it is {weights.dtype})"
    return _bias(op)


def _elementwise(op: Op) -> str | None:
    a, b = op.inputs[0], op.inputs[1] if len(op.inputs) > 1 else None
    ofm = op.outputs[0]
    if a is None or b is None:
        return "Number of input tensors must be exactly 2"
    if a.dtype != b.dtype:
        return f"Both Input data types must match ({a.dtype} and {b.dtype})"
    if a.dtype in (DataType.INT8, DataType.INT16) and ofm.dtype == DataType.UINT8:
        return "For IFM that are signed, OFM must also be signed"
    # Compared as 4D shapes: a removed reshape may have left an input with a different rank.
    sa, sb, so = (t.shape4d.as_list() for t in (a, b, ofm))
    if sa != so and sb != so and a.elements != 1 and b.elements != 1:
        return "At least one Input's shape must match the OFM's shape"
    if any(x != y and 1 not in (x, y) for x, y in zip(sa, sb)):
        return f"Broadcasting is only allowed for rank indices with dimension 1, from either IFM1 or IFM2 ({sa} and {sb})"
    if op.type in ("MAXIMUM", "MINIMUM") and any(_per_tensor(t) != _per_tensor(ofm) for t in (a, b)):
        # the hardware compares the operands less their zero points, unscaled: with other scales it
        # would not compute TFLite's result (and neither Vela core runs it on the NPU)
        return "Both Input quantization parameters must match OFM quantization parameters"
    return None


def _per_tensor(t: Tensor) -> tuple[tuple[float, ...], tuple[int, ...]] | None:
    """A tensor's scale and zero point as the output stage sees them (None: not quantized)."""
    q = t.quant
    return None if q is None or not q.is_valid else (tuple(q.scale[:1]), tuple(q.zero_point[:1]))


def _softmax(op: Op) -> str | None:
    ifm, ofm = op.inputs[0], op.outputs[0]
    assert ifm is not None
    # TFLite's int8 softmax may write int16 (its last shift keeps 16 bits); Vela's default core runs it
    if ifm.dtype != ofm.dtype and (ifm.dtype, ofm.dtype) != (DataType.INT8, DataType.INT16):
        return f"IFM and OFM data types must match ({ifm.dtype} and {ofm.dtype}), or be int8 and int16"
    # A removed reshape may have left the two another rank or view: the rows (depth) and their
    # number are what must match, as they did in the file.
    if ifm.shape4d.c != ofm.shape4d.c or ifm.elements != ofm.elements:
        return f"IFM and OFM shapes must match ({list(ifm.shape)} and {list(ofm.shape)})"
    if float(op.options.get("beta", 1.0)) < 0:
        return "Beta value needs to be positive"
    if ifm.dtype not in (DataType.INT8, DataType.UINT8, DataType.INT16):
        return f"IFM must be int8, uint8 or int16 (it is {ifm.dtype})"
    return None


# The input types each table-lookup operator's LUT is built for (Vela 5.2.0's constraints).
_LUT_DTYPES = {
    "LEAKY_RELU": (DataType.INT8, DataType.UINT8, DataType.INT16),  # int16: elementwise ops, not a table
    "EXP": (DataType.INT8, DataType.INT16),
    "RSQRT": (DataType.INT8,),
    "HARD_SWISH": (DataType.INT8, DataType.UINT8),
    "GELU": (DataType.INT8, DataType.UINT8),  # as Vela's default core
    "LOG": (DataType.INT8,),  # as Vela's default core
}


def _lut(op: Op) -> str | None:
    ifm, ofm = op.inputs[0], op.outputs[0]
    assert ifm is not None
    allowed = _LUT_DTYPES[op.type]
    if ifm.dtype not in allowed:
        names = ", ".join(str(d) for d in allowed)
        return f"IFM must be {names} for {op.type} (it is {ifm.dtype}): its lookup table is built for those"
    if ifm.dtype != ofm.dtype:
        return f"IFM and OFM data types must match ({ifm.dtype} and {ofm.dtype})"
    return None


def _unary_elementwise(op: Op) -> str | None:
    ifm, ofm = op.inputs[0], op.outputs[0]
    assert ifm is not None
    if ifm.dtype not in (DataType.INT8, DataType.UINT8, DataType.INT16, DataType.INT32):
        return f"IFM must be int8, uint8, int16 or int32 (it is {ifm.dtype})"
    if ifm.dtype != ofm.dtype:
        return f"IFM and OFM data types must match ({ifm.dtype} and {ofm.dtype})"
    if ifm.shape4d != ofm.shape4d:
        return f"IFM and OFM shapes must match ({list(ifm.shape)} and {list(ofm.shape)})"
    return None


def _requantize(op: Op) -> str | None:
    ifm, ofm = op.inputs[0], op.outputs[0]
    assert ifm is not None
    fixed = (DataType.INT8, DataType.UINT8, DataType.INT16)
    if ifm.dtype not in fixed or ofm.dtype not in fixed:
        return f"Only requantizing between int8, uint8 and int16 runs on the NPU ({ifm.dtype} to {ofm.dtype})"
    if ifm.shape4d != ofm.shape4d:
        return "IFM and OFM shapes must match"
    return None


def _reshape(op: Op) -> str | None:
    if op.type == "RESHAPE" and len(op.inputs) > 1 and op.inputs[1] is not None and not op.inputs[1].is_constant:
        return f"Shape must be constant ('{op.inputs[1].name}' is not)"
    return None


def _mean(op: Op) -> str | None:
    ifm, axis = op.inputs[0], op.inputs[1] if len(op.inputs) > 1 else None
    assert ifm is not None
    if axis is None or axis.data is None:
        return "Axis indices must be constant"
    rank = len(ifm.shape)
    values = [int(a) for a in axis.data.reshape(-1)]
    if rank == 0 or not values or any(not -rank <= a < rank for a in values):
        return f"Axis indices must be in the range [-rank, rank) of the IFM (axes {values}, rank {rank})"
    axes = sorted({a % rank for a in values})
    if rank == 4 and 0 in axes:
        return "Mean over the batch axis is not supported"
    reduced4 = {a + 4 - rank for a in axes}  # 1 height, 2 width, 3 depth
    if {1, 3} <= reduced4 and 2 not in reduced4 and ifm.shape4d.w > 1:
        # depth is reduced laid along the width: with height but not width its window is not contiguous
        return f"Reduction over height and depth needs the width reduced too or 1 (the IFM is {list(ifm.shape)})"
    if ifm.dtype not in _MEAN_KERNEL_PRODUCT:
        return f"IFM must be int8, uint8 or int16 (it is {ifm.dtype})"
    dims = [ifm.shape[a] for a in axes]
    if math.prod(dims) > _MEAN_KERNEL_PRODUCT[ifm.dtype]:
        return f"Product of reduced axes must be no greater than {_MEAN_KERNEL_PRODUCT[ifm.dtype]} (it is {math.prod(dims)})"
    return None


def max_pool_view(ifm_shape: tuple[int, ...], axes: list[int]) -> tuple[tuple[int, int, int, int], int, int] | str:
    """How a REDUCE_MAX over ``axes`` of an IFM of ``ifm_shape`` runs as one max pool: the 4D view
    of the IFM's NHWC bytes, the kernel height and width, or why it cannot.

    Over height and/or width the kernel covers them. Depth is reduced by viewing the map with its
    depth laid along the width (and depth 1): over depth alone (1, H*W, C, 1) with a 1 x C kernel,
    with width too (1, H, W*C, 1) with a 1 x W*C kernel (or H x W*C also over height). Axes of
    size 1 reduce nothing. Height and depth without width are not contiguous: not a pool.
    """
    rank = len(ifm_shape)
    if not 1 <= rank <= 4 or any(not -rank <= a < rank for a in axes):
        return f"Axis indices must be in the range [-rank, rank) of an IFM of rank 1 to 4 (axes {axes}, rank {rank})"
    dims = [1] * (4 - rank) + list(ifm_shape)
    reduced = [False] * (4 - rank) + [i in {a % rank for a in axes} for i in range(rank)]
    n, h, w, c = dims
    red_h, red_w, red_c = (r and d > 1 for r, d in zip(reduced[1:], dims[1:]))
    if n != 1:
        return f"REDUCE_MAX runs on the NPU with a batch of 1 (it is {n})"
    if not red_c:
        view, kh, kw = (1, h, w, c), (h if red_h else 1), (w if red_w else 1)
    elif not red_h and not red_w:
        view, kh, kw = (1, h * w, c, 1), 1, c
    elif red_w or w == 1:
        view, kh, kw = (1, h, w * c, 1), (h if red_h else 1), w * c
    else:
        return "REDUCE_MAX over height and depth needs the width reduced too (the reduced bytes must be contiguous)"
    if max(view) > _TENS_DIM_RANGE[1]:
        return f"The IFM seen as a pool's input must have dimensions of at most {_TENS_DIM_RANGE[1]} (it is {list(view)})"
    if not (_FILTER_HEIGHT_RANGE[0] <= kh <= _FILTER_HEIGHT_RANGE[1] and kh * kw <= _FILTER_PRODUCT_RANGE[1]):
        return f"The pooled area must be at most 256 rows and 65536 elements (it is {kh}x{kw})"
    return view, kh, kw


def _reduce_max(op: Op) -> str | None:
    ifm, axis = op.inputs[0], op.inputs[1]
    assert ifm is not None and axis is not None
    if axis.data is None:
        return "Axis indices must be constant"
    found = max_pool_view(ifm.shape, [int(a) for a in axis.data.reshape(-1)])
    return found if isinstance(found, str) else None


def _reduce_min(op: Op) -> str | None:
    """REDUCE_MIN runs as REDUCE_MAX between two integer inversions, which keep the quantization."""
    ifm, ofm = op.inputs[0], op.outputs[0]
    assert ifm is not None
    if ifm.dtype not in (DataType.INT8, DataType.UINT8, DataType.INT16) or ifm.dtype != ofm.dtype or ifm.quant != ofm.quant:
        return "IFM and OFM must be int8, uint8 or int16 of the same type and quantization"
    return _reduce_max(op)


def _pad(op: Op) -> str | None:
    pads = op.inputs[1] if len(op.inputs) > 1 else None
    if pads is None or pads.data is None:
        return "The padding tensor must be constant"
    if list(pads.shape) not in ([3, 2], [4, 2]):
        return f"The padding tensor must have the shape [3,2] or [4,2] (it is {list(pads.shape)})"
    values = pads.data.reshape(-1, 2)
    if len(values) == 4 and values[0].any():
        return "The pad tensor can only pad height, width and depth"
    ifm, ofm = op.inputs[0], op.outputs[0]
    if (values < 0).any():
        return f"Padding values must not be negative ({values.tolist()})"
    if ifm is not None and len(ifm.shape) == len(values) and \
            [d + int(a) + int(b) for d, (a, b) in zip(ifm.shape, values)] != list(ofm.shape):
        return f"The OFM shape must be the IFM shape plus the padding ({list(ofm.shape)})"
    return None


def _padv2(op: Op) -> str | None:
    """A PADV2 is a PAD filling with its constant's stored value (TFLite requires it quantized as
    the output)."""
    value, ofm = op.inputs[2] if len(op.inputs) > 2 else None, op.outputs[0]
    if value is not None and (value.data is None or value.data.size != 1):
        return "The constant value must be a constant scalar"
    if value is not None and (value.dtype != ofm.dtype or _per_tensor(value) != _per_tensor(ofm)):
        return "The constant value must have the OFM's data type and quantization"
    return _pad(op)


def _concat(op: Op) -> str | None:
    axis = op.options.get("axis")
    ofm = op.outputs[0]
    if axis is None:
        return "Axis attribute must exist"
    rank = len(ofm.shape)
    if not (-rank <= int(axis) < rank):
        return f"Axis attribute must be in the range [0, <ofm_dimensions>) (it is {axis})"
    for t in op.inputs:
        if t is not None and len(t.shape) != rank:
            return "All Input dimensionalities must match OFM dimensionality"
    return None


_SEMANTIC: tuple[Check, ...] = (_no_dynamic, _max_4d, _scales)
_GENERIC: tuple[Check, ...] = (_dtypes, _quantized, _dims, _batch, _fused_activation)
_SPECIFIC: dict[str, Check] = {
    "CONV_2D": _conv,
    "DEPTHWISE_CONV_2D": _conv,
    "AVERAGE_POOL_2D": _pool,
    "MAX_POOL_2D": _pool,
    "FULLY_CONNECTED": _fully_connected,
    "SOFTMAX": _softmax,
    "RESHAPE": _reshape,
    "MEAN": _mean,
    "PAD": _pad,
    "PADV2": _padv2,
    "CONCATENATION": _concat,
    **{t: _elementwise for t in BINARY_ELEMENTWISE},
    **{t: _lut for t in LUT_TYPES},
    **{t: resize_reason for t in RESIZE_TYPES},
    **{t: slice_reason for t in SLICE_TYPES},
    "ABS": _unary_elementwise,
    "PRELU": prelu_reason,
    "TRANSPOSE": transpose_reason,
    "MIRROR_PAD": mirror_pad_reason,
    "QUANTIZE": _requantize,
    "ARG_MAX": argmax_reason,
    "SUM": _mean,  # a MEAN whose last step scales by the output's quantization instead of 1/N
    "REDUCE_MAX": _reduce_max,
    "REDUCE_MIN": _reduce_min,
    "SQUARED_DIFFERENCE": squared_difference_reason,
    "TRANSPOSE_CONV": lambda op: transpose_conv_reason(op) or _weight_sum(op),
    LSTM: lstm_reason,
    "BATCH_MATMUL": batch_matmul_reason,
    "TILE": tile_reason,
}


def unsupported_reason(op: Op) -> str | None:
    """Why ``op`` cannot run on the NPU, or ``None`` if it can.

    Semantic checks that apply to every operator type come first (as in Vela, which reports
    "Unsupported TensorFlow Lite semantics" before looking at the type).
    """
    for check in _SEMANTIC:
        reason = check(op)
        if reason is not None:
            return reason
    if op.type not in LOWERED_TYPES:
        return f"{op.type} is not supported on the NPU"
    for check in (_arity, *_GENERIC, _SPECIFIC.get(op.type, lambda _op: None)):
        reason = check(op)
        if reason is not None:
            return reason
    return None


def checks_of(op_type: str) -> tuple[Check, ...]:
    """The checks ``unsupported_reason`` applies to an operator of ``op_type``, in its order (an
    operator type npuplan does not lower gets the semantic checks only): for the supported-operators
    report."""
    if op_type not in LOWERED_TYPES:
        return _SEMANTIC
    specific = (_SPECIFIC[op_type],) if op_type in _SPECIFIC else ()
    return (*_SEMANTIC, _arity, *_GENERIC, *specific)


GENERIC_CHECKS: tuple[Check, ...] = (*_SEMANTIC, _arity, *_GENERIC)
