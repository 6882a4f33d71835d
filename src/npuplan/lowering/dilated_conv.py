"""Rewrite SPACE_TO_BATCH_ND + CONV_2D/DEPTHWISE_CONV_2D + BATCH_TO_SPACE_ND into one dilated conv.

TensorFlow lowers a convolution with ``dilation_rate > 1`` that its converter could not fuse (an
inner SAME conv, say) into this sandwich: the input is padded and split into ``bh x bw`` phase
images (one per batch entry), each is convolved densely, and the results are interleaved back and
cropped. It is exactly one convolution with dilation ``bh x bw`` over the original input, with
explicit padding. Along one axis, with block ``b``, pads ``(p0, p1)``, crops ``(c0, c1)``, the
inner conv's own padding ``q0`` (SAME, in phase-image rows) and kernel ``k``::

    out[y] = sum_i w[i] * x[y + c0 - p0 + (i - q0) * b]

so the dilated conv pads ``p0 + q0 * b - c0`` before and whatever the output size needs after;
the rewrite is done only when both paddings come out non-negative and every shape agrees.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor
from npuplan.lowering._util import same_padding, with_options
from npuplan.lowering.support import CONV_TYPES

Removed = tuple[tuple[str, str], ...]


def _pairs(tensor: Tensor | None, rows: int) -> list[list[int]] | None:
    """A constant ``rows x 2`` integer tensor as lists, or None."""
    if tensor is None or tensor.data is None or tensor.data.size != 2 * rows:
        return None
    return [[int(v) for v in row] for row in tensor.data.reshape(rows, 2)]


def _block(tensor: Tensor | None) -> list[int] | None:
    if tensor is None or tensor.data is None or tensor.data.size != 2:
        return None
    return [int(v) for v in tensor.data.reshape(-1)]


def _same_quant(a: Tensor, b: Tensor) -> bool:
    return a.dtype == b.dtype and a.quant == b.quant


def _axis_padding(
    size: int, out_size: int, *, block: int, pads: list[int], crops: list[int], kernel: int, inner_before: int
) -> tuple[int, int] | None:
    """(before, after) padding of the dilated conv along one axis, or None when not exact."""
    before = pads[0] + inner_before * block - crops[0]
    after = out_size - 1 + (kernel - 1) * block + 1 - size - before
    return (before, after) if before >= 0 and after >= 0 else None


def _inner_padding(conv: Op, phase_h: int, phase_w: int, kh: int, kw: int) -> tuple[int, int] | None:
    """Rows and columns the inner (stride 1, undilated) conv pads before, in phase-image units."""
    if conv.options.get("padding") == "VALID":
        return 0, 0
    if conv.options.get("padding") == "SAME":
        return same_padding(phase_h, 1, kh)[0], same_padding(phase_w, 1, kw)[0]
    return None


def _rewrite(s2b: Op, conv: Op, b2s: Op) -> Op | None:
    """The single dilated conv equivalent to the three ops, or None when they do not match."""
    x, phases, out = s2b.inputs[0], s2b.outputs[0], b2s.outputs[0]
    weights, conv_out = conv.inputs[1] if len(conv.inputs) > 1 else None, conv.outputs[0]
    block, pads = _block(s2b.inputs[1] if len(s2b.inputs) > 1 else None), _pairs(
        s2b.inputs[2] if len(s2b.inputs) > 2 else None, 2)
    block2, crops = _block(b2s.inputs[1] if len(b2s.inputs) > 1 else None), _pairs(
        b2s.inputs[2] if len(b2s.inputs) > 2 else None, 2)
    if x is None or weights is None or block is None or pads is None or crops is None or block != block2:
        return None
    if len(x.shape) != 4 or x.shape[0] != 1 or len(out.shape) != 4 or len(conv_out.shape) != 4 or len(weights.shape) != 4:
        return None
    if min(block) < 1 or min(min(p) for p in pads) < 0 or min(min(c) for c in crops) < 0:
        return None
    o = conv.options
    if any(int(o.get(k, 1)) != 1 for k in ("stride_h", "stride_w", "dilation_h_factor", "dilation_w_factor")):
        return None
    if not (_same_quant(x, phases) and _same_quant(conv_out, b2s.inputs[0] or conv_out) and _same_quant(conv_out, out)):
        return None
    (_, h, w, _), (bh, bw) = x.shape, block
    if (h + sum(pads[0])) % bh or (w + sum(pads[1])) % bw:
        return None
    phase_h, phase_w = (h + sum(pads[0])) // bh, (w + sum(pads[1])) // bw
    if list(phases.shape) != [bh * bw, phase_h, phase_w, x.shape[3]]:
        return None
    kh, kw = weights.shape[1], weights.shape[2]
    inner = _inner_padding(conv, phase_h, phase_w, kh, kw)
    if inner is None:
        return None
    n, ch, cw, cc = conv_out.shape
    if n != bh * bw or list(out.shape) != [1, ch * bh - sum(crops[0]), cw * bw - sum(crops[1]), cc]:
        return None
    rows = _axis_padding(h, out.shape[1], block=bh, pads=pads[0], crops=crops[0], kernel=kh, inner_before=inner[0])
    cols = _axis_padding(w, out.shape[2], block=bw, pads=pads[1], crops=crops[1], kernel=kw, inner_before=inner[1])
    if rows is None or cols is None:
        return None
    options: dict[str, Any] = {"dilation_h_factor": bh, "dilation_w_factor": bw, "padding": "VALID",
                               "explicit_padding": (rows[0], cols[0], rows[1], cols[1])}
    rewritten = with_options(conv, **options)
    return replace(rewritten, inputs=(x, *conv.inputs[1:]), outputs=(out,))


def fuse_dilated_convs(graph: Graph) -> tuple[Graph, Removed]:
    """Replace each exact SPACE_TO_BATCH_ND + conv + BATCH_TO_SPACE_ND chain by one dilated conv.

    The conv keeps its weights, bias and activation and writes the BATCH_TO_SPACE_ND output; the
    two reshuffles are removed (reported as (name, reason)). Chains whose intermediate tensors
    have other readers or are graph outputs are left alone.
    """
    consumers = graph.consumers()
    producers = graph.producers()
    kept_outputs = set(graph.outputs)
    replaced: dict[Op, Op | None] = {}
    removed: list[tuple[str, str]] = []
    for b2s in graph.ops:
        if b2s.type != "BATCH_TO_SPACE_ND" or b2s.inputs[0] is None:
            continue
        conv = producers.get(b2s.inputs[0])
        s2b = producers.get(conv.inputs[0]) if conv is not None and conv.inputs[0] is not None else None
        if conv is None or s2b is None or conv.type not in CONV_TYPES or s2b.type != "SPACE_TO_BATCH_ND":
            continue
        middle = (s2b.outputs[0], conv.outputs[0])
        if any(len(consumers.get(t, [])) != 1 or t in kept_outputs for t in middle):
            continue
        fused = _rewrite(s2b, conv, b2s)
        if fused is None:
            continue
        replaced.update({s2b: None, b2s: None, conv: fused})
        dh, dw = fused.options["dilation_h_factor"], fused.options["dilation_w_factor"]
        why = f"folded into '{fused.name}' as a {dh}x{dw} dilated {conv.type}"
        removed += [(s2b.name, f"SPACE_TO_BATCH_ND {why}"), (b2s.name, f"BATCH_TO_SPACE_ND {why}")]
    if not removed:
        return graph, ()
    ops = tuple(new for op in graph.ops if (new := replaced.get(op, op)) is not None)
    return replace(graph, ops=ops), tuple(removed)


# The convolution engine dilates by 1 or 2 only.
_HARDWARE_DILATIONS = (1, 2)


def hardware_dilation(
    weights: np.ndarray, dilation_hw: tuple[int, int], zero_point: int
) -> tuple[np.ndarray, tuple[int, int]]:
    """Weights and (height, width) dilation as the hardware runs a conv dilated by ``dilation_hw``.

    ``weights`` has its kernel height and width on axes 1 and 2 (OHWI, or 1HWC for depthwise).
    A dilation above 2 is spread into the kernel: an even factor keeps a hardware dilation of 2
    and spreads half of it, an odd one spreads all of it, the new taps set to the weights' zero
    point. The dilated extent, and so the padding, is unchanged.
    """
    if all(d in _HARDWARE_DILATIONS for d in dilation_hw):
        return weights, dilation_hw
    hardware = tuple(1 if d % 2 else 2 for d in dilation_hw)
    spread = [d // h for d, h in zip(dilation_hw, hardware)]
    kh, kw = weights.shape[1], weights.shape[2]
    shape = (weights.shape[0], (kh - 1) * spread[0] + 1, (kw - 1) * spread[1] + 1, weights.shape[3])
    spread_weights = np.full(shape, zero_point, dtype=weights.dtype)
    spread_weights[:, :: spread[0], :: spread[1], :] = weights
    spread_weights.flags.writeable = False
    return spread_weights, (hardware[0], hardware[1])
