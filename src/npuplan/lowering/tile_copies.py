"""A nearest-neighbour upscale by whole factors (fh, fw) the resampling hardware cannot do (3x, or
unequal factors: Keras UpSampling2D((2, 3))) as copies, the way Vela's default core runs such
reshape/tile chains (memory copies), in at most fw + fh ops:

* width: ``fw`` 1x1 average-pool copies of the IFM, seen as (H*W) x 1 x C, into column j of an
  intermediate seen as (H*W) x fw x C (its bytes are the width-upscaled H x fw*W x C);
* height: ``fh`` copies of that, seen as H x 1 x (fw*W*C), into column i of the OFM seen as
  H x fh x (fw*W*C) (its bytes are fh*H x fw*W x C).

Each copy writes at an offset through a reshaped view, so these tensors stay in the linear format
and the ops run whole (no cascades), like concatenation copies.
"""

from __future__ import annotations

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import BlockType, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.lowering._util import fused_activation

MAX_VIEW_DIM = 65535


def copy_reason(ifm_shape: Shape4D, factors: tuple[int, int]) -> str | None:
    """Why the copies cannot run (a reshaped view too large for the hardware), or None."""
    fh, fw = factors
    rows, row_elements = ifm_shape.h * ifm_shape.w, fw * ifm_shape.w * ifm_shape.c
    if (fw > 1 and rows > MAX_VIEW_DIM) or (fh > 1 and row_elements > MAX_VIEW_DIM):
        return (f"Upscaling by {fh}x{fw} needs views of {rows} rows or {row_elements} elements per row, "
                f"more than {MAX_VIEW_DIM}")
    return None


def _copy(op: Op, name: str, ifm: Tensor, ifm_view: Shape4D, ofm: Tensor, ofm_view: Shape4D,
          column: int) -> NpuOp:
    return NpuOp(
        name=name, tflite_type=op.type, op_type="MemoryCopy", block_type=BlockType.POOLING,
        ifm=ifm, ifm_shape=ifm_view, ofm=ofm, ofm_shape=ofm_view, pool=PoolKind.AVERAGE,
        activation=fused_activation(op.options), ofm_write_offset=Shape4D(0, 0, column, 0), ofm_write_shape=ifm_view, source_index=op.index,
    )


def convert_tile_copies(op: Op, factors: tuple[int, int]) -> tuple[NpuOp, ...]:
    """The width then height copies of a (fh, fw) nearest upscale of ``op``'s IFM into its OFM."""
    ifm, ofm = op.inputs[0], op.outputs[0]
    assert ifm is not None
    fh, fw = factors
    s = ifm.shape4d
    name = str(op.options.get("npu_name", op.name))
    ops: list[NpuOp] = []
    source, source_view = ifm, Shape4D(1, s.h * s.w, 1, s.c)
    if fw > 1:
        wide = ofm if fh == 1 else Tensor(f"{ofm.name}_wide", (1, s.h * s.w, fw, s.c), ofm.dtype, ofm.quant)
        view = Shape4D(1, s.h * s.w, fw, s.c)
        ops += [_copy(op, f"{name}_w{j}", ifm, source_view, wide, view, j) for j in range(fw)]
        source = wide
    row = Shape4D(1, s.h, 1, fw * s.w * s.c)
    if fh > 1:
        view = Shape4D(1, s.h, fh, fw * s.w * s.c)
        ops += [_copy(op, f"{name}_h{i}", source, row, ofm, view, i) for i in range(fh)]
    return tuple(ops)
