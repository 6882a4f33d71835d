"""TILE of one axis -> copies of its input into the output, in the 4-D views of both (issue 25:
Vela's default core runs Keras' UpSampling2D repeat, EXPAND_DIMS -> 5-D TILE -> RESHAPE, on the NPU).

A 5-D map ``1 x A x B x W x C`` is seen as ``1 x A*B x W x C`` (``Shape4D.of``), so the tiled axis
lies in one axis of the 4-D views (H, W or C), alone or as a part of H. Copy ``k`` of ``f`` writes
the input's view:

- where the tiled axis is that 4-D axis alone or its outer part: as a box at offset
  ``k * size`` along it (the input's view repeated block by block);
- where it is the inner part of H and of size 1 (a new axis, as UpSampling2D's): every ``f``-th row
  from row ``k`` (a strided view; each input row repeated ``f`` times).
"""

from __future__ import annotations

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import BlockType, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D

_MAX_RANK = 5


def _multiples(op: Op) -> list[int] | None:
    m = op.inputs[1] if len(op.inputs) > 1 else None
    return None if m is None or m.data is None else [int(v) for v in m.data.reshape(-1)]


def _axis(op: Op) -> tuple[int, int] | None:
    """``(axis, multiple)`` of a TILE of one axis, or None."""
    multiples = _multiples(op)
    tiled = [(a, m) for a, m in enumerate(multiples or []) if m != 1]
    return tiled[0] if len(tiled) == 1 and tiled[0][1] > 1 else None


def _placement(shape: tuple[int, ...], axis: int) -> tuple[int, bool] | None:
    """The 4-D axis (0..3) ``axis`` of ``shape`` lies in and whether it is the outer part of it (or
    alone), None if in the middle of a merged axis."""
    rank = len(shape)
    if rank <= 4:
        return axis + 4 - rank, True
    group = list(range(1, rank - 2))  # the axes H merges
    if axis not in group:
        return (0 if axis == 0 else axis - rank + 4), True
    if axis == group[0]:
        return 1, True
    return (1, False) if axis == group[-1] else None


def tile_reason(op: Op) -> str | None:
    src, out = op.inputs[0], op.outputs[0]
    if src is None or not 1 <= len(src.shape) <= _MAX_RANK or len(out.shape) != len(src.shape):
        return f"TILE runs on the NPU for inputs of rank 1 to {_MAX_RANK}"
    if src.dtype != out.dtype or src.quant != out.quant:
        return "IFM and OFM data types and quantization must match"
    found = _axis(op)
    if found is None:
        return "TILE runs on the NPU along one axis (constant multiples, one above 1)"
    axis, _ = found
    place = _placement(tuple(src.shape), axis)
    if place is None or place[0] == 0 or (not place[1] and src.shape[axis] != 1):
        return f"TILE runs on the NPU along an axis of the 4-D view's height, width or depth ({list(src.shape)})"
    return None


def convert_tile(op: Op) -> tuple[NpuOp, ...]:
    """The copies of a TILE (see the module's docstring)."""
    src, out = op.inputs[0], op.outputs[0]
    assert src is not None
    found = _axis(op)
    assert found is not None
    axis, multiple = found
    place = _placement(tuple(src.shape), axis)
    assert place is not None
    axis4, outer = place
    view = src.shape4d
    size = view.as_list()[axis4]
    return tuple(_copy(op, out, src, view, axis4, k * size if outer else k, None if outer else (multiple, 1), k)
                 for k in range(multiple))


def _copy(op: Op, out: Tensor, src: Tensor, view: Shape4D, axis4: int, at: int, step: tuple[int, int] | None,
          k: int) -> NpuOp:
    offset = [0, 0, 0, 0]
    offset[axis4] = at
    return NpuOp(name=f"{op.name}{k}_avgpool", tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING,
                 ifm=src, ifm_shape=view, ofm=out, ofm_shape=view, pool=PoolKind.AVERAGE,
                 ofm_write_offset=Shape4D(*offset), ofm_write_shape=None if step else view, ofm_step=step,
                 source_index=op.index)

