"""Recompute one int8 FULLY_CONNECTED or CONV_2D layer's output stage by three roundings (the
NPU's and TFLite's two kernel sets'), on the inputs LiteRT and npuplan's file actually gave it, and count where each rule
reproduces each side's output.

The README's rule ("Where the NPU differs from TFLite"): the accumulator ``acc`` is scaled by the
quantized multiplier ``M`` (31 fractional bits) and exponent ``e`` of ``s_in * s_w / s_out``, then
- double rounding (``MultiplyByQuantizedMultiplier`` of TFLite's reference code, the NPU's TFL
  rounding): ``SaturatingRoundingDoublingHighMul(acc << max(e, 0), M)`` rounds at bit 31, then
  ``RoundingDivideByPOT(., max(-e, 0))`` rounds again at the shift;
- double rounding, half up at the shift (TFLite's optimised kernels: ``vqrdmulhq_s32`` then the
  rounding shift ``vrshlq_s32``, NEON or its SSE emulation): the same first rounding, then
  ``(. + 2^(r - 1)) >> r`` with ``r = max(-e, 0)``, so a half rounds towards +infinity;
- single rounding (``TFLITE_SINGLE_ROUNDING``, ruy's ``MultiplyByQuantizedMultiplier``):
  ``(acc * M + 2^(30 - e)) >> (31 - e)``, once.
The rules are written here from TFLite's formulas, not taken from npuplan's output stage, so a match
is evidence from outside npuplan's code. Used by bench/run_explain.py; asserts nothing.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from npuplan.ir.graph import Op  # noqa: E402
from npuplan.ir.types import DataType  # noqa: E402

RULES = ("double", "double-half-up", "single")


def _round_half_away(x: float) -> int:
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


def quantized_multiplier(real: float) -> tuple[int, int]:
    """TFLite's ``QuantizeMultiplier``: ``(M, e)`` with ``real ~ M * 2^(e - 31)``, ``2^30 <= M < 2^31``."""
    if real == 0.0:
        return 0, 0
    fraction, exponent = math.frexp(real)
    m = _round_half_away(fraction * (1 << 31))
    if m == 1 << 31:
        m, exponent = m // 2, exponent + 1
    if exponent < -31:
        return 0, 0
    return m, exponent


