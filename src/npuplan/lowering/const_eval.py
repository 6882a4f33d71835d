"""Compile-time evaluation of TFLite operators whose inputs are all constant, with numpy.

``evaluate(op, values, limit_elements)`` returns the value of the op's (single) output, or
``None`` when the op cannot be folded exactly: an unknown operator type, options this module does
not model (ellipsis or new-axis masks, a fused activation, batched gathers), quantized operands
(whose arithmetic would need TFLite's requantization), a result that would overflow its integer
type or leave the output's declared shape, an out-of-range index, or an input or result larger
than ``limit_elements`` (checked before anything is allocated, so a hostile FILL, RANGE, TILE or
broadcast cannot make a giant array). Each evaluator follows the TFLite reference kernel.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.types import DataType

Values = Sequence["np.ndarray | None"]
Evaluator = Callable[[Op, Values, int], "np.ndarray | None"]

_PLAIN_DTYPES = frozenset(
    {DataType.INT8, DataType.UINT8, DataType.INT16, DataType.INT32, DataType.INT64, DataType.FLOAT32, DataType.BOOL}
)


def numpy_dtype(dtype: DataType) -> np.dtype | None:
    """The numpy element type of ``dtype``, or ``None`` for types never folded."""
    return np.dtype(dtype.value) if dtype in _PLAIN_DTYPES else None


def _ints(value: np.ndarray) -> list[int]:
    return [int(v) for v in value.reshape(-1)]


def _fits(values: np.ndarray, dtype: np.dtype) -> bool:
    """Whether an exact result (Python ints in an object array, or a typed array) is
    representable in ``dtype`` without changing kind: integers in range, floats as floats, bools."""
    kind: str = values.dtype.kind
    if kind == "O":
        kind = "i" if all(isinstance(v, int) for v in values.reshape(-1).tolist()) else "?"
    if dtype.kind in "iu":
        if kind not in "iub":
            return False
        info = np.iinfo(dtype)
        return values.size == 0 or bool(values.min() >= info.min and values.max() <= info.max)
    if dtype.kind == "f":
        return kind == "f"
    return kind == "b"


# ---------------------------------------------------------------- shape arithmetic
def _shape(op: Op, values: Values, limit: int) -> np.ndarray | None:
    ifm = op.inputs[0]
    if ifm is None or ifm.dynamic_axes or any(d < 0 for d in ifm.shape):
        return None  # a dynamic axis holds a placeholder, not its size
    return np.array(ifm.shape, dtype=np.int64)


def _strided_slice(op: Op, values: Values, limit: int) -> np.ndarray | None:
    data, begin, end = values[0], values[1], values[2]
    strides = values[3] if len(values) > 3 else None
    o = op.options
    if data is None or begin is None or end is None:
        return None
    if int(o.get("ellipsis_mask", 0)) or int(o.get("new_axis_mask", 0)) or bool(o.get("offset", False)):
        return None
    b, e = _ints(begin), _ints(end)
    s = _ints(strides) if strides is not None else [1] * len(b)
    if not (len(b) == len(e) == len(s) <= data.ndim) or 0 in s:
        return None
    begin_mask, end_mask, shrink = (int(o.get(k, 0)) for k in ("begin_mask", "end_mask", "shrink_axis_mask"))
    index: list[int | slice] = []
    for axis, (start, stop, step) in enumerate(zip(b, e, s)):
        if shrink >> axis & 1:
            dim = data.shape[axis]
            at = start + dim if start < 0 else start
            if not 0 <= at < dim:
                return None
            index.append(at)
            continue
        # Python slicing normalises negative bounds and clamps exactly as TFLite's kernel does
        index.append(slice(None if begin_mask >> axis & 1 else start, None if end_mask >> axis & 1 else stop, step))
    return np.asarray(data[tuple(index)])


def _slice(op: Op, values: Values, limit: int) -> np.ndarray | None:
    data, begin, size = values[0], values[1], values[2]
    if data is None or begin is None or size is None:
        return None
    b, n = _ints(begin), _ints(size)
    if not len(b) == len(n) == data.ndim:
        return None
    index = []
    for dim, start, count in zip(data.shape, b, n):
        stop = dim if count == -1 else start + count
        if not (0 <= start <= stop <= dim):
            return None
        index.append(slice(start, stop))
    return np.asarray(data[tuple(index)])


def _gather(op: Op, values: Values, limit: int) -> np.ndarray | None:
    params, indices = values[0], values[1]
    if params is None or indices is None or int(op.options.get("batch_dims", 0)) != 0 or params.ndim == 0:
        return None
    axis = int(op.options.get("axis", 0))
    axis = axis + params.ndim if axis < 0 else axis
    if not 0 <= axis < params.ndim:
        return None
    dim = params.shape[axis]
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= dim):
        return None
    if indices.size * (params.size // max(dim, 1)) > limit:
        return None
    return np.take(params, indices.astype(np.int64), axis=axis)


def _pack(op: Op, values: Values, limit: int) -> np.ndarray | None:
    if not values or any(v is None for v in values) or len({v.shape for v in values if v is not None}) != 1:
        return None
    axis = int(op.options.get("axis", 0))
    rank = values[0].ndim + 1  # type: ignore[union-attr]
    if not -rank <= axis < rank:
        return None
    return np.stack([v for v in values if v is not None], axis=axis)


def _concat(op: Op, values: Values, limit: int) -> np.ndarray | None:
    if not values or any(v is None or v.ndim == 0 for v in values):
        return None
    if str(op.options.get("fused_activation_function", "NONE")) != "NONE":
        return None
    arrays = [v for v in values if v is not None]
    axis = int(op.options.get("axis", 0))
    if not -arrays[0].ndim <= axis < arrays[0].ndim:
        return None
    return np.concatenate(arrays, axis=axis)


def _reduce(kind: str) -> Evaluator:
    def evaluate(op: Op, values: Values, limit: int) -> np.ndarray | None:
        data, axes = values[0], values[1]
        if data is None or axes is None:
            return None
        rank = max(data.ndim, 1)
        picked = sorted({a + rank if a < 0 else a for a in _ints(axes)})
        if any(not 0 <= a < rank for a in picked) or (data.ndim == 0 and picked):
            return None
        if kind in ("prod", "sum") and data.dtype.kind == "f":
            return None  # the kernel's float accumulation order is not numpy's
        keep = bool(op.options.get("keep_dims", False))
        wide = data.astype(object) if data.dtype.kind in "iu" else data  # exact integers, checked below
        if kind == "prod":
            result = np.prod(wide, axis=tuple(picked), keepdims=keep)
        elif kind == "sum":
            result = np.sum(wide, axis=tuple(picked), keepdims=keep)
        elif data.size == 0:
            return None
        else:
            result = (np.max if kind == "max" else np.min)(wide, axis=tuple(picked), keepdims=keep)
        return np.asarray(result)

    return evaluate


# ---------------------------------------------------------------- arithmetic
_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "ADD": np.add,
    "SUB": np.subtract,
    "MUL": np.multiply,
    "MAXIMUM": np.maximum,
    "MINIMUM": np.minimum,
    "FLOOR_DIV": np.floor_divide,
    "FLOOR_MOD": np.mod,
}


def _binary(op: Op, values: Values, limit: int) -> np.ndarray | None:
    a, b = values[0], values[1] if len(values) > 1 else None
    if a is None or b is None or a.dtype != b.dtype or a.dtype.kind not in "iuf":
        return None
    if str(op.options.get("fused_activation_function", "NONE")) != "NONE":
        return None
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return None
    if math.prod(shape) > limit:
        return None
    if op.type in ("FLOOR_DIV", "FLOOR_MOD") and (a.dtype.kind == "f" or (b == 0).any()):
        return None
    if a.dtype.kind == "f":
        with np.errstate(all="ignore"):
            return np.asarray(_BINARY[op.type](a, b))
    # exact integer arithmetic (Python ints), the fit into the output type checked by the caller
    return np.asarray(_BINARY[op.type](a.astype(object), b.astype(object)))


def _neg(op: Op, values: Values, limit: int) -> np.ndarray | None:
    a = values[0]
    if a is None or a.dtype.kind not in "if":
        return None
    return np.asarray(-(a.astype(object) if a.dtype.kind == "i" else a))


def _cast(op: Op, values: Values, limit: int) -> np.ndarray | None:
    a = values[0]
    target = numpy_dtype(op.outputs[0].dtype)
    if a is None or target is None:
        return None
    if a.dtype.kind == "f" and target.kind in "iu":
        if not np.all(np.isfinite(a)):
            return None
        truncated = np.asarray(np.trunc(a.astype(np.float64)))  # C++ static_cast truncates toward zero
        return np.asarray([int(v) for v in truncated.reshape(-1)], dtype=object).reshape(truncated.shape)
    if target.kind == "b":
        return a != 0
    if a.dtype.kind == "b":
        return a.astype(target)
    return a.astype(object) if a.dtype.kind in "iu" and target.kind in "iu" else a.astype(target)


# ---------------------------------------------------------------- creation (bounded before allocating)
def _fill(op: Op, values: Values, limit: int) -> np.ndarray | None:
    dims, value = values[0], values[1]
    if dims is None or value is None or value.size != 1:
        return None
    shape = _ints(dims)
    if any(d < 0 for d in shape) or math.prod(shape) > limit:
        return None
    return np.full(shape, value.reshape(-1)[0], dtype=value.dtype)


def _range(op: Op, values: Values, limit: int) -> np.ndarray | None:
    start, stop, delta = values[0], values[1], values[2]
    if start is None or stop is None or delta is None or any(v.size != 1 for v in (start, stop, delta)):
        return None
    if start.dtype.kind not in "iu":
        return None  # a float kernel accumulates its steps; only integer ranges are folded
    s, e, d = (int(v.reshape(-1)[0]) for v in (start, stop, delta))
    if d == 0 or (e - s) * d < 0:
        return None
    count = -(-abs(e - s) // abs(d))  # the kernel's integer size: ceil(|limit - start| / |delta|)
    if count > limit:
        return None
    return np.arange(count, dtype=object) * d + s


def _tile(op: Op, values: Values, limit: int) -> np.ndarray | None:
    data, multiples = values[0], values[1]
    if data is None or multiples is None:
        return None
    reps = _ints(multiples)
    if len(reps) != data.ndim or any(r < 0 for r in reps) or data.size * math.prod(reps) > limit:
        return None
    return np.tile(data, reps)


# ---------------------------------------------------------------- relabelling of constants
def _reshape(op: Op, values: Values, limit: int) -> np.ndarray | None:
    """RESHAPE to its shape input (else its ``new_shape`` option), one ``-1`` resolved as TFLite does."""
    data = values[0]
    if data is None:
        return None
    shape_input = values[1] if len(values) > 1 else None
    wanted = _ints(shape_input) if shape_input is not None else list(op.options.get("new_shape", ()))
    if not wanted and op.outputs[0].shape:
        return None
    known = math.prod(d for d in wanted if d != -1)
    if wanted.count(-1) > 1 or any(d < -1 for d in wanted) or (known == 0 and -1 in wanted):
        return None
    resolved = [data.size // known if d == -1 else d for d in wanted]
    return data.reshape(resolved) if math.prod(resolved) == data.size else None


def _squeeze(op: Op, values: Values, limit: int) -> np.ndarray | None:
    data = values[0]
    if data is None:
        return None
    dims = [d + data.ndim if d < 0 else d for d in op.options.get("squeeze_dims", ())]
    if any(not 0 <= d < data.ndim or data.shape[d] != 1 for d in dims):
        return None
    return np.squeeze(data, axis=tuple(dims)) if dims else np.squeeze(data)


def _expand_dims(op: Op, values: Values, limit: int) -> np.ndarray | None:
    data, axis = values[0], values[1] if len(values) > 1 else None
    if data is None or axis is None or axis.size != 1:
        return None
    at = int(axis.reshape(-1)[0])
    at = at + data.ndim + 1 if at < 0 else at
    return np.expand_dims(data, at) if 0 <= at <= data.ndim else None


def _transpose(op: Op, values: Values, limit: int) -> np.ndarray | None:
    data, perm = values[0], values[1]
    if data is None or perm is None or sorted(_ints(perm)) != list(range(data.ndim)):
        return None
    return np.transpose(data, _ints(perm))


EVALUATORS: dict[str, Evaluator] = {
    "SHAPE": _shape,
    "STRIDED_SLICE": _strided_slice,
    "SLICE": _slice,
    "GATHER": _gather,
    "PACK": _pack,
    "CONCATENATION": _concat,
    "REDUCE_PROD": _reduce("prod"),
    "SUM": _reduce("sum"),
    "REDUCE_MAX": _reduce("max"),
    "REDUCE_MIN": _reduce("min"),
    **{t: _binary for t in _BINARY},
    "NEG": _neg,
    "CAST": _cast,
    "FILL": _fill,
    "RANGE": _range,
    "TILE": _tile,
    "RESHAPE": _reshape,
    "SQUEEZE": _squeeze,
    "EXPAND_DIMS": _expand_dims,
    "TRANSPOSE": _transpose,
}

# Ops that only move or relabel elements: exact for quantized tensors when in and out share quantization.
_MOVING = frozenset({"STRIDED_SLICE", "SLICE", "GATHER", "PACK", "CONCATENATION", "RESHAPE", "SQUEEZE",
                     "EXPAND_DIMS", "TRANSPOSE", "TILE", "REDUCE_MAX", "REDUCE_MIN"})
_QUANTIZED = (DataType.INT8, DataType.UINT8, DataType.INT16)


def _quantization_blocks(op: Op) -> bool:
    """Whether quantized operands make folding inexact (arithmetic, or a requantizing move)."""
    if op.type == "SHAPE":
        return False  # reads only the input's shape
    out = op.outputs[0]
    quantized = [t for t in (*op.inputs, out) if t is not None and t.quant is not None and t.quant.is_valid]
    if not quantized:
        return False
    if op.type not in _MOVING:
        return True
    data = [t for t in op.inputs[: (None if op.type in ("PACK", "CONCATENATION") else 1)] if t is not None]
    return any(t.quant != out.quant for t in data)


def evaluate(op: Op, values: Values, limit_elements: int) -> np.ndarray | None:
    """The value of ``op``'s single output, computed from the constant ``values`` of its inputs.

    ``None`` when the op is not folded (see the module docstring). The result has the output
    tensor's element type and its declared shape when that is known.
    """
    fold = EVALUATORS.get(op.type)
    if fold is None or len(op.outputs) != 1 or _quantization_blocks(op):
        return None
    out = op.outputs[0]
    target = numpy_dtype(out.dtype)
    if target is None or any(v is not None and v.size > limit_elements for v in values):
        return None  # inputs are bounded too: exact integer arithmetic goes through Python ints
    try:
        result = fold(op, values, limit_elements)
    except (ValueError, IndexError, TypeError, OverflowError, ZeroDivisionError):
        return None
    if result is None or result.size > limit_elements or not _fits(result, target):
        return None
    result = result.astype(target)
    declared = out.shape
    if declared and (len(declared) != result.ndim or any(d >= 0 and d != r for d, r in zip(declared, result.shape))):
        return None
    return result


def constant_value(tensor: Tensor | None) -> np.ndarray | None:
    """The data of a constant, non-variable tensor of a foldable element type, in its declared shape."""
    if tensor is None or tensor.data is None or tensor.is_variable or numpy_dtype(tensor.dtype) is None:
        return None
    data = tensor.data
    if data.size == math.prod(tensor.shape) and data.shape != tuple(tensor.shape):
        data = data.reshape(tensor.shape)
    return np.asarray(data)
