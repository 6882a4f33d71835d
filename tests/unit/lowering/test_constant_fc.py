"""A FULLY_CONNECTED of a constant input folded at compile time (``lowering.constant_fc``): its value
is the one LiteRT (the functional reference) computes for that input, over per-tensor and
per-channel weights, a bias or none, input zero points and fused activations; an LSTM's recurrent
FULLY_CONNECTED of its FILL of zeros leaves the CPU."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from npuplan.ir.graph import Graph, Model
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.constant_fc import foldable_fully_connected, fully_connected_value
from npuplan.lowering.constants import fold_constants
from tests.unit.lowering._build import const, fm, op


def _fc(rng: np.random.Generator, *, batches: int, depth: int, channels: int, per_channel: bool, bias: bool,
        act: str, x_zero_point: int):
    x = fm("x", (batches, depth), quant=Quantization((0.04,), (x_zero_point,)))
    scales = tuple(0.002 + 0.0005 * (i % 5) for i in range(channels)) if per_channel else (0.003,)
    w = const("w", rng.integers(-127, 128, (channels, depth)), quant=Quantization(scales, (0,) * len(scales)))
    b = const("b", rng.integers(-3000, 3000, channels), DataType.INT32, None) if bias else None
    y = fm("y", (batches, channels), quant=Quantization((0.06,), (5,)))
    return op("FULLY_CONNECTED", [x, w, b], [y], 0, fused_activation_function=act, keep_num_dims=False,
              weights_format=0, asymmetric_quantize_inputs=False)


@pytest.mark.parametrize("batches,depth,channels,per_channel,bias,act,x_zero_point", [
    (1, 24, 96, True, False, "NONE", 0),
    (2, 16, 12, False, True, "RELU", -7),
    (1, 40, 8, True, True, "RELU6", 11),
    (3, 5, 4, False, False, "RELU_N1_TO_1", -128),
])
def test_a_constant_fully_connected_folds_to_litert_s_value(batches, depth, channels, per_channel, bias, act,
                                                           x_zero_point):
    from npuplan.io.tflite_write import write_tflite
    from npuplan.run.litert import ReferenceModel

    rng = np.random.default_rng(depth * 7 + channels)
    fc = _fc(rng, batches=batches, depth=depth, channels=channels, per_channel=per_channel, bias=bias, act=act,
             x_zero_point=x_zero_point)
    x = fc.inputs[0]
    data = rng.integers(-128, 128, x.shape).astype(np.int8)
    expected = ReferenceModel(write_tflite(Model("fc", (Graph("main", (fc,), (x,), fc.outputs),))),
                              label="fc").invoke([data])[0]
    folded = replace(fc, inputs=(const("x", data, quant=x.quant), *fc.inputs[1:]))
    assert foldable_fully_connected(folded)
    args = [np.asarray(t.data) for t in folded.inputs if t is not None]
    assert np.array_equal(fully_connected_value(folded, args), expected)


def test_an_lstm_s_recurrent_product_of_its_zero_state_is_folded_and_a_feature_map_s_is_not() -> None:
    rng = np.random.default_rng(0)
    fc = _fc(rng, batches=1, depth=8, channels=16, per_channel=True, bias=False, act="NONE", x_zero_point=0)
    zeros = const("zeros", np.zeros((1, 8)), quant=fc.inputs[0].quant)
    constant = replace(fc, inputs=(zeros, *fc.inputs[1:]))
    other = fm("z", (1, 16), quant=fc.outputs[0].quant)
    out = fm("out", (1, 16), quant=fc.outputs[0].quant)
    add = op("ADD", [fc.outputs[0], other], [out], 1, fused_activation_function="NONE")
    folded, removed = fold_constants(Graph("g", (constant, add), (other,), (out,)))
    assert [o.type for o in folded.ops] == ["ADD"] and removed
    value = folded.ops[0].inputs[0]
    assert value.is_constant and np.array_equal(value.data, np.full((1, 16), 5))  # acc 0: the zero point
    kept, _ = fold_constants(Graph("g", (fc, add), (fc.inputs[0], other), (out,)))
    assert [o.type for o in kept.ops] == ["FULLY_CONNECTED", "ADD"]
