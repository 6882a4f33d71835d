"""Fold an explicit PAD into the following convolution as hardware padding, where allowed.

Mirrors Vela: the PAD and the convolution must both run on the NPU, the PAD must only pad
height/width with the same data type and quantization on both sides, the padding of a side must
not exceed the dilated kernel less one (Vela's default core), and a leading pad larger than the stride must be a multiple of
it (otherwise the hardware would iterate the wrong rows). Average pools are not folded here
(Vela turns them into a depthwise convolution first); such PADs stay as PAD ops.
"""

from __future__ import annotations

from npuplan.ir.graph import Graph, Op
from npuplan.lowering._util import replace_op, with_options, without_op
from npuplan.lowering.memory_ops import PAD_TYPES, pad_value
from npuplan.lowering.support import unsupported_reason

Removed = tuple[tuple[str, str], ...]


def _leading_pad_ok(pad: int, stride: int, kernel: int) -> bool:
    half = kernel // 2
    return pad == half or half <= stride or pad % stride == 0


def _most_padding(kernel: int, before: int, after: int) -> int:
    """The most padding a side may take: the dilated kernel less one, as Vela's default core folds
    (symmetric, asymmetric and causal pads alike), so every output still reads at least one input
    element. (Vela's legacy core folded at most half the kernel.)"""
    return kernel - 1


def _foldable(pad_op: Op, conv: Op) -> tuple[int, int, int, int] | None:
    pad_in, pad_out, pads = pad_op.inputs[0], pad_op.outputs[0], pad_op.inputs[1]
    if pad_in is None or pads is None or pads.data is None:
        return None
    if pad_in.dtype != pad_out.dtype or pad_in.quant != pad_out.quant:
        return None
    rows = pads.data.reshape(-1, 2).tolist()
    rows = [[0, 0]] * (4 - len(rows)) + rows
    if any(rows[0]) or any(rows[3]):
        return None
    (top, bottom), (left, right) = rows[1], rows[2]
    own = conv.options.get("explicit_padding", (0, 0, 0, 0))  # a folded dilation's, added to the PAD's
    top, left, bottom, right = top + own[0], left + own[1], bottom + own[2], right + own[3]
    weights = conv.inputs[1]
    assert weights is not None
    kh, kw = weights.shape[1], weights.shape[2]
    o = conv.options
    dkh = (kh - 1) * int(o.get("dilation_h_factor", 1)) + 1
    dkw = (kw - 1) * int(o.get("dilation_w_factor", 1)) + 1
    if max(left, right) > _most_padding(dkw, left, right) or max(top, bottom) > _most_padding(dkh, top, bottom):
        return None
    if not _leading_pad_ok(top, int(o.get("stride_h", 1)), dkh):
        return None
    if not _leading_pad_ok(left, int(o.get("stride_w", 1)), dkw):
        return None
    return int(top), int(left), int(bottom), int(right)


def _zero_point_fill(pad_op: Op) -> bool:
    """Whether ``pad_op`` fills with its output's zero point (a PAD; a PADV2 of that constant), as
    the hardware pads a convolution's input."""
    if pad_op.type not in PAD_TYPES:
        return False
    ofm = pad_op.outputs[0]
    zero_point = int(ofm.quant.zero_point[0]) if ofm.quant and ofm.quant.zero_point else 0
    return pad_value(pad_op) == zero_point


def fold_pads(graph: Graph) -> tuple[Graph, Removed]:
    """Remove PADs (and PADV2s filling with the zero point) that a single following
    CONV_2D/DEPTHWISE_CONV_2D (VALID) can do in hardware."""
    removed: list[tuple[str, str]] = []
    for pad_op in [o for o in graph.ops if _zero_point_fill(o)]:
        users = graph.consumers().get(pad_op.outputs[0], [])
        if len(users) != 1 or pad_op.outputs[0] in graph.outputs:
            continue
        conv = users[0]
        if conv.type not in ("CONV_2D", "DEPTHWISE_CONV_2D") or conv.inputs[0] is not pad_op.outputs[0]:
            continue
        if conv.options.get("padding") != "VALID" and "explicit_padding" not in conv.options:
            continue
        if unsupported_reason(pad_op) is not None or unsupported_reason(conv) is not None:
            continue
        padding = _foldable(pad_op, conv)
        if padding is None:
            continue
        new_conv = with_options(conv, explicit_padding=padding)
        new_conv = type(new_conv)(new_conv.type, (pad_op.inputs[0], *conv.inputs[1:]), conv.outputs,
                                  new_conv.options, conv.index)
        graph = without_op(replace_op(graph, conv, new_conv), pad_op)
        removed.append((pad_op.name, f"{pad_op.type} folded into '{conv.name}' as hardware padding {padding}"))
    return graph, tuple(removed)
