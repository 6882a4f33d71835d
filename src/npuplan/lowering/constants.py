"""Fold operators whose inputs are all constant into constant tensors (compile-time evaluation).

Exporters often leave shape arithmetic in a model (Keras 3: SHAPE -> STRIDED_SLICE -> PACK ->
RESHAPE), and each such op on the CPU splits the NPU graph in two. Every op here is evaluated with
numpy under TFLite's reference semantics and replaced by its value:

- integer arithmetic and reductions on unquantized int32/int64 tensors (the shape arithmetic);
- a quantized int8 FULLY_CONNECTED of a constant input (``constant_fc``: an LSTM's or GRU's
  recurrent weights times its initial state of zeros), and a QUANTIZE of a constant that
  requantizes such a product (``constant_quantize``);
- data movement (slices, packs, concatenations, reshapes, transposes, gathers, tiles) and FILL of
  any type when the output keeps the quantization of the data moved (a FILL's value), so the
  values are the same numbers (a quantized FILL of zeros is an LSTM's initial state).

An op is left alone when a case is not covered (ellipsis or new-axis masks, mixed quantization,
an unknown type) or when its result would exceed ``MAX_FOLDED_ELEMENTS``: folding never creates
large arrays from a small hostile model (a FILL of 2^31 elements).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor
from npuplan.lowering._util import replace_tensors, with_tensors_replaced
from npuplan.lowering.constant_fc import foldable_fully_connected, fully_connected_value
from npuplan.lowering.constant_quantize import foldable_requantize, requantize_value

Removed = tuple[tuple[str, str], ...]
MAX_FOLDED_ELEMENTS = 1 << 16

Folder = Callable[[Op, list[np.ndarray]], "np.ndarray | None"]


class _Skip(Exception):
    """The op is a case this pass does not fold."""


def _int(values: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(values).reshape(-1)]


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise _Skip()
    return axis % max(rank, 1)


def _strided_slice(op: Op, args: list[np.ndarray]) -> np.ndarray:
    data, begin, end, strides = args[0], _int(args[1]), _int(args[2]), _int(args[3])
    o = op.options
    if int(o.get("ellipsis_mask", 0)) or int(o.get("new_axis_mask", 0)) or int(o.get("offset", 0)):
        raise _Skip()
    if not len(begin) == len(end) == len(strides) <= data.ndim or 0 in strides:
        raise _Skip()
    begin_mask, end_mask, shrink = (int(o.get(k, 0)) for k in ("begin_mask", "end_mask", "shrink_axis_mask"))
    index: list[Any] = []
    for axis, (b, e, s) in enumerate(zip(begin, end, strides)):
        if shrink >> axis & 1:
            if not -data.shape[axis] <= b < data.shape[axis]:
                raise _Skip()
            index.append(b)
            continue
        index.append(slice(None if begin_mask >> axis & 1 else b, None if end_mask >> axis & 1 else e, s))
    return np.asarray(data[tuple(index)])


def _slice(op: Op, args: list[np.ndarray]) -> np.ndarray:
    data, begin, size = args[0], _int(args[1]), _int(args[2])
    if not len(begin) == len(size) == data.ndim:
        raise _Skip()
    index = tuple(slice(b, None if n == -1 else b + n) for b, n in zip(begin, size))
    return np.asarray(data[index])


def _pack(op: Op, args: list[np.ndarray]) -> np.ndarray:
    return np.stack(args, axis=_axis(int(op.options.get("axis", 0)), args[0].ndim + 1))


def _concatenation(op: Op, args: list[np.ndarray]) -> np.ndarray:
    if op.options.get("fused_activation_function", "NONE") != "NONE":
        raise _Skip()
    return np.concatenate(args, axis=_axis(int(op.options.get("axis", 0)), args[0].ndim))


def _reshape(op: Op, args: list[np.ndarray]) -> np.ndarray:
    return args[0].reshape(tuple(op.outputs[0].shape))


def _transpose(op: Op, args: list[np.ndarray]) -> np.ndarray:
    return np.transpose(args[0], _int(args[1]))


def _gather(op: Op, args: list[np.ndarray]) -> np.ndarray:
    if int(op.options.get("batch_dims", 0)):
        raise _Skip()
    axis = _axis(int(op.options.get("axis", 0)), args[0].ndim)
    indices = args[1].astype(np.int64)
    if indices.size and not (indices.min() >= 0 and indices.max() < args[0].shape[axis]):
        raise _Skip()
    return np.take(args[0], indices, axis=axis)


def _tile(op: Op, args: list[np.ndarray]) -> np.ndarray:
    return np.tile(args[0], _int(args[1]))


def _reduce(fn: Callable[..., np.ndarray]) -> Folder:
    def fold(op: Op, args: list[np.ndarray]) -> np.ndarray:
        axes = tuple(sorted({_axis(a, args[0].ndim) for a in _int(args[1])}))
        return np.asarray(fn(args[0], axis=axes, keepdims=bool(op.options.get("keep_dims", False))))

    return fold


def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Folder:
    def fold(op: Op, args: list[np.ndarray]) -> np.ndarray:
        if op.options.get("fused_activation_function", "NONE") != "NONE":
            raise _Skip()
        return np.asarray(fn(args[0], args[1]))

    return fold


def _floor_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if (np.asarray(b) == 0).any():
        raise _Skip()
    return np.floor_divide(a, b)


def _fill(op: Op, args: list[np.ndarray]) -> np.ndarray:
    dims = _int(args[0])
    if any(d < 0 for d in dims) or int(np.prod(dims, dtype=np.int64)) > MAX_FOLDED_ELEMENTS:
        raise _Skip()
    return np.full(dims, args[1].reshape(-1)[0])


def _range(op: Op, args: list[np.ndarray]) -> np.ndarray:
    start, limit, delta = (args[i].reshape(-1)[0] for i in range(3))
    if delta == 0 or abs((limit - start) / delta) > MAX_FOLDED_ELEMENTS:
        raise _Skip()
    return np.arange(start, limit, delta)


def _cast(op: Op, args: list[np.ndarray]) -> np.ndarray:
    return args[0]  # converted to the output's type by the caller


_ARITHMETIC: dict[str, Folder] = {
    "ADD": _binary(np.add), "SUB": _binary(np.subtract), "MUL": _binary(np.multiply),
    "MAXIMUM": _binary(np.maximum), "MINIMUM": _binary(np.minimum), "FLOOR_DIV": _binary(_floor_div),
    "REDUCE_PROD": _reduce(np.prod), "SUM": _reduce(np.sum), "REDUCE_MAX": _reduce(np.max),
    "REDUCE_MIN": _reduce(np.min), "RANGE": _range, "CAST": _cast,
}
_MOVEMENT: dict[str, Folder] = {
    "STRIDED_SLICE": _strided_slice, "SLICE": _slice, "PACK": _pack, "CONCATENATION": _concatenation,
    "RESHAPE": _reshape, "SQUEEZE": _reshape, "EXPAND_DIMS": _reshape, "TRANSPOSE": _transpose,
    "GATHER": _gather, "TILE": _tile, "FILL": _fill,
}
_MOVED_INPUT = {"FILL": 1}  # the input whose values a movement op moves (else the first)
_INTEGER_TYPES = {"int32": np.int32, "int64": np.int64}


def _folder(op: Op) -> Folder | None:
    """The folder for ``op`` when its inputs are constant and its kind is covered."""
    if op.type == "FULLY_CONNECTED":  # its bias is optional (None)
        return fully_connected_value if foldable_fully_connected(op) else None
    if op.type == "QUANTIZE":
        return requantize_value if foldable_requantize(op) else None
    if len(op.outputs) != 1 or not op.inputs or any(t is None or t.data is None for t in op.inputs):
        return None
    out = op.outputs[0]
    if op.type in _ARITHMETIC:
        plain = all(t is not None and t.quant is None and t.dtype.value in _INTEGER_TYPES for t in (*op.inputs, out))
        return _ARITHMETIC[op.type] if plain else None
    if op.type in _MOVEMENT:
        data = op.inputs[_MOVED_INPUT.get(op.type, 0)] if len(op.inputs) > _MOVED_INPUT.get(op.type, 0) else None
        if data is None:
            return None
        same = data.dtype == out.dtype and data.quant == out.quant
        return _MOVEMENT[op.type] if same else None
    return None


def _evaluate(op: Op, folder: Folder) -> np.ndarray | None:
    out = op.outputs[0]
    args = [np.asarray(t.data) for t in op.inputs if t is not None]
    try:
        with np.errstate(all="raise"):
            value = folder(op, args)
    except (_Skip, ValueError, IndexError, TypeError, FloatingPointError, OverflowError, MemoryError):
        return None
    if value is None or value.size > MAX_FOLDED_ELEMENTS:
        return None
    if out.shape and int(np.prod(out.shape)) == value.size:
        value = value.reshape(out.shape)
    elif tuple(value.shape) != tuple(out.shape):
        return None
    # an integer output's own type (a movement op's is its data's; a requantize may widen or narrow)
    target = np.dtype(out.dtype.value) if out.dtype.is_integer else args[_MOVED_INPUT.get(op.type, 0)].dtype
    return np.array(value, dtype=target, order="C")  # (ascontiguousarray would make a scalar 1-D)


def fold_constants(graph: Graph) -> tuple[Graph, Removed]:
    """Replace every foldable op (all inputs constant) by a constant output, in execution order so
    that a chain folds in one walk. Returns the graph and the removed ops as (name, reason).

    One walk: each op first reads the constants folded before it, and the ops are rebuilt once at
    the end (as many ``replace_tensor`` passes as folds would cost folds x ops)."""
    removed: list[tuple[str, str]] = []
    folded: dict[int, Tensor] = {}  # id of a folded op's output -> its constant
    outs: list[Tensor] = []  # those outputs, alive while ``folded`` holds their ids
    kept: list[Op] = []
    for op in graph.ops:
        op = with_tensors_replaced(op, folded)
        folder = _folder(op)
        value = _evaluate(op, folder) if folder is not None and op.outputs[0] not in graph.outputs else None
        if value is None:
            kept.append(op)
            continue
        out = op.outputs[0]
        value.flags.writeable = False
        folded[id(out)] = Tensor(out.name, tuple(out.shape), out.dtype, out.quant, value)
        outs.append(out)
        removed.append((op.name, f"{op.type} of constants folded at compile time"))
    if not folded:
        return graph, ()
    return replace_tensors(replace(graph, ops=tuple(kept)), folded), tuple(removed)
