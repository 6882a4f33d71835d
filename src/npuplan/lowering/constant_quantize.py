"""A QUANTIZE (requantize) of a constant integer input evaluated at compile time, as TFLite computes it.

A PyTorch GRU export requantizes the recurrent FULLY_CONNECTED of its zero initial state
(``constant_fc`` folds that product): the QUANTIZE then computes a constant too, which the NPU would
compute again on every inference and the deploy path cannot emit (its input feature map is a
constant). Vela folds it. Its value is TFLite's ``Requantize`` (``kernels/quantize.cc``, reference
``reference_ops::Requantize``): ``MultiplyByQuantizedMultiplier(x - x_zp, QuantizeMultiplier(x_scale
/ y_scale)) + y_zp``, clamped to the output type's range. Covered: int8 and int16 input and output,
quantized per tensor.
"""

from __future__ import annotations

import numpy as np

from npuplan.ir.graph import Op
from npuplan.ir.types import DataType
from npuplan.lowering.fixedpoint import multiply_by_quantized_multiplier, quantize_multiplier

_RANGES = {DataType.INT8: (-128, 127), DataType.INT16: (-32768, 32767)}


def foldable_requantize(op: Op) -> bool:
    """Whether ``op`` is a QUANTIZE of a constant that ``requantize_value`` computes."""
    if op.type != "QUANTIZE" or len(op.inputs) != 1 or len(op.outputs) != 1:
        return False
    x, out = op.inputs[0], op.outputs[0]
    if x is None or x.data is None or x.dtype not in _RANGES or out.dtype not in _RANGES:
        return False
    return all(t.quant is not None and t.quant.is_valid and len(t.quant.scale) == 1 for t in (x, out))


def requantize_value(op: Op, args: list[np.ndarray]) -> np.ndarray:
    """The output of ``op`` (``foldable_requantize``) of its constant input ``args[0]``."""
    x, out = op.inputs[0], op.outputs[0]
    assert x is not None and x.quant is not None and out.quant is not None
    multiplier, shift = quantize_multiplier(float(x.quant.scale[0]) / float(out.quant.scale[0]))
    centred = args[0].astype(np.int64) - int(x.quant.zero_point[0])
    scaled = multiply_by_quantized_multiplier(centred, multiplier, shift) + int(out.quant.zero_point[0])
    lo, hi = _RANGES[out.dtype]
    return np.clip(scaled, lo, hi).astype(np.dtype(out.dtype.value))
