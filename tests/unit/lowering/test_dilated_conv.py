"""SPACE_TO_BATCH_ND + conv + BATCH_TO_SPACE_ND -> one dilated conv: exact against a numpy reference."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from npuplan.ir.graph import Graph, Op, Tensor
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.dilated_conv import fuse_dilated_convs, hardware_dilation
from npuplan.lowering.lower import lower
from tests.unit.lowering._build import const, fm, graph, model, op
from tests.unit.lowering.test_lower import U55_128

I32 = DataType.INT32


def _s2b(x: np.ndarray, block: tuple[int, int], pads: list[list[int]]) -> np.ndarray:
    p = np.pad(x, pads)
    bh, bw = block
    return np.stack([p[i::bh, j::bw] for i in range(bh) for j in range(bw)])


def _conv(x: np.ndarray, w: np.ndarray, pad: tuple[int, int, int, int], dil: tuple[int, int] = (1, 1)) -> np.ndarray:
    top, left, bottom, right = pad
    p = np.pad(x, [[top, bottom], [left, right]])
    kh, kw = w.shape
    oh, ow = p.shape[0] - (kh - 1) * dil[0], p.shape[1] - (kw - 1) * dil[1]
    return sum(w[a, b] * p[a * dil[0]: a * dil[0] + oh, b * dil[1]: b * dil[1] + ow]
               for a in range(kh) for b in range(kw))  # type: ignore[return-value]


def _b2s(y: np.ndarray, block: tuple[int, int], crops: list[list[int]]) -> np.ndarray:
    bh, bw = block
    _, h, w = y.shape
    full = np.zeros((h * bh, w * bw), dtype=y.dtype)
    for i in range(bh):
        for j in range(bw):
            full[i::bh, j::bw] = y[i * bw + j]
    return full[crops[0][0]: h * bh - crops[0][1], crops[1][0]: w * bw - crops[1][1]]


def _same_before(size: int, k: int) -> int:
    return max(k - 1, 0) // 2


def sandwich(h: int, w: int, block: tuple[int, int], pads: list[list[int]], crops: list[list[int]], k: tuple[int, int],
             inner: str, *, conv_type: str = "CONV_2D", **conv_options: Any) -> Graph:
    bh, bw = block
    ph, pw = (h + sum(pads[0])) // bh, (w + sum(pads[1])) // bw
    ch, cw = (ph, pw) if inner == "SAME" else (ph - k[0] + 1, pw - k[1] + 1)
    x, phases = fm("x", (1, h, w, 1)), fm("phases", (bh * bw, ph, pw, 1))
    conv_out = fm("conv_out", (bh * bw, ch, cw, 1))
    out = fm("out", (1, ch * bh - sum(crops[0]), cw * bw - sum(crops[1]), 1))
    weights = const("w", np.ones((1, *k, 1)))
    options = {"padding": inner, "stride_h": 1, "stride_w": 1, "dilation_h_factor": 1, "dilation_w_factor": 1,
               "fused_activation_function": "RELU", **conv_options}
    return graph([
        op("SPACE_TO_BATCH_ND", [x, const("b", block, I32, None), const("p", pads, I32, None)], [phases], 0),
        op(conv_type, [phases, weights, const("bias", [0], I32, None)], [conv_out], 1, **options),
        op("BATCH_TO_SPACE_ND", [conv_out, const("b2", block, I32, None), const("c", crops, I32, None)], [out], 2),
    ], [x], [out])


@st.composite
def patterns(draw: st.DrawFn) -> tuple[Any, ...]:
    bh, bw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    h, w = draw(st.integers(3, 9)), draw(st.integers(3, 9))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    pads = []
    for size, b in ((h, bh), (w, bw)):
        p0 = draw(st.integers(0, 4))
        p1 = draw(st.integers(0, 4))
        p1 += (-(size + p0 + p1)) % b  # space-to-batch needs a multiple of the block
        pads.append([p0, p1])
    inner = draw(st.sampled_from(["VALID", "SAME"]))
    crops = []
    for size, b, p, kk in ((h, bh, pads[0], kh), (w, bw, pads[1], kw)):
        phase = (size + sum(p)) // b
        conv = phase if inner == "SAME" else phase - kk + 1
        assume(conv >= 1)
        c0 = draw(st.integers(0, min(conv * b - 1, 3)))  # small crops: most cases are then rewritten
        c1 = draw(st.integers(0, min(conv * b - 1 - c0, 3)))
        crops.append([c0, c1])
    return h, w, (bh, bw), pads, crops, (kh, kw), inner


@settings(max_examples=300, derandomize=True, deadline=None)
@given(patterns(), st.randoms(use_true_random=False))
def test_rewrite_is_exact_or_not_done(case: tuple[Any, ...], rnd: Any) -> None:
    h, w, block, pads, crops, k, inner = case
    g = sandwich(h, w, block, pads, crops, k, inner)
    rng = np.random.default_rng(rnd.randint(0, 2**31))
    x = rng.integers(-9, 9, (h, w)).astype(np.int64)
    wt = rng.integers(-3, 3, k).astype(np.int64)
    ph, pw = (h + sum(pads[0])) // block[0], (w + sum(pads[1])) // block[1]
    same = (_same_before(ph, k[0]), _same_before(pw, k[1]))
    inner_pad = (same[0], same[1], k[0] - 1 - same[0], k[1] - 1 - same[1]) if inner == "SAME" else (0, 0, 0, 0)
    expected = _b2s(np.stack([_conv(p, wt, inner_pad) for p in _s2b(x, block, pads)]), block, crops)
    out, removed = fuse_dilated_convs(g)
    if not removed:
        # not rewritten only when the dilated conv would need a negative padding
        before_h = pads[0][0] + inner_pad[0] * block[0] - crops[0][0]
        before_w = pads[1][0] + inner_pad[1] * block[1] - crops[1][0]
        after_h = expected.shape[0] - 1 + (k[0] - 1) * block[0] + 1 - h - before_h
        after_w = expected.shape[1] - 1 + (k[1] - 1) * block[1] + 1 - w - before_w
        assert min(before_h, before_w, after_h, after_w) < 0
        return
    (conv,) = out.ops
    o = conv.options
    got = _conv(x, wt, o["explicit_padding"], (o["dilation_h_factor"], o["dilation_w_factor"]))
    assert got.shape == expected.shape and (got == expected).all()
    assert conv.inputs[0] is g.inputs[0] and conv.outputs[0] is g.outputs[0]
    assert o["fused_activation_function"] == "RELU"


def test_keras_same_dilated_conv_runs_on_the_npu() -> None:
    g = sandwich(20, 20, (2, 2), [[0, 0], [0, 0]], [[0, 0], [0, 0]], (3, 3), "SAME")
    lg = lower(model(g), U55_128)
    assert lg.cpu_ops == () and len(lg.npu_ops) == 1
    (conv,) = lg.npu_ops
    assert (conv.kernel.dilation_y, conv.kernel.dilation_x) == (2, 2)  # type: ignore[union-attr]
    pad = conv.kernel.padding  # type: ignore[union-attr]
    assert (pad.top, pad.left, pad.bottom, pad.right) == (2, 2, 2, 2)
    assert [name for name, _ in lg.removed] == ["phases", "out"]
    assert lg.removed[0][1] == "SPACE_TO_BATCH_ND folded with CONV_2D 'conv_out' into one 2x2 dilated CONV_2D writing 'out'"


def test_depthwise_sandwich_is_rewritten() -> None:
    g = sandwich(16, 16, (3, 3), [[3, 5], [3, 5]], [[0, 2], [0, 2]], (3, 3), "VALID", conv_type="DEPTHWISE_CONV_2D",
                 depth_multiplier=1)
    out, removed = fuse_dilated_convs(g)
    assert [o.type for o in out.ops] == ["DEPTHWISE_CONV_2D"] and len(removed) == 2
    assert out.ops[0].options["explicit_padding"] == (3, 3, 3, 3)


def _with(g: Graph, index: int, new: Op) -> Graph:
    return Graph(g.name, tuple(new if i == index else o for i, o in enumerate(g.ops)), g.inputs, g.outputs)


def test_not_rewritten_when_it_does_not_match() -> None:
    base = sandwich(20, 20, (2, 2), [[0, 0], [0, 0]], [[0, 0], [0, 0]], (3, 3), "SAME")
    s2b, conv, b2s = base.ops
    strided = sandwich(20, 20, (2, 2), [[0, 0], [0, 0]], [[0, 0], [0, 0]], (3, 3), "SAME", stride_h=2)
    other_block = _with(base, 2, Op(b2s.type, (b2s.inputs[0], const("b3", [2, 1], I32, None), b2s.inputs[2]),
                                    b2s.outputs, b2s.options))
    requant = Tensor("phases", (4, 10, 10, 1), DataType.INT8, Quantization((0.5,), (0,)))
    requantized = Graph(base.name, (Op(s2b.type, s2b.inputs, (requant,)), Op(conv.type, (requant, *conv.inputs[1:]),
                                   conv.outputs, conv.options), b2s), base.inputs, base.outputs)
    extra = fm("extra", (4, 10, 10, 1))
    shared = Graph(base.name, (*base.ops, op("NEG", [conv.outputs[0]], [extra])), base.inputs, (*base.outputs, extra))
    for g in (strided, other_block, requantized, shared):
        assert fuse_dilated_convs(g) == (g, ())


@pytest.mark.parametrize(("dilation", "kernel", "hardware"),
                         [((4, 4), (5, 5), (2, 2)), ((3, 3), (7, 7), (1, 1)), ((2, 3), (3, 7), (2, 1)),
                          ((6, 1), (7, 3), (2, 1)), ((2, 2), (3, 3), (2, 2))])
def test_hardware_dilation_spreads_large_factors_into_the_kernel(
    dilation: tuple[int, int], kernel: tuple[int, int], hardware: tuple[int, int]
) -> None:
    rng = np.random.default_rng(7)
    w = rng.integers(0, 5, (2, 3, 3, 1)).astype(np.int8)  # never the zero point -2
    spread, hw = hardware_dilation(w, dilation, zero_point=-2)
    assert spread.shape == (2, *kernel, 1) and hw == hardware
    x = rng.integers(-9, 9, (30, 30)).astype(np.int64)
    for o in range(2):
        expected = _conv(x, w[o, :, :, 0].astype(np.int64), (0, 0, 0, 0), dilation)
        taps = spread[o, :, :, 0].astype(np.int64)
        got = _conv(x, np.where(taps == -2, 0, taps), (0, 0, 0, 0), hw)  # a zero-point tap adds nothing
        assert (got == expected).all()
    assert (spread == -2).sum() == 2 * (kernel[0] * kernel[1] - 9)


def test_dilation_four_depthwise_runs_as_a_five_by_five() -> None:
    x, y = fm("x", (1, 16, 16, 4)), fm("y", (1, 16, 16, 4))
    w = const("w", np.ones((1, 3, 3, 4)))
    g = graph([op("DEPTHWISE_CONV_2D", [x, w, const("b", [0] * 4, I32, None)], [y], 0, padding="SAME", stride_h=1,
                  stride_w=1, dilation_h_factor=4, dilation_w_factor=4, depth_multiplier=1,
                  fused_activation_function="NONE")], [x], [y])
    (dw,) = lower(model(g), U55_128).npu_ops
    k = dw.kernel  # type: ignore[union-attr]
    assert (k.height, k.width, k.dilation_y, k.dilation_x) == (5, 5, 2, 2)
    assert (k.padding.top, k.padding.left, k.padding.bottom, k.padding.right) == (4, 4, 4, 4)
    assert dw.weights is not None and dw.weights.shape == (1, 5, 5, 4) and int(dw.weights.sum()) == 9 * 4  # type: ignore[union-attr]