def _trunc_div(v: np.ndarray, d: int) -> np.ndarray:
    return np.where(v >= 0, v // d, -((-v) // d))


def double_rounding(acc: np.ndarray, m: np.ndarray, e: np.ndarray) -> np.ndarray:
    """TFLite's reference ``MultiplyByQuantizedMultiplier`` (int64 arrays; ``m``, ``e`` per channel, last axis)."""
    left, right = np.maximum(e, 0), np.maximum(-e, 0)
    product = (acc << left) * m
    nudge = np.where(product >= 0, 1 << 30, 1 - (1 << 30))
    high = _trunc_div(product + nudge, 1 << 31)
    mask = (np.int64(1) << right) - 1
    threshold = (mask >> 1) + (high < 0)
    return (high >> right) + ((high & mask) > threshold)


def double_rounding_half_up(acc: np.ndarray, m: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``SaturatingRoundingDoublingHighMul`` then a rounding shift that rounds a half up."""
    left, right = np.maximum(e, 0), np.maximum(-e, 0)
    product = (acc << left) * m
    nudge = np.where(product >= 0, 1 << 30, 1 - (1 << 30))
    high = _trunc_div(product + nudge, 1 << 31)
    half = np.where(right > 0, np.int64(1) << np.maximum(right - 1, 0), 0)
    return (high + half) >> right


def single_rounding(acc: np.ndarray, m: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``TFLITE_SINGLE_ROUNDING``'s ``MultiplyByQuantizedMultiplier``: one round-half-up at the total shift."""
    total = 31 - e
    return (acc * m + (np.int64(1) << (total - 1))) >> total


def supported(op: Op) -> str:
    """'' when ``op`` is a layer recomputed here, else why not."""
    if op.type not in ("FULLY_CONNECTED", "CONV_2D"):
        return f"{op.type} is neither FULLY_CONNECTED nor CONV_2D"
    x, w = op.inputs[0], op.inputs[1]
    if x is None or w is None or w.data is None or x.dtype is not DataType.INT8 or w.dtype is not DataType.INT8:
        return "only int8 layers with constant int8 weights are recomputed"
    if op.type == "CONV_2D" and (len(x.shape) != 4 or len(w.shape) != 4 or w.shape[3] != x.shape[3]):
        return "a grouped or not 4-D CONV_2D"
    if op.options.get("fused_activation_function", "NONE") not in ("NONE", "RELU", "RELU6"):
        return f"activation {op.options.get('fused_activation_function')}"
    return ""


def _multipliers(op: Op) -> tuple[np.ndarray, np.ndarray]:
    x, w, y = op.inputs[0], op.inputs[1], op.outputs[0]
    units = w.shape[0]
    scales = w.quant.scale if len(w.quant.scale) == units else w.quant.scale[:1] * units
    if len(w.quant.scale) == units and units > 1:  # per channel: double products (PopulateConvolutionQuantizationParams)
        reals = [float(x.quant.scale[0]) * float(s) / float(y.quant.scale[0]) for s in scales]
    else:  # per tensor: the float product, then double (GetQuantizedConvolutionMultipler)
        reals = [float(np.float32(x.quant.scale[0]) * np.float32(s)) / float(y.quant.scale[0]) for s in scales]
    pairs = [quantized_multiplier(r) for r in reals]
    return np.array([p[0] for p in pairs], np.int64), np.array([p[1] for p in pairs], np.int64)


def _range(op: Op) -> tuple[int, int]:
    y = op.outputs[0]
    zero, scale = int(y.quant.zero_point[0]), float(y.quant.scale[0])
    activation = op.options.get("fused_activation_function", "NONE")
    low = max(-128, zero) if activation in ("RELU", "RELU6") else -128
    high = min(127, zero + _round_half_away(6.0 / scale)) if activation == "RELU6" else 127
    return low, high


def _patches(op: Op, centred: np.ndarray) -> np.ndarray:
    """A CONV_2D's input windows as rows (output pixel, (kernel row, kernel column, channel)), the
    padding zeros after the zero point is taken out; ``centred`` holds whole samples of the input."""
    _, height, width, depth = op.inputs[0].shape
    _, kh, kw, _ = op.inputs[1].shape
    sh, sw = op.options.get("stride_h", 1), op.options.get("stride_w", 1)
    dh, dw = op.options.get("dilation_h_factor", 1), op.options.get("dilation_w_factor", 1)
    fmap = centred.reshape(-1, height, width, depth)
    span_h, span_w = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    if op.options.get("padding", "SAME") == "SAME":
        out_h, out_w = -(-height // sh), -(-width // sw)
        pad_h, pad_w = max((out_h - 1) * sh + span_h - height, 0), max((out_w - 1) * sw + span_w - width, 0)
        fmap = np.pad(fmap, ((0, 0), (pad_h // 2, pad_h - pad_h // 2), (pad_w // 2, pad_w - pad_w // 2), (0, 0)))
    else:
        out_h, out_w = (height - span_h) // sh + 1, (width - span_w) // sw + 1
    taps = [fmap[:, i * dh:i * dh + (out_h - 1) * sh + 1:sh, j * dw:j * dw + (out_w - 1) * sw + 1:sw, :]
            for i in range(kh) for j in range(kw)]
    return np.stack(taps, axis=3).reshape(-1, kh * kw * depth)


def recompute(op: Op, x: np.ndarray, rule: str) -> np.ndarray:
    """``op``'s int8 output for int8 input values ``x`` by ``rule``: rows of (-1, units)."""
    w = op.inputs[1]
    weights = w.data.reshape(w.shape[0], -1).astype(np.int64) - np.array(w.quant.zero_point, np.int64).reshape(-1, 1)
    centred = x.astype(np.int64) - int(op.inputs[0].quant.zero_point[0])
    rows = _patches(op, centred) if op.type == "CONV_2D" else centred.reshape(-1, weights.shape[1])
    acc = rows @ weights.T
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    if bias is not None and bias.data is not None:
        acc = acc + bias.data.astype(np.int64).reshape(1, -1)
    m, e = _multipliers(op)
    scaled = {"double": double_rounding, "double-half-up": double_rounding_half_up, "single": single_rounding}[rule](
        acc, m, e)
    low, high = _range(op)
    return np.clip(scaled + int(op.outputs[0].quant.zero_point[0]), low, high)


@dataclass(frozen=True)
class RuleMatch:
    """For one side's run of the layer: elements, and how many each rule reproduces."""

    side: str
    elements: int
    matches: dict[str, int]

    def text(self) -> str:
        found = ", ".join(f"{rule} rounding {n}" for rule, n in self.matches.items())
        return f"{self.side}: of {self.elements} outputs, {found}"


def match(op: Op, side: str, x: np.ndarray, y: np.ndarray) -> RuleMatch:
    """How many of ``y`` (the layer's output on input ``x``) each rule reproduces."""
    got = y.reshape(-1, op.inputs[1].shape[0]).astype(np.int64)
    return RuleMatch(side, int(got.size), {rule: int(np.count_nonzero(recompute(op, x, rule) == got))
                                           for rule in RULES})
