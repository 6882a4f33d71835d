"""Rewrite TensorFlow's dilated convolution pattern into one dilated convolution.

TensorFlow lowers a convolution with ``dilation_rate > 1`` to SPACE_TO_BATCH_ND (pad, then move
each of the ``r x r`` phases into the batch), an undilated VALID convolution, and
BATCH_TO_SPACE_ND (move the phases back, then crop). The three together are the convolution
dilated by ``r`` over the input padded by the paddings less the crops, which the NPU runs
directly (Vela's default core does the same). The pattern is rewritten only when it matches
exactly: the same block sizes in both moves (one per axis: a block of (r, 1) dilates the
height only, as Keras writes ``dilation_rate=(r, 1)``), a stride-1 undilated VALID convolution between the two, each tensor
read by the next op only, and unchanged quantization through the moves.

A dilated Conv1D is the same pattern on 3-D tensors (batch, length, channels): a one-axis
SPACE_TO_BATCH_ND, EXPAND_DIMS to 1 x length, the 1 x k convolution, RESHAPE (or SQUEEZE) back
to 3-D and BATCH_TO_SPACE_ND. It becomes EXPAND_DIMS, a convolution dilated along the width and
the RESHAPE, which the reshape pass then drops.
"""

from __future__ import annotations

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
from npuplan.ir.types import DataType
from npuplan.lowering._util import replace_op, with_options, without_op

Removed = tuple[tuple[str, str], ...]
_CONVS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D"})


def _ints(op: Op, index: int) -> list[int] | None:
    t = op.inputs[index] if len(op.inputs) > index else None
    if t is None or t.data is None:
        return None
    return [int(v) for v in t.data.reshape(-1)]


def _sole_reader(graph: Graph, op: Op, kinds: frozenset[str]) -> Op | None:
    out = op.outputs[0]
    readers = graph.consumers().get(out, [])
    if len(readers) != 1 or readers[0].type not in kinds or out in graph.outputs:
        return None
    return readers[0]


def _plain_valid(conv: Op) -> bool:
    """A VALID, stride-1, undilated convolution (the middle of the pattern)."""
    o = conv.options
    strides = (int(o.get("stride_h", 1)), int(o.get("stride_w", 1)))
    dilations = (int(o.get("dilation_h_factor", 1)), int(o.get("dilation_w_factor", 1)))
    return o.get("padding") == "VALID" and strides == (1, 1) and dilations == (1, 1)


def _dilated(graph: Graph, s2b: Op) -> tuple[Op, Op, Op] | None:
    """``(s2b, conv, b2s)`` and the rewritten conv, when ``s2b`` starts the pattern."""
    conv = _sole_reader(graph, s2b, _CONVS)
    b2s = _sole_reader(graph, conv, frozenset({"BATCH_TO_SPACE_ND"})) if conv is not None else None
    if conv is None or b2s is None or conv.inputs[0] is not s2b.outputs[0]:
        return None
    block, pads = _ints(s2b, 1), _ints(s2b, 2)
    block_back, crops = _ints(b2s, 1), _ints(b2s, 2)
    if block is None or pads is None or block_back != block or crops is None or len(block) != 2:
        return None
    if min(block) < 1 or max(block) < 2 or len(pads) != 4 or len(crops) != 4:
        return None
    if not _plain_valid(conv):
        return None
    src, mid_in, mid_out, dst = s2b.inputs[0], s2b.outputs[0], conv.outputs[0], b2s.outputs[0]
    if src is None or src.quant != mid_in.quant or mid_out.quant != dst.quant or len(src.shape) != 4:
        return None
    top, bottom, left, right = pads[0] - crops[0], pads[1] - crops[1], pads[2] - crops[2], pads[3] - crops[3]
    if min(top, bottom, left, right) < 0:
        return None
    rate_h, rate_w = block
    weights = conv.inputs[1]
    if weights is None or len(weights.shape) != 4:
        return None
    kh, kw = weights.shape[1], weights.shape[2]
    out_h = src.shape[1] + top + bottom - (kh - 1) * rate_h
    out_w = src.shape[2] + left + right - (kw - 1) * rate_w
    if (out_h, out_w) != (dst.shape[1], dst.shape[2]):
        return None
    rewritten = with_options(conv, dilation_h_factor=rate_h, dilation_w_factor=rate_w,
                             explicit_padding=(top, left, bottom, right))
    rewritten = Op(rewritten.type, (src, *conv.inputs[1:]), (dst,), rewritten.options, conv.index)
    return s2b, b2s, rewritten


_TO_3D = frozenset({"RESHAPE", "SQUEEZE"})


