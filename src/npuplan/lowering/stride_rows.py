"""Run a convolution of height stride above 3 whose windows overlap or pad, one output row at a time.

PoolFormer, SegFormer and other MetaFormer stems embed overlapping patches: a 7x7 CONV_2D at stride
4, SAME. The hardware takes strides up to 3, and as the windows share rows, the image is no batch
of rows of patches (``patch_rows``). Each output row ``y`` reads the ``kh`` input rows from ``s * y``
of the padded image, so the convolution runs once per output row over those rows (a SLICE, which the
NPU reads where it lies), one output row tall at any height stride (1 here), and the rows are
concatenated (a CONCATENATION, written in place). SAME padding becomes a PAD of the input first (its
fill the zero point, as the convolution's own padding); the width stride above 3 is folded into
depth (``strided_conv``). Vela's default core runs such a convolution on the NPU too.

Covered: CONV_2D of a 4-D batch-1 IFM, VALID or SAME, undilated, whose convolution of one output row
the NPU runs (``unsupported_reason``).
"""

from __future__ import annotations

from dataclasses import replace

from npuplan.ir.graph import Op, Tensor, frozen_options
from npuplan.lowering.batches import int32_constant
from npuplan.lowering.support import unsupported_reason

_HW_MAX_STRIDE = 3
_MAX_DIM = 65535  # the hardware's feature-map dimensions (a hostile file's shapes are refused here)
_MAX_ROWS = 1024  # output rows run one operation each (224 x 224 images at stride 4: 56)


def _same_padding(size: int, out: int, stride: int, kernel: int) -> tuple[int, int]:
    """TFLite's SAME padding (before, after) along one axis."""
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def _padded(op: Op, ifm: Tensor, pads: tuple[tuple[int, int], tuple[int, int]]) -> tuple[list[Op], Tensor]:
    """The PAD of ``ifm`` by ``pads`` (rows, columns) when there is any padding, and its output."""
    if not any(sum(p) for p in pads):
        return [], ifm
    (top, bottom), (left, right) = pads
    _, h, w, c = ifm.shape
    out = replace(ifm, name=f"{ifm.name}_row_padded", shape=(1, h + top + bottom, w + left + right, c), data=None,
                  signature=None)
    amounts = int32_constant(f"{out.name}_paddings", [0, 0, top, bottom, left, right, 0, 0])
    amounts = replace(amounts, shape=(4, 2), data=amounts.data.reshape(4, 2) if amounts.data is not None else None)
    return [Op("PAD", (ifm, amounts), (out,), frozen_options({}), op.index)], out


def _covered(op: Op) -> bool:
    """Whether ``op`` is a CONV_2D of height stride above 3 this pass may run one row at a time."""
    if op.type != "CONV_2D" or len(op.inputs) < 2 or len(op.outputs) != 1:
        return False
    o, ifm, weights, out = op.options, op.inputs[0], op.inputs[1], op.outputs[0]
    return (ifm is not None and weights is not None and int(o.get("stride_h", 1)) > _HW_MAX_STRIDE
            and len(ifm.shape) == 4 and ifm.shape[0] == 1 and len(out.shape) == 4 and len(weights.shape) == 4
            and "explicit_padding" not in o and o.get("padding") in ("SAME", "VALID")
            and int(o.get("dilation_h_factor", 1)) == 1 and int(o.get("dilation_w_factor", 1)) == 1
            and all(1 <= int(d) <= _MAX_DIM for d in (*ifm.shape, *out.shape, *weights.shape))
            and out.shape[1] <= _MAX_ROWS and _declared_output(op))


def _declared_output(op: Op) -> bool:
    """Whether ``op``'s output has the rows and columns its padding and strides give (a hostile
    file's may not: its padding would be nonsense)."""
    o, ifm, weights, out = op.options, op.inputs[0], op.inputs[1], op.outputs[0]
    assert ifm is not None and weights is not None
    sizes = zip(ifm.shape[1:3], weights.shape[1:3], (o.get("stride_h", 1), o.get("stride_w", 1)), out.shape[1:3])
    if o.get("padding") == "SAME":
        return all(-(-int(n) // int(s)) == int(m) for n, _, s, m in sizes)
    return all(int(n) >= int(k) and (int(n) - int(k)) // int(s) + 1 == int(m) for n, k, s, m in sizes)


def strided_rows(op: Op) -> list[Op] | None:
    """``op`` (a CONV_2D of height stride above 3) as a PAD, one SLICE and convolution per output row and
    a CONCATENATION, or None when not covered or the NPU does not run the convolution of a row."""
    if not _covered(op):
        return None
    o, ifm, weights, out = op.options, op.inputs[0], op.inputs[1], op.outputs[0]
    assert ifm is not None and weights is not None
    (_, h, w, _), (_, oh, ow, _) = ifm.shape, out.shape
    s, sw, kh, kw = int(o.get("stride_h", 1)), int(o.get("stride_w", 1)), int(weights.shape[1]), int(weights.shape[2])
    same = o.get("padding") == "SAME"
    rows, (left, right) = _same_padding(h, oh, s, kh) if same else (0, 0), _same_padding(w, ow, sw, kw) if same else (0, 0)
    # else columns past the last window up to a multiple of the width stride (never read), so that
    # the width stride folds into depth without a smaller factor
    extra = -(w + left + right) % sw if sw > _HW_MAX_STRIDE else 0
    return _row_ops(op, (rows, (left, right))) or (_row_ops(op, (rows, (left, right + extra))) if extra else None)


def _row_ops(op: Op, pads: tuple[tuple[int, int], tuple[int, int]]) -> list[Op] | None:
    """``strided_rows``' operators for the input padded by ``pads`` (rows, columns), or None."""
    o, ifm, weights, out = op.options, op.inputs[0], op.inputs[1], op.outputs[0]
    assert ifm is not None and weights is not None
    _, oh, ow, oc = out.shape
    s, sw, kh, kw = int(o.get("stride_h", 1)), int(o.get("stride_w", 1)), int(weights.shape[1]), int(weights.shape[2])
    pad_ops, src = _padded(op, ifm, pads)
    _, height, width, c = src.shape
    options = frozen_options({**o, "stride_h": 1, "padding": "VALID"})
    rows = [replace(ifm, name=f"{ifm.name}_rows_{y}", shape=(1, kh, width, c), data=None, signature=None)
            for y in range(oh)]
    results = [replace(out, name=f"{out.name}_row_{y}", shape=(1, 1, ow, oc), data=None, signature=None)
               for y in range(oh)]
    convs = [Op(op.type, (row, *op.inputs[1:]), (result,), options, op.index) for row, result in zip(rows, results)]
    if ow != (width - kw) // sw + 1 or s * (oh - 1) + kh > height or unsupported_reason(convs[0]) is not None:
        return None
    slices = [Op("SLICE", (src, int32_constant(f"{row.name}_begin", [0, s * y, 0, 0]),
                           int32_constant(f"{row.name}_size", list(row.shape))), (row,), frozen_options({}), op.index)
              for y, row in enumerate(rows)]
    concat = Op("CONCATENATION", tuple(results), (out,), frozen_options({"axis": 1, "fused_activation_function": "NONE"}),
                op.index)
    return [*pad_ops, *slices, *convs, concat]
