"""Decompose a TRANSPOSE the NPU cannot run in one step into transposes it can.

The NPU transposes by writing a 1x1 pool's output with its height and width strides swapped:
one step swaps two axes of a map (``A x B x C -> B x A x C``, and so a matrix ``X x Y -> Y x X``
seen as ``X x Y x 1``), on a reshaped view of the bytes; ``transpose_steps`` finds the steps of
any permutation (at most two for three axes).

A step that is a matrix transpose (``X x Y x 1``, one channel deep) walks one element per pixel; its
other form (``lowering.transpose_convs``, chosen per op by price) is a tile convolution, and a
permutation inside each pixel (a channel shuffle) one 1x1 convolution (op_transpose_hc on
u55-128: 15556 -> 5176 cycles, Vela's file 15256, all timed by ``npuplan estimate``).

Which steps run is priced per op too (``StepForm``): two steps of three axes in their other order
(another matrix, another swap depth), and a matrix whose rows group in no tile split in three steps
whose matrix does (pt_audio1d_49's 25 x 48 on u55-128: 9676 -> 4573 cycles).

A permutation is first merged: axes of size 1 dropped, axes that stay next to each other in order
merged into one (ShuffleNet's channel shuffle ``(1, H, W, g, C/g) -> (1, H, W, C/g, g)`` is
``(H*W, g, C/g) -> (H*W, C/g, g)``). Vela's default core runs all these on the NPU too.
"""

from __future__ import annotations

import math

from npuplan._compat import StrEnum
from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
from npuplan.ir.lowered import BlockType, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType
from npuplan.lowering._util import replace_op, without_op
from npuplan.lowering.transpose_convs import TILE_ROWS, channel_permutation, permutes_channels, tile_conv, tile_rows
from npuplan.lowering.transpose_steps import MAX_AXES, MAX_DIM, Steps, other_steps, transpose_steps

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
    if src is None or perm_tensor is None or perm_tensor.data is None or transpose_view(op) is not None:
        return None  # a merged view reads another tensor than the declared permutation's (a reshape taken in)
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


class StepForm(StrEnum):
    """Which steps a TRANSPOSE the NPU runs takes (``convert_transpose``'s ``steps``)."""

    MERGED = "merged"  # one as declared, or the steps of its merged view (``transpose_steps``)
    OTHER_ORDER = "other_order"  # two steps of three merged axes in their other order (``other_steps``)
    SPLIT_MATRIX_3 = "split_matrix_3"  # a matrix whose rows group in no tile in three steps (``_split_matrix``)
    SPLIT_MATRIX_2 = "split_matrix_2"  # ... through tiles of two rows


_SPLIT_TILES = {StepForm.SPLIT_MATRIX_3: 3, StepForm.SPLIT_MATRIX_2: 2}  # each split's tile rows


def _steps_of(op: Op, form: StepForm) -> Steps | None:
    """The steps of ``op`` (a TRANSPOSE the NPU runs) in ``form``, or None when it has no such
    steps (``MERGED``: None when it runs as declared, ``_one_step_view``)."""
    view = transpose_view(op)
    if form in _SPLIT_TILES:
        return _split_matrix(op, _SPLIT_TILES[form])
    if view is None or _one_step_view(op) is not None:
        return None
    return other_steps(*view) if form is StepForm.OTHER_ORDER else transpose_steps(*view)


