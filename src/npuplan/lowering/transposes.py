"""Decompose a TRANSPOSE the NPU cannot run in one step into transposes it can.

The NPU transposes by writing a 1x1 pool's output with its height and width strides swapped:
one step swaps two axes of a map (``A x B x C -> B x A x C``, and so a matrix ``X x Y -> Y x X``
seen as ``X x Y x 1``), on a reshaped view of the bytes; ``transpose_steps`` finds the steps of
any permutation (at most two for three axes).

A step that is a matrix transpose (``X x Y x 1``, one channel deep) walks one element per pixel: the
pool computes one channel of each 8-deep OFM micro-block. Where the rows group in tiles of 3 or 2
(8-bit elements), a convolution transposes it instead (``_tile_conv``): a ``t x 1`` kernel of
stride ``t`` with unit weights puts each tile's column in ``t`` channels, written with the strides
swapped as the pool's OFM (op_transpose_hc on u55-128: 15556 -> 5176 cycles, Vela's file 15256,
all timed by ``npuplan estimate``).

A permutation is first merged: axes of size 1 dropped, axes that stay next to each other in order
merged into one (ShuffleNet's channel shuffle ``(1, H, W, g, C/g) -> (1, H, W, C/g, g)`` is
``(H*W, g, C/g) -> (H*W, C/g, g)``). Vela's default core runs all these on the NPU too.
"""

from __future__ import annotations

import math

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
from npuplan.ir.lowered import BlockType, Kernel, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering._util import replace_op, without_op
from npuplan.lowering.transpose_steps import MAX_AXES, MAX_DIM, Steps, transpose_steps

Removed = tuple[tuple[str, str], ...]


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
    if len(shape) == 4 and perm[0] == 0 and shape[0] == 1:  # a batch above 1: the merged steps
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
        return (f"Only transposes of at most {MAX_AXES} axes (after merging the axes that stay together), each "
                f"step's view at most {MAX_DIM} a side, run on the NPU (shape {list(src.shape)})")
    return None


def _view4(seen: tuple[int, ...]) -> Shape4D:
    """A step's view as the pool walks it: a map ``A x B x C``, or a matrix ``X x Y`` as ``X x Y x 1``."""
    return Shape4D(1, *seen) if len(seen) == 3 else Shape4D(1, seen[0], seen[1], 1)


def _step_views(op: Op) -> tuple[Shape4D, ...]:
    """The IFM view of each step of a TRANSPOSE the NPU runs: one as declared, or the steps of its
    merged view (``transpose_view``)."""
    one = _one_step_view(op)
    return (one,) if one is not None else tuple(_view4(seen) for seen, _ in _merged_steps(op))


def _merged_steps(op: Op) -> Steps:
    """The steps of a TRANSPOSE's merged view (``transpose_view``)."""
    view = transpose_view(op)
    steps = transpose_steps(*view) if view is not None else None
    assert steps
    return steps


def tiles_transpose(op: Op) -> bool:
    """Whether a TRANSPOSE the NPU runs has a matrix step a tile convolution may transpose
    (``convert_transpose``'s ``tiles``)."""
    src = op.inputs[0]
    return src is not None and transpose_reason(op) is None and any(
        tile_rows(view, src.dtype) is not None for view in _step_views(op))


def convert_transpose(op: Op, *, tiles: bool = False) -> tuple[NpuOp, ...]:
    """TRANSPOSE -> 1x1 average pools, each over its IFM view and writing its OFM with the height and
    width strides swapped (its OFM shape is its IFM view, how the hardware walks it): one as
    declared, or the steps of its merged view (``transpose_view``). With ``tiles``, each matrix step
    whose rows group in tiles is a tile convolution instead (``_tile_conv``)."""
    src, out = op.inputs[0], op.outputs[0]
    assert src is not None
    one = _one_step_view(op)
    if one is not None:
        return (_step(op, f"{op.name}_avgpool", src, one, out, tiles),)
    steps = _merged_steps(op)
    ops: list[NpuOp] = []
    current = src
    for k, (seen, perm) in enumerate(steps):
        last = k == len(steps) - 1
        moved = tuple(seen[p] for p in perm)
        target = out if last else Tensor(f"{out.name}_step{k}", moved, src.dtype, src.quant)
        ops.append(_step(op, f"{op.name}_avgpool" if last else f"{target.name}_avgpool", current, _view4(seen), target,
                         tiles))
        current = target
    return tuple(ops)


def _step(op: Op, name: str, src: Tensor, view: Shape4D, out: Tensor, tiles: bool) -> NpuOp:
    """One step: with ``tiles``, a matrix transpose (``view`` one channel deep) by a tile
    convolution where its rows group in tiles (``tile_rows``); else the 1x1 pool."""
    tile = tile_rows(view, src.dtype) if tiles else None
    return _pool(op, name, src, view, out) if tile is None else _tile_conv(op, name, src, view, out, tile)


TILE_ROWS = (3, 2)  # the tile heights tried, largest first (a kernel stride above 3 is not run)
_UNIT = Quantization((1.0,), (0,))


def tile_rows(view: Shape4D, dtype: DataType) -> int | None:
    """The rows per tile of the convolution transposing the matrix ``view`` (``X x Y x 1``), or None
    when it is no such matrix, its rows group in no tile, or its elements are wider than 8 bits."""
    if view.c != 1 or view.n != 1 or dtype not in (DataType.INT8, DataType.UINT8):
        return None
    return next((t for t in TILE_ROWS if view.h % t == 0), None)


def _tile_conv(op: Op, name: str, src: Tensor, view: Shape4D, out: Tensor, tile: int) -> NpuOp:
    """The matrix ``X x Y`` (``view``, one channel deep) transposed by a ``tile x 1`` convolution of
    stride ``tile`` down its rows, whose unit weights put the ``tile`` elements of each column it
    covers in that many channels: OFM pixel ``(i1, j)`` holds ``M[tile*i1 + i0][j]`` in channel
    ``i0``, and written with the height and width strides swapped (as the pool's) it lands at
    ``j*X + tile*i1 + i0``, the transposed matrix. Eight channels of the OFM micro-block are
    computed per pixel where the pool computes one."""
    weights = np.eye(tile, dtype=np.int8).reshape(tile, tile, 1, 1)  # OHWI: output i0 reads kernel row i0
    weights.flags.writeable = False
    bias = np.zeros(tile, dtype=np.int32)
    bias.flags.writeable = False
    return NpuOp(name=name, tflite_type=op.type, op_type="Conv2DBias", block_type=BlockType.CONV, ifm=src,
                 ifm_shape=view, ofm=out, ofm_shape=Shape4D(1, view.h // tile, view.w, tile), weights=weights,
                 weight_tensor=Tensor(f"{name}_weights", weights.shape, DataType.INT8, _UNIT, weights), bias=bias,
                 kernel=Kernel(tile, 1, tile, 1), source_index=op.index)


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


def fold_transpose_views(graph: Graph) -> tuple[Graph, Removed]:
    """Give each TRANSPOSE the NPU cannot run as declared, but can in at most two steps, its merged
    view (option ``transpose_view``), taking in a RESHAPE alone before or after it (so a 5-D
    channel shuffle reads and writes the 4-D maps around it). One that only moves axes of size 1
    moves no data: it becomes a RESHAPE."""
    removed: list[tuple[str, str]] = []
    for op in [o for o in graph.ops if o.type == "TRANSPOSE"]:
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
