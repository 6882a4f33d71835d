"""A quantized FULLY_CONNECTED of a constant input evaluated at compile time, as TFLite computes it.

An exported LSTM or GRU starts its recurrence from a FILL of zeros: the FULLY_CONNECTED of that
initial state by the recurrent weights computes a constant. The NPU would compute it again on every
inference (the deploy path cannot even emit it: its input feature map is a constant); its value is
TFLite's integer arithmetic (``reference_integer_ops::FullyConnected``), computed here once:
``acc = sum((x - x_zp) * w) + bias``, scaled by ``QuantizeMultiplier(x_scale * w_scale / y_scale)``
(per output channel for per-channel weights) with ``MultiplyByQuantizedMultiplier``, plus the
output's zero point, clamped to the fused activation's range. Covered: int8 input, weights (zero
point 0) and output, an int32 bias or none, activations NONE, RELU, RELU6, RELU_N1_TO_1.
"""

from __future__ import annotations

import numpy as np

from npuplan.ir.graph import Op
from npuplan.ir.lowered import CLAMP_RANGES
from npuplan.ir.types import DataType
from npuplan.lowering._util import ACTIVATIONS
from npuplan.lowering.fixedpoint import multiply_by_quantized_multiplier, quantize_multiplier, tflite_round, wrap32

_FOLDED = frozenset(name for name, act in ACTIVATIONS.items() if act in CLAMP_RANGES)  # fused clamps it folds
_INT8 = (-128, 127)


def foldable_fully_connected(op: Op) -> bool:
    """Whether ``op`` is a FULLY_CONNECTED of constants ``fully_connected_value`` computes."""
    if op.type != "FULLY_CONNECTED" or len(op.outputs) != 1 or len(op.inputs) < 2:
        return False
    x, w, out = op.inputs[0], op.inputs[1], op.outputs[0]
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    if x is None or w is None or x.data is None or w.data is None or (bias is not None and bias.data is None):
        return False
    if any(t.dtype != DataType.INT8 or t.quant is None or not t.quant.is_valid for t in (x, w, out)):
        return False
    assert x.quant is not None and w.quant is not None and out.quant is not None
    per_tensor = len(x.quant.scale) == 1 and len(out.quant.scale) == 1
    channels = w.shape[0] if len(w.shape) == 2 else -1
    return (per_tensor and len(w.shape) == 2 and x.data.size % w.shape[1] == 0
            and len(w.quant.scale) in (1, channels) and not any(w.quant.zero_point)
            and (bias is None or (bias.dtype == DataType.INT32 and bias.elements == channels))
            and str(op.options.get("fused_activation_function", "NONE")) in _FOLDED)


def _activation_range(op: Op) -> tuple[int, int]:
    """TFLite's ``CalculateActivationRangeQuantized`` for an int8 output."""
    out = op.outputs[0]
    assert out.quant is not None
    scale, zero_point = out.quant.scale[0], int(out.quant.zero_point[0])
    low, high = CLAMP_RANGES[ACTIVATIONS[str(op.options.get("fused_activation_function", "NONE"))]]
    lo = _INT8[0] if low is None else max(_INT8[0], zero_point + int(tflite_round(low / scale)))
    hi = _INT8[1] if high is None else min(_INT8[1], zero_point + int(tflite_round(high / scale)))
    return lo, hi


def fully_connected_value(op: Op, args: list[np.ndarray]) -> np.ndarray:
    """The int8 output of ``op`` (``foldable_fully_connected``) of its constant inputs ``args``."""
    x, w, out = op.inputs[0], op.inputs[1], op.outputs[0]
    assert x is not None and w is not None and x.quant and w.quant and out.quant
    depth = w.shape[1]
    rows = args[0].astype(np.int64).reshape(-1, depth) - int(x.quant.zero_point[0])
    acc = rows @ args[1].astype(np.int64).T  # (batches, channels)
    if len(args) > 2:
        acc = acc + args[2].astype(np.int64).reshape(1, -1)
    acc = wrap32(acc)  # TFLite accumulates in int32
    scales = np.broadcast_to(np.asarray(w.quant.scale, dtype=np.float64), (w.shape[0],))
    scaled = np.empty_like(acc)
    for channel, w_scale in enumerate(scales):
        multiplier, shift = quantize_multiplier(float(x.quant.scale[0]) * float(w_scale) / float(out.quant.scale[0]))
        scaled[:, channel] = multiply_by_quantized_multiplier(acc[:, channel], multiplier, shift)
    lo, hi = _activation_range(op)
    return np.clip(scaled + int(out.quant.zero_point[0]), lo, hi).astype(np.int8)