def _split_matrix(op: Op, t: int) -> Steps | None:
    """A matrix ``X x Y`` whose rows group in no tile (``tile_rows``) but whose columns split as
    ``Y = t x Y2`` (``t`` a tile's rows, ``TILE_ROWS``), in three steps: swap
    ``(X, t, Y2) -> (t, X, Y2)`` (``Y2`` deep); the matrix ``(t*X) x Y2``, whose rows do group in
    tiles of ``t``; swap ``(Y2, t, X) -> (t, Y2, X)`` (``X`` deep), which is ``Y x X``. Two copies
    more, but the one step moving an element a pixel becomes a tile convolution (which ``t`` is
    cheaper depends on the depths: pt_audio1d_49's 25 x 48 on u55-128, 3 x 16: 5162 cycles,
    2 x 24: 4573). None for any other TRANSPOSE."""
    src = op.inputs[0]
    if src is None or src.dtype not in (DataType.INT8, DataType.UINT8):
        return None
    dims, perm = _merged(op)
    if len(dims) != 2 or perm != (1, 0) or tile_rows(_view4(dims), src.dtype) is not None:
        return None
    x, y = dims
    if t not in TILE_ROWS or y % t or y == t or x * t > MAX_DIM:
        return None
    swap, matrix = (1, 0, 2), (1, 0)
    return (((x, t, y // t), swap), ((t * x, y // t), matrix), ((y // t, t, x), swap))


def _step_views(op: Op, form: StepForm = StepForm.MERGED) -> tuple[Shape4D, ...]:
    """The IFM view of each step of a TRANSPOSE the NPU runs in ``form``: one as declared, or the
    steps (``_steps_of``)."""
    steps = _steps_of(op, form)
    if steps is None:
        one = _one_step_view(op)
        assert one is not None
        return (one,)
    return tuple(_view4(seen) for seen, _ in steps)


def has_steps(op: Op, form: StepForm) -> bool:
    """Whether a TRANSPOSE the NPU runs has steps in ``form`` (another order of its two steps:
    another matrix, another swap depth; a matrix split in three steps)."""
    return transpose_reason(op) is None and _steps_of(op, form) is not None


def _merged(op: Op) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The merged ``(dims, perm)`` of a TRANSPOSE (its source's shape and permutation merged)."""
    src, perm_tensor = op.inputs[0], op.inputs[1]
    assert src is not None and perm_tensor is not None and perm_tensor.data is not None
    return transpose_view(op) or merged_permutation(src.shape, tuple(int(v) for v in perm_tensor.data.reshape(-1)))


def has_convolution_form(op: Op, steps: StepForm = StepForm.MERGED) -> bool:
    """Whether a TRANSPOSE the NPU runs has a step a convolution may do (``convert_transpose``'s
    ``convolutions``): a matrix step in tiles, or a permutation inside each pixel (of its steps
    in ``steps``, ``has_steps``)."""
    src = op.inputs[0]
    if src is None or transpose_reason(op) is not None or (steps is not StepForm.MERGED and not has_steps(op, steps)):
        return False
    return (steps is StepForm.MERGED and permutes_channels(*_merged(op), src.dtype)) or any(
        tile_rows(view, src.dtype) is not None for view in _step_views(op, steps))


def convert_transpose(op: Op, *, convolutions: bool = False, steps: StepForm = StepForm.MERGED) -> tuple[NpuOp, ...]:
    """TRANSPOSE -> 1x1 average pools, each over its IFM view and writing its OFM with the height and
    width strides swapped (its OFM shape is its IFM view, how the hardware walks it): one as
    declared, or the steps of its merged view (``transpose_view``), or the steps of ``steps``
    (``has_steps``). With ``convolutions`` (``lowering.transpose_convs``), a permutation inside
    each pixel is one 1x1 convolution, else each matrix step whose rows group in tiles is a tile
    convolution."""
    src, out = op.inputs[0], op.outputs[0]
    assert src is not None
    if convolutions and steps is StepForm.MERGED and permutes_channels(*_merged(op), src.dtype):
        return (channel_permutation(op, f"{op.name}_permute", src, out, *_merged(op)),)
    tiles = convolutions
    found = _steps_of(op, steps)
    if found is None:
        one = _one_step_view(op)
        assert one is not None
        return (_step(op, f"{op.name}_avgpool", src, one, out, tiles),)
    ops: list[NpuOp] = []
    current = src
    for k, (seen, perm) in enumerate(found):
        last = k == len(found) - 1
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
    return _pool(op, name, src, view, out) if tile is None else tile_conv(op, name, src, view, out, tile)


def _pool(op: Op, name: str, src: Tensor, view: Shape4D, out: Tensor) -> NpuOp:
    return NpuOp(name=name, tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING, ifm=src,
                 ifm_shape=view, ofm=out, ofm_shape=view, pool=PoolKind.AVERAGE, source_index=op.index,
                 transposed_write=True)


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


_MAP_TYPES = (DataType.INT8, DataType.UINT8, DataType.INT16)  # the feature maps an NPU transposes


def _takes_in(other: Tensor | None, tensor: Tensor) -> bool:
    """Whether a reshape's ``other`` side may stand for ``tensor`` in a merged view: at most 4-D (the
    view the NPU reads or writes) and of the same quantization."""
    return other is not None and len(other.shape) <= 4 and other.quant == tensor.quant


def fold_transpose_views(graph: Graph, *, deployable: bool = False,
                         skip: frozenset[int] = frozenset()) -> tuple[Graph, Removed]:
    """Give each TRANSPOSE the NPU cannot run as declared, but can in steps, its merged view
    (option ``transpose_view``), taking in a RESHAPE alone before or after it (so a 5-D channel
    shuffle reads and writes the 4-D maps around it). One that only moves axes of size 1 moves no
    data: it becomes a RESHAPE, but in a ``deployable`` graph not where either side's 4-D view has
    a batch above 1 (a copy the emitter cannot write, and a rewritten operator the file could not
    leave to the CPU: it stays a TRANSPOSE, for the CPU). Those whose index is in ``skip`` are left as
    declared."""
    removed: list[tuple[str, str]] = []
    for op in [o for o in graph.ops if o.type == "TRANSPOSE" and o.index not in skip]:
        src, perm_tensor, out = op.inputs[0], op.inputs[1], op.outputs[0]
        if src is None or perm_tensor is None or perm_tensor.data is None or _one_step_view(op) is not None:
            continue
        if src.dtype != out.dtype or src.quant != out.quant or src.dtype not in _MAP_TYPES:
            continue  # a float map (a converter's unquantized tail) stays as declared, for the CPU
        perm = tuple(int(v) for v in perm_tensor.data.reshape(-1))
        dims, merged = merged_permutation(src.shape, perm)
        if merged == tuple(range(len(merged))):  # it only moves axes of size 1: a RESHAPE
            if deployable and max(src.shape4d.n, out.shape4d.n) > 1:
                continue
            graph = replace_op(graph, op, Op("RESHAPE", (src,), (out,), frozen_options({"new_shape": out.shape}),
                                             op.index))
            continue
        if not transpose_steps(dims, merged):
            continue
        before, after = _sole_reshape(graph, src, reading=False), _sole_reshape(graph, out, reading=True)
        if before is not None and not _takes_in(before.inputs[0], src):
            before = None
        if after is not None and not _takes_in(after.outputs[0], out):
            after = None  # e.g. PyTorch's NHWC -> NCHW before a 5-D channel shuffle: transposed as it is
        new_src = before.inputs[0] if before is not None and before.inputs[0] is not None else src
        new_out = after.outputs[0] if after is not None else out
        if len(new_src.shape) > 4 or len(new_out.shape) > 4:
            continue
        folded = Op("TRANSPOSE", (new_src, perm_tensor), (new_out,),
                    frozen_options({**op.options, "transpose_view": (dims, merged)}), op.index)
        graph = replace_op(graph, op, folded)
        for reshape in (r for r in (before, after) if r is not None):
            graph = without_op(graph, reshape)
            removed.append((reshape.name, "RESHAPE folded into a transpose's view"))
    return graph, tuple(removed)
