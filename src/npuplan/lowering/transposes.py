"""Decompose a TRANSPOSE the NPU cannot run in one step into transposes it can.

The NPU transposes by writing a 1x1 pool's output with its height and width strides swapped:
one step swaps two axes of a map (``A x B x C -> B x A x C``, and so a matrix ``X x Y -> Y x X``
seen as ``X x Y x 1``). Any permutation of three axes is at most two such steps, each on a
reshaped view of the same bytes (reshapes move no data):

  (A, B, C) -> (A, C, B)   swap A, B; then the matrix (B) x (A*C)
  (A, B, C) -> (C, B, A)   the matrix (A) x (B*C); then swap B, C
  (A, B, C) -> (B, C, A)   the matrix (A) x (B*C)
  (A, B, C) -> (C, A, B)   the matrix (A*B) x (C)

A higher-rank permutation qualifies when, after dropping axes of size 1 and merging axes that stay
next to each other in order, at most three axes remain (ShuffleNet's channel shuffle
``(1, H, W, g, C/g) -> (1, H, W, C/g, g)`` is ``(H*W, g, C/g) -> (H*W, C/g, g)``). Vela's default
core runs such transposes too.
"""

from __future__ import annotations

import math

from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
from npuplan.ir.lowered import BlockType, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.lowering._util import replace_op, without_op

Removed = tuple[tuple[str, str], ...]
Steps = tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]  # (shape seen, permutation) per step


