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

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor
from npuplan.lowering._util import same_padding, with_options
from npuplan.lowering.support import CONV_TYPES

Removed = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class _Reshuffle:
    """The constant operands of a SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND pair, per spatial axis."""

    block: tuple[int, int]
    pads: tuple[tuple[int, int], tuple[int, int]]
    crops: tuple[tuple[int, int], tuple[int, int]]


def _constant(op: Op, index: int, size: int) -> list[int] | None:
    """Input ``index`` of ``op`` as ``size`` non-negative integers, when it is such a constant."""
    t = op.inputs[index] if len(op.inputs) > index else None
    if t is None or t.data is None or t.data.size != size:
        return None
    values = [int(v) for v in t.data.reshape(-1)]
    return values if min(values) >= 0 else None


def _reshuffle(s2b: Op, b2s: Op) -> _Reshuffle | None:
    block, pads = _constant(s2b, 1, 2), _constant(s2b, 2, 4)
    block2, crops = _constant(b2s, 1, 2), _constant(b2s, 2, 4)
    if block is None or pads is None or crops is None or block != block2 or min(block) < 1:
        return None
    return _Reshuffle((block[0], block[1]), ((pads[0], pads[1]), (pads[2], pads[3])),
                      ((crops[0], crops[1]), (crops[2], crops[3])))


def _same_quant(a: Tensor, b: Tensor) -> bool:
    return a.dtype == b.dtype and a.quant == b.quant


def _axis_padding(
    size: int, out_size: int, *, block: int, pads: tuple[int, int], crops: tuple[int, int], kernel: int,
    inner_before: int,
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


def _shapes_agree(x: Tensor, phases: Tensor, conv_out: Tensor, out: Tensor, r: _Reshuffle) -> bool:
    """Whether the tensors have the shapes the reshuffles imply (4D, batch 1 outside)."""
    if any(len(t.shape) != 4 for t in (x, phases, conv_out, out)) or x.shape[0] != 1:
        return False
    (_, h, w, c), (bh, bw) = x.shape, r.block
    if (h + sum(r.pads[0])) % bh or (w + sum(r.pads[1])) % bw:
        return False
    if list(phases.shape) != [bh * bw, (h + sum(r.pads[0])) // bh, (w + sum(r.pads[1])) // bw, c]:
        return False
    n, ch, cw, cc = conv_out.shape
    return n == bh * bw and list(out.shape) == [1, ch * bh - sum(r.crops[0]), cw * bw - sum(r.crops[1]), cc]


def _rewrite(s2b: Op, conv: Op, b2s: Op) -> Op | None:
    """The single dilated conv equivalent to the three ops, or None when they do not match."""
    x, phases, out = s2b.inputs[0], s2b.outputs[0], b2s.outputs[0]
    weights, conv_out = conv.inputs[1] if len(conv.inputs) > 1 else None, conv.outputs[0]
    r = _reshuffle(s2b, b2s)
    if x is None or weights is None or len(weights.shape) != 4 or r is None:
        return None
    if any(int(conv.options.get(k, 1)) != 1 for k in ("stride_h", "stride_w", "dilation_h_factor", "dilation_w_factor")):
        return None
    if not (_same_quant(x, phases) and _same_quant(conv_out, out) and _shapes_agree(x, phases, conv_out, out, r)):
        return None
    kh, kw = weights.shape[1], weights.shape[2]
    inner = _inner_padding(conv, phases.shape[1], phases.shape[2], kh, kw)
    if inner is None:
        return None
    (bh, bw), (_, h, w, _) = r.block, x.shape
    rows = _axis_padding(h, out.shape[1], block=bh, pads=r.pads[0], crops=r.crops[0], kernel=kh, inner_before=inner[0])
    cols = _axis_padding(w, out.shape[2], block=bw, pads=r.pads[1], crops=r.crops[1], kernel=kw, inner_before=inner[1])
    if rows is None or cols is None:
        return None
    options: dict[str, Any] = {"dilation_h_factor": bh, "dilation_w_factor": bw, "padding": "VALID",
                               "explicit_padding": (rows[0], cols[0], rows[1], cols[1])}
    return replace(with_options(conv, **options), inputs=(x, *conv.inputs[1:]), outputs=(out,))


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
        why = f"folded with {conv.type} '{conv.name}' into one {dh}x{dw} dilated {conv.type} writing '{fused.name}'"
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
