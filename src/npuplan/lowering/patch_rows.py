"""Run a "patchify" convolution (a height stride above 3, its kernel as tall as its stride) per row of patches.

ViT, ConvNeXt, Swin and MLP-Mixer stems cut the image into non-overlapping patches with one
CONV_2D whose kernel equals its stride (4x4 stride 4, 16x16 stride 16). The hardware takes strides
up to 3. Its width stride folds into depth (``strided_conv``); its height stride cannot, but as no
two patches share a row, the image (``1 x H x W x C``) is a batch of ``H / s`` rows of patches
(``H/s x s x W x C``, the same bytes: a RESHAPE), and on each the convolution is one output row tall
at any height stride (1 here). Where the kernel is as wide as its width stride, each patch's
columns are seen as the depth of one pixel too (``W x C`` as ``W/r x rC``, the weights alike), so the
convolution is one column wide at stride 1. ``batches.split_batches`` then runs it per row of patches (a SPLIT
into the rows, the convolutions, a CONCATENATION the NPU writes in place) and the result is seen as
the declared output again (a RESHAPE). Vela's default core runs such a convolution on the NPU
too, as one operation per output pixel.

Covered: CONV_2D of a 4-D batch-1 IFM whose height divides by the stride, unpadded (VALID, or SAME
needing no padding), undilated, whose convolution per row the NPU runs (``unsupported_reason``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
from npuplan.lowering.batches import reshape_view
from npuplan.lowering.stride_rows import strided_rows
from npuplan.lowering.support import unsupported_reason

_HW_MAX_STRIDE = 3
_MAX_DIM = 65535
_MAX_ROWS = 1024  # rows of patches, one operation each (224 x 224 images at stride 4: 56)


def _unpadded(op: Op, height: int, width: int) -> bool:
    """Whether ``op`` (stride = kernel height) pads nothing: VALID, or SAME of no padding."""
    o, weights = op.options, op.inputs[1]
    if "explicit_padding" in o or weights is None:
        return False
    if o.get("padding") == "VALID":
        return True
    kw, sw = int(weights.shape[2]), int(o.get("stride_w", 1))
    return o.get("padding") == "SAME" and max((-(-width // sw) - 1) * sw + kw - width, 0) == 0 and height > 0


def patch_stride(op: Op) -> int:
    """The height stride ``s`` of a patchify CONV_2D this pass runs per row of patches, else 0."""
    if op.type != "CONV_2D" or len(op.inputs) < 2 or len(op.outputs) != 1:
        return 0
    ifm, weights, o = op.inputs[0], op.inputs[1], op.options
    s = int(o.get("stride_h", 1))
    if ifm is None or weights is None or len(ifm.shape) != 4 or len(weights.shape) != 4 or s <= _HW_MAX_STRIDE:
        return 0
    n, h, w, _ = ifm.shape
    if n != 1 or h % s or int(weights.shape[1]) != s or int(o.get("dilation_h_factor", 1)) != 1:
        return 0
    if not all(1 <= int(d) <= _MAX_DIM for d in (*ifm.shape, *weights.shape)) or h // s > _MAX_ROWS:
        return 0  # a hostile file's shapes (the hardware's dimensions), or more rows than operations worth
    return s if _unpadded(op, h, w) else 0


def _patches_in_depth(op: Op) -> tuple[int, Tensor | None]:
    """(r, weights) folding the width into depth: where the kernel is as wide as its width stride
    and the width divides by it, each patch's ``r`` columns are ``r * C`` channels of one pixel (the
    same bytes) and the kernel one column wide (its ``r x C`` taps the same order); else (1, the
    weights), left to ``strided_conv``."""
    ifm, weights = op.inputs[0], op.inputs[1]
    assert ifm is not None and weights is not None and weights.data is not None
    r = int(op.options.get("stride_w", 1))
    oc, kh, kw, c = weights.shape
    if kw != r or r == 1 or ifm.shape[2] % r or int(op.options.get("dilation_w_factor", 1)) != 1:
        return 1, weights
    data = np.asarray(weights.data).reshape(oc, kh, 1, kw * c)
    data.flags.writeable = False
    return r, replace(weights, name=f"{weights.name}_patches_in_depth", shape=data.shape, data=data, signature=None)


def _per_patch_row(op: Op, s: int) -> list[Op] | None:
    """``op`` as RESHAPE, a convolution over a batch of rows of patches, RESHAPE (None: the NPU
    does not run the convolution on one row of patches)."""
    ifm, out = op.inputs[0], op.outputs[0]
    assert ifm is not None
    _, h, w, c = ifm.shape
    _, oh, ow, oc = out.shape
    r, weights = _patches_in_depth(op)
    rows = replace(ifm, name=f"{ifm.name}_patch_rows", shape=(h // s, s, w // r, c * r), data=None, signature=None)
    out_rows = replace(out, name=f"{out.name}_patch_rows", shape=(oh, 1, ow, oc), data=None, signature=None)
    options = frozen_options({**op.options, "stride_h": 1, "padding": "VALID", **({"stride_w": 1} if r > 1 else {})})
    inputs = (rows, weights, *op.inputs[2:])
    row = replace(rows, name=f"{rows.name}_row", shape=(1, *rows.shape[1:]))
    if oh != h // s or unsupported_reason(Op(op.type, (row, *inputs[1:]), (replace(out_rows, shape=(1, 1, ow, oc)),),
                                             options, op.index)) is not None:
        return None
    conv = Op(op.type, inputs, (out_rows,), options, op.index)
    return [reshape_view(ifm, rows, op.index), conv, reshape_view(out_rows, out, op.index)]


def split_patch_rows(graph: Graph) -> tuple[Graph, bool]:
    """Each patchify convolution (``patch_stride``) as a convolution over its rows of patches (a
    batch, which ``batches.split_batches`` then runs per element), any other of height stride above
    3 one output row at a time (``stride_rows``), and whether there was any."""
    ops: list[Op] = []
    changed = False
    for op in graph.ops:
        s = patch_stride(op)
        rewritten = _per_patch_row(op, s) if s else strided_rows(op)
        ops.extend(rewritten if rewritten is not None else (op,))
        changed = changed or rewritten is not None
    return (replace(graph, ops=tuple(ops)), True) if changed else (graph, False)
