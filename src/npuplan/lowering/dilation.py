"""Rewrite TensorFlow's dilated convolution pattern into one dilated convolution.

TensorFlow lowers a convolution with ``dilation_rate > 1`` to SPACE_TO_BATCH_ND (pad, then move
each of the ``r x r`` phases into the batch), an undilated VALID convolution, and
BATCH_TO_SPACE_ND (move the phases back, then crop). The three together are the convolution
dilated by ``r`` over the input padded by the paddings less the crops, which the NPU runs
directly (Vela's default core does the same). The pattern is rewritten only when it matches
exactly: equal block sizes, a stride-1 undilated VALID convolution between the two, each tensor
read by the next op only, and unchanged quantization through the moves.
"""

from __future__ import annotations

from npuplan.ir.graph import Graph, Op
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
    if block[0] != block[1] or block[0] < 2 or len(pads) != 4 or len(crops) != 4:
        return None
    o = conv.options
    if o.get("padding") != "VALID" or int(o.get("stride_h", 1)) != 1 or int(o.get("stride_w", 1)) != 1:
        return None
    if int(o.get("dilation_h_factor", 1)) != 1 or int(o.get("dilation_w_factor", 1)) != 1:
        return None
    src, mid_in, mid_out, dst = s2b.inputs[0], s2b.outputs[0], conv.outputs[0], b2s.outputs[0]
    if src is None or src.quant != mid_in.quant or mid_out.quant != dst.quant or len(src.shape) != 4:
        return None
    top, bottom, left, right = pads[0] - crops[0], pads[1] - crops[1], pads[2] - crops[2], pads[3] - crops[3]
    if min(top, bottom, left, right) < 0:
        return None
    rate = block[0]
    weights = conv.inputs[1]
    if weights is None or len(weights.shape) != 4:
        return None
    kh, kw = weights.shape[1], weights.shape[2]
    out_h = src.shape[1] + top + bottom - (kh - 1) * rate
    out_w = src.shape[2] + left + right - (kw - 1) * rate
    if (out_h, out_w) != (dst.shape[1], dst.shape[2]):
        return None
    rewritten = with_options(conv, dilation_h_factor=rate, dilation_w_factor=rate,
                             explicit_padding=(top, left, bottom, right))
    rewritten = Op(rewritten.type, (src, *conv.inputs[1:]), (dst,), rewritten.options, conv.index)
    return s2b, b2s, rewritten


def fold_dilated_convolutions(graph: Graph) -> tuple[Graph, Removed]:
    """Replace each SPACE_TO_BATCH_ND -> conv -> BATCH_TO_SPACE_ND by one dilated convolution."""
    removed: list[tuple[str, str]] = []
    for s2b in [o for o in graph.ops if o.type == "SPACE_TO_BATCH_ND"]:
        if s2b not in graph.ops:
            continue
        found = _dilated(graph, s2b)
        if found is None:
            continue
        _, b2s, rewritten = found
        conv = _sole_reader(graph, s2b, _CONVS)
        assert conv is not None
        graph = without_op(without_op(replace_op(graph, conv, rewritten), s2b), b2s)
        removed += [(s2b.name, f"SPACE_TO_BATCH_ND folded into the dilated convolution '{rewritten.name}'"),
                    (b2s.name, f"BATCH_TO_SPACE_ND folded into the dilated convolution '{rewritten.name}'")]
    return graph, tuple(removed)