def _chain_1d(graph: Graph, s2b: Op) -> tuple[Op, Op, Op, Op] | None:
    """``(expand, conv, reshape, b2s)`` after a one-axis ``s2b`` on a 3-D tensor, or None."""
    expand = _sole_reader(graph, s2b, frozenset({"EXPAND_DIMS"}))
    conv = _sole_reader(graph, expand, _CONVS) if expand is not None else None
    back = _sole_reader(graph, conv, _TO_3D) if conv is not None else None
    b2s = _sole_reader(graph, back, frozenset({"BATCH_TO_SPACE_ND"})) if back is not None else None
    if expand is None or conv is None or back is None or b2s is None:
        return None
    if len(expand.outputs[0].shape) != 4 or expand.outputs[0].shape[1] != 1 or conv.inputs[0] is not expand.outputs[0]:
        return None
    return expand, conv, back, b2s


def _dilated_1d(graph: Graph, s2b: Op) -> tuple[tuple[Op, ...], tuple[Op, ...]] | None:
    """The ops of a dilated Conv1D pattern starting at ``s2b`` and the ops replacing them, or None."""
    chain = _chain_1d(graph, s2b)
    src = s2b.inputs[0]
    if chain is None or src is None or len(src.shape) != 3:
        return None
    expand, conv, back, b2s = chain
    block, pads, block_back, crops = _ints(s2b, 1), _ints(s2b, 2), _ints(b2s, 1), _ints(b2s, 2)
    if block is None or len(block) != 1 or block[0] < 2 or block_back != block or pads is None or crops is None:
        return None
    if len(pads) != 2 or len(crops) != 2:
        return None
    if not _plain_valid(conv):
        return None
    moved = (s2b.outputs[0], expand.outputs[0], conv.outputs[0], back.outputs[0])
    dst, weights = b2s.outputs[0], conv.inputs[1]
    if src.quant != moved[0].quant or moved[0].quant != moved[1].quant or moved[2].quant != moved[3].quant \
            or moved[3].quant != dst.quant or len(dst.shape) != 3 or weights is None or len(weights.shape) != 4:
        return None
    left, right, rate = pads[0] - crops[0], pads[1] - crops[1], block[0]
    if min(left, right) < 0 or weights.shape[1] != 1:
        return None
    if src.shape[1] + left + right - (weights.shape[2] - 1) * rate != dst.shape[1]:
        return None
    seen = Tensor(moved[1].name, (1, 1, *src.shape[1:]), moved[1].dtype, moved[1].quant)
    out = Tensor(moved[2].name, (1, 1, *dst.shape[1:]), moved[2].dtype, moved[2].quant)
    shape_data = np.asarray(dst.shape, dtype=np.int32)
    shape_data.flags.writeable = False
    shape = Tensor(f"{dst.name}_shape", (3,), DataType.INT32, None, shape_data)
    dilated = with_options(conv, dilation_w_factor=rate, explicit_padding=(0, left, 0, right))
    new = (Op(expand.type, (src, *expand.inputs[1:]), (seen,), expand.options, expand.index),
           Op(conv.type, (seen, *conv.inputs[1:]), (out,), dilated.options, conv.index),
           Op("RESHAPE", (out, shape), (dst,), frozen_options({}), back.index))
    return (s2b, expand, conv, back, b2s), new


def _fold_1d(graph: Graph, s2b: Op, removed: list[tuple[str, str]]) -> Graph:
    found = _dilated_1d(graph, s2b)
    if found is None:
        return graph
    (s2b, expand, conv, back, b2s), (new_expand, new_conv, new_back) = found
    graph = replace_op(replace_op(replace_op(graph, expand, new_expand), conv, new_conv), back, new_back)
    removed += [(s2b.name, f"SPACE_TO_BATCH_ND folded into the dilated convolution '{new_conv.name}'"),
                (b2s.name, f"BATCH_TO_SPACE_ND folded into the dilated convolution '{new_conv.name}'")]
    return without_op(without_op(graph, s2b), b2s)


def fold_dilated_convolutions(graph: Graph) -> tuple[Graph, Removed]:
    """Replace each SPACE_TO_BATCH_ND -> conv -> BATCH_TO_SPACE_ND by one dilated convolution (and
    the Conv1D form by EXPAND_DIMS -> dilated convolution -> RESHAPE)."""
    removed: list[tuple[str, str]] = []
    for s2b in [o for o in graph.ops if o.type == "SPACE_TO_BATCH_ND"]:
        if s2b not in graph.ops:
            continue
        found = _dilated(graph, s2b)
        if found is None:
            graph = _fold_1d(graph, s2b, removed)
            continue
        _, b2s, rewritten = found
        conv = _sole_reader(graph, s2b, _CONVS)
        assert conv is not None
        graph = without_op(without_op(replace_op(graph, conv, rewritten), s2b), b2s)
        removed += [(s2b.name, f"SPACE_TO_BATCH_ND folded into the dilated convolution '{rewritten.name}'"),
                    (b2s.name, f"BATCH_TO_SPACE_ND folded into the dilated convolution '{rewritten.name}'")]
    return graph, tuple(removed)