def merged_permutation(shape: tuple[int, ...], perm: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``shape`` and ``perm`` with axes of size 1 dropped and axes that stay adjacent and in order
    merged into one."""
    kept = [a for a in perm if shape[a] > 1]
    groups: list[list[int]] = []
    for a in kept:
        if groups and a > groups[-1][-1] and all(shape[b] == 1 for b in range(groups[-1][-1] + 1, a)):
            groups[-1].append(a)
        else:
            groups.append([a])
    by_source = sorted(groups, key=lambda g: g[0])
    dims = tuple(math.prod(shape[a] for a in g) for g in by_source)
    return dims, tuple(by_source.index(g) for g in groups)


MAX_DIM = 65535  # the largest height, width or depth of a feature map the NPU addresses


def transpose_steps(dims: tuple[int, ...], perm: tuple[int, ...]) -> Steps | None:
    """The one-swap steps (see module docstring) doing ``perm`` on ``dims``, or None (also when a
    step's view has a dimension above ``MAX_DIM``)."""
    steps = _steps(dims, perm)
    if steps is None or any(max(seen) > MAX_DIM for seen, _ in steps):
        return None
    return steps


def _steps(dims: tuple[int, ...], perm: tuple[int, ...]) -> Steps | None:
    if len(dims) <= 1 or perm == tuple(range(len(dims))):
        return ()
    if len(dims) == 2:
        return (((dims[0], dims[1]), (1, 0)),)
    if len(dims) != 3:
        return None
    a, b, c = dims
    swap, matrix = (1, 0, 2), (1, 0)
    by_perm: dict[tuple[int, ...], Steps] = {
        (1, 0, 2): (((a, b, c), swap),),
        (0, 2, 1): (((a, b, c), swap), ((b, a * c), matrix)),
        (2, 1, 0): (((a, b * c), matrix), ((b, c, a), swap)),
        (1, 2, 0): (((a, b * c), matrix),),
        (2, 0, 1): (((a * b, c), matrix),),
    }
    return by_perm.get(perm)


def _one_step_view(op: Op) -> Shape4D | None:
    """The IFM view of a TRANSPOSE as declared that the NPU runs in one step (a 1x1 pool writing
    with height and width strides swapped, as Vela 5.2.0 does), or None."""
    src, perm_tensor = op.inputs[0], op.inputs[1]
    if src is None or perm_tensor is None or perm_tensor.data is None:
        return None
    shape, perm = list(src.shape), [int(v) for v in perm_tensor.data.reshape(-1)]
    if len(shape) == 2 and perm == [1, 0]:
        return Shape4D(1, shape[0], shape[1], 1)
    if len(shape) == 3:
        if perm[:2] == [1, 0]:
            return Shape4D(1, *shape)
        if shape[0] == 1 and perm[1:] == [2, 1]:
            return Shape4D(1, shape[1], shape[2], 1)
        if shape[1] == 1 and perm[0] == 2 and perm[2] == 0:
            return Shape4D(1, shape[0], shape[2], 1)
    if len(shape) == 4 and perm[0] == 0:
        if perm[1:3] == [2, 1]:
            return Shape4D(*shape)
        if shape[1] == 1 and perm[2:] == [3, 2]:
            return Shape4D(1, shape[2], shape[3], 1)
        if shape[2] == 1 and perm[1] == 3 and perm[3] == 1:
            return Shape4D(1, shape[1], shape[3], 1)
    return None


def transpose_reason(op: Op) -> str | None:
    src, out = op.inputs[0], op.outputs[0]
    assert src is not None
    if src.dtype != out.dtype or src.quant != out.quant:
        return "IFM and OFM data types and quantization must match"
    view = transpose_view(op)
    if view is not None and transpose_steps(*view):
        return None
    if _one_step_view(op) is None:
        return ("Only transposes of at most three axes (after merging the axes that stay together) run on the "
                f"NPU (shape {list(src.shape)})")
    return None


def _view4(seen: tuple[int, ...]) -> Shape4D:
    """A step's view as the pool walks it: a map ``A x B x C``, or a matrix ``X x Y`` as ``X x Y x 1``."""
    return Shape4D(1, *seen) if len(seen) == 3 else Shape4D(1, seen[0], seen[1], 1)


def convert_transpose(op: Op) -> tuple[NpuOp, ...]:
    """TRANSPOSE -> 1x1 average pools, each over its IFM view and writing its OFM with the height and
    width strides swapped (its OFM shape is its IFM view, how the hardware walks it): one as
    declared, or the steps of its merged view (``transpose_view``)."""
    src, out = op.inputs[0], op.outputs[0]
    assert src is not None
    one = _one_step_view(op)
    if one is not None:
        return (_pool(op, f"{op.name}_avgpool", src, one, out),)
    view = transpose_view(op)
    steps = transpose_steps(*view) if view is not None else None
    assert steps
    ops: list[NpuOp] = []
    current = src
    for k, (seen, perm) in enumerate(steps):
        last = k == len(steps) - 1
        moved = tuple(seen[p] for p in perm)
        target = out if last else Tensor(f"{out.name}_step{k}", moved, src.dtype, src.quant)
        ops.append(_pool(op, f"{op.name}_avgpool" if last else f"{target.name}_avgpool", current, _view4(seen), target))
        current = target
    return tuple(ops)


def _pool(op: Op, name: str, src: Tensor, view: Shape4D, out: Tensor) -> NpuOp:
    return NpuOp(name=name, tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING, ifm=src,
                 ifm_shape=view, ofm=out, ofm_shape=view, pool=PoolKind.AVERAGE, source_index=op.index)


def transpose_view(op: Op) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The merged ``(dims, perm)`` a TRANSPOSE carries (``fold_transpose_views``), or None."""
    found = op.options.get("transpose_view")
    return None if found is None else (tuple(found[0]), tuple(found[1]))


def _sole_reshape(graph: Graph, tensor: Tensor, *, reading: bool) -> Op | None:
    """The RESHAPE that alone reads ``tensor`` (``reading``) or writes it and nothing else reads."""
    if tensor in graph.outputs or tensor in graph.inputs:
        return None
    readers = graph.consumers().get(tensor, [])
    if reading:
        return readers[0] if len(readers) == 1 and readers[0].type == "RESHAPE" else None
    producer = graph.producers().get(tensor)
    return producer if producer is not None and producer.type == "RESHAPE" and len(readers) == 1 else None


def fold_transpose_views(graph: Graph, *, skip: frozenset[int] = frozenset()) -> tuple[Graph, Removed]:
    """Give each TRANSPOSE the NPU cannot run as declared, but can in at most two steps, its merged
    view (option ``transpose_view``), taking in a RESHAPE alone before or after it (so a 5-D
    channel shuffle reads and writes the 4-D maps around it). One that only moves axes of size 1
    moves no data: it becomes a RESHAPE. Those whose index is in ``skip`` are left as declared."""
    removed: list[tuple[str, str]] = []
    for op in [o for o in graph.ops if o.type == "TRANSPOSE" and o.index not in skip]:
        src, perm_tensor, out = op.inputs[0], op.inputs[1], op.outputs[0]
        if src is None or perm_tensor is None or perm_tensor.data is None or _one_step_view(op) is not None:
            continue
        if src.dtype != out.dtype or src.quant != out.quant:
            continue
        perm = tuple(int(v) for v in perm_tensor.data.reshape(-1))
        dims, merged = merged_permutation(src.shape, perm)
        if merged == tuple(range(len(merged))):  # it only moves axes of size 1: a RESHAPE
            graph = replace_op(graph, op, Op("RESHAPE", (src,), (out,), frozen_options({"new_shape": out.shape}),
                                             op.index))
            continue
        if not transpose_steps(dims, merged):
            continue
        before, after = _sole_reshape(graph, src, reading=False), _sole_reshape(graph, out, reading=True)
        if before is not None and before.inputs[0] is None:
            before = None
        new_src = before.inputs[0] if before is not None and before.inputs[0] is not None else src
        new_out = after.outputs[0] if after is not None else out
        if len(new_src.shape) > 4 or len(new_out.shape) > 4 or new_src.quant != src.quant or new_out.quant != out.quant:
            continue
        folded = Op("TRANSPOSE", (new_src, perm_tensor), (new_out,),
                    frozen_options({**op.options, "transpose_view": (dims, merged)}), op.index)
        graph = replace_op(graph, op, folded)
        for reshape in (r for r in (before, after) if r is not None):
            graph = without_op(graph, reshape)
            removed.append((reshape.name, "RESHAPE folded into a transpose's view"))
    return graph, tuple(removed)
