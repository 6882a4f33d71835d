"""Recognise Keras' UpSampling2D export (EXPAND_DIMS -> TILE -> RESHAPE along H, then W) as one
nearest-neighbour resize.

Keras 3 exports ``UpSampling2D(f)`` as a repeat along the height then along the width, each as a
5-D EXPAND_DIMS / TILE / RESHAPE chain; 5-D tensors cannot run on the NPU, so left alone the six
ops fall to the CPU and split the network. The two repeats together are exactly
``RESIZE_NEAREST_NEIGHBOR`` by ``f`` (without align_corners or half-pixel centres), which the NPU
runs with its nearest-neighbour resampling.

Any other repeat (a lone one, or a pair with different factors, as ``UpSampling2D((3, 2))`` gives)
is a concatenation in 4 dimensions: seen as ``[1, A, 1, B]``, with ``A`` the elements up to the
repeated axis and ``B`` those after it, the source concatenated ``factor`` times along the third
axis is the result's bytes. Each such chain becomes RESHAPE -> CONCATENATION -> RESHAPE, which the
NPU runs as copies. A chain that tiles rather than repeats is left as it is.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
from npuplan.ir.types import DataType
from npuplan.lowering._util import replace_op, replace_tensor
from npuplan.records import record

Removed = tuple[tuple[str, str], ...]


@record(eq=False)
class _Repeat:
    """An EXPAND_DIMS -> TILE -> RESHAPE chain equal to ``np.repeat(source, factor, axis)``."""

    ops: tuple[Op, Op, Op]
    source: Tensor
    result: Tensor  # as declared (exporters may leave dynamic dims as 1)
    shape: tuple[int, ...]  # what the repeat really makes
    axis: int
    factor: int


def _sole(graph: Graph, tensor: Tensor, kind: str) -> Op | None:
    readers = graph.consumers().get(tensor, [])
    if len(readers) != 1 or readers[0].type != kind or tensor in graph.outputs:
        return None
    return readers[0]


def _repeat_at(graph: Graph, expand: Op) -> _Repeat | None:
    source, axis_tensor = expand.inputs[0], expand.inputs[1] if len(expand.inputs) > 1 else None
    if source is None or axis_tensor is None or axis_tensor.data is None or len(source.shape) != 4:
        return None
    inserted = int(axis_tensor.data.reshape(-1)[0]) % 5
    tile = _sole(graph, expand.outputs[0], "TILE")
    if tile is None or len(tile.inputs) < 2 or tile.inputs[1] is None or tile.inputs[1].data is None:
        return None
    multiples = [int(v) for v in tile.inputs[1].data.reshape(-1)]
    reshape = _sole(graph, tile.outputs[0], "RESHAPE")
    if reshape is None or inserted not in (2, 3) or len(multiples) != 5:
        return None
    factor = multiples[inserted]
    if factor < 2 or any(m != 1 for i, m in enumerate(multiples) if i != inserted):
        return None
    axis = inserted - 1  # the new axis after ``axis``: each element repeated ``factor`` times
    expected = list(source.shape)
    expected[axis] *= factor
    result = reshape.outputs[0]
    new_shape = reshape.inputs[1] if len(reshape.inputs) > 1 else None
    declared = list(result.shape)
    if new_shape is not None and new_shape.data is not None:  # exporters may leave dynamic dims as 1
        declared = [int(v) for v in new_shape.data.reshape(-1)]
    if declared != expected or result.dtype != source.dtype:
        return None
    return _Repeat((expand, tile, reshape), source, result, tuple(expected), axis, factor)


def fold_upsampling(graph: Graph, *, repeats: bool = True) -> tuple[Graph, Removed]:
    """Replace each height-and-width repeat pair by one RESIZE_NEAREST_NEIGHBOR op and, with
    ``repeats``, every other repeat by a 4D concatenation (the emitter does not write reshaped
    views at offsets, so deployable plans leave those on the CPU)."""
    removed: list[tuple[str, str]] = []
    changed = True
    while changed:
        changed = False
        for op in graph.ops:
            if op.type != "EXPAND_DIMS":
                continue
            first = _repeat_at(graph, op)
            follow = _sole(graph, first.result, "EXPAND_DIMS") if first is not None else None
            second = _repeat_at(graph, follow) if follow is not None else None
            if first is None or second is None or {first.axis, second.axis} != {1, 2}:
                continue
            if first.factor != second.factor:
                continue
            graph = _replace(graph, first, second)
            removed.extend((o.name, f"{o.type} of an UpSampling2D chain: one nearest-neighbour resize")
                           for o in (*first.ops, *second.ops[:2]))
            changed = True
            break
    while repeats and (repeat := next(filter(None, (_repeat_at(graph, op) for op in graph.ops
                                        if op.type == "EXPAND_DIMS")), None)) is not None:
        graph = _as_concatenation(graph, repeat)
        removed.extend((o.name, f"{o.type} of a repeat by {repeat.factor}: a 4D concatenation")
                       for o in repeat.ops[:2])
    return graph, tuple(removed)


def _as_concatenation(graph: Graph, repeat: _Repeat) -> Graph:
    """``repeat`` as RESHAPE ``[1, A, 1, B]`` -> CONCATENATION of ``factor`` copies along the third
    axis -> RESHAPE to the result, in place of its three ops."""
    expand, tile, reshape = repeat.ops
    before = int(np.prod(repeat.source.shape[:repeat.axis + 1]))
    after = int(np.prod(repeat.source.shape[repeat.axis + 1:]))
    flat = replace(repeat.source, name=f"{tile.outputs[0].name}_4d_source", shape=(1, before, 1, after), data=None)
    stacked = replace(tile.outputs[0], shape=(1, before, repeat.factor, after))
    view = Op("RESHAPE", (repeat.source, _int32(f"{flat.name}_shape", flat.shape)), (flat,), frozen_options({}),
              expand.index)
    concat = Op("CONCATENATION", (flat,) * repeat.factor, (stacked,), frozen_options({"axis": 2}), tile.index)
    declared = repeat.result
    out = declared if declared.shape == repeat.shape else replace(declared, shape=repeat.shape)
    back = Op("RESHAPE", (stacked, _int32(f"{out.name}_shape", out.shape)), (out,), frozen_options({}), reshape.index)
    graph = replace_op(replace_op(replace_op(graph, expand, view), tile, concat), reshape, back)
    return graph if declared is out else replace_tensor(graph, declared, out)


def _int32(name: str, values: tuple[int, ...]) -> Tensor:
    """A constant int32 vector (a shape or size operand)."""
    data = np.array(values, dtype=np.int32)
    data.flags.writeable = False
    return Tensor(name, (len(values),), DataType.INT32, None, data)


def _replace(graph: Graph, first: _Repeat, second: _Repeat) -> Graph:
    declared = second.result
    out = declared if declared.shape == second.shape else replace(declared, shape=second.shape)
    resize = Op("RESIZE_NEAREST_NEIGHBOR", (first.source, _int32(f"{out.name}_size", out.shape[1:3])), (out,),
                frozen_options({"align_corners": False, "half_pixel_centers": False}), first.ops[0].index)
    gone = {id(o) for o in (*first.ops, *second.ops)}
    ops: list[Op] = []
    for o in graph.ops:
        if id(o) == id(second.ops[2]):
            ops.append(resize)
        elif id(o) not in gone:
            ops.append(o)
    graph = Graph(graph.name, tuple(ops), graph.inputs, graph.outputs)
    return graph if declared is out else replace_tensor(graph, declared, out)
