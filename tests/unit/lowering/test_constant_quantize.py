"""A QUANTIZE of a constant input folded at compile time (``lowering.constant_quantize``): its value is
the one LiteRT (the functional reference) computes for that input, between int8 and int16, scales up
and down, zero points and saturation; a GRU's requantized product of its zero state leaves the CPU."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.ir.graph import Graph, Model
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.constant_quantize import foldable_requantize, requantize_value
from npuplan.lowering.constants import fold_constants
from tests.unit.lowering._build import const, fm, op


@pytest.mark.parametrize("x_type,y_type,x_q,y_q", [
    (DataType.INT8, DataType.INT8, (0.0015289, 0), (0.0015149, -1)),
    (DataType.INT8, DataType.INT8, (0.05, -3), (0.011, 9)),  # scaled up: saturates
    (DataType.INT16, DataType.INT16, (0.0004, 0), (0.00013, 0)),
    (DataType.INT8, DataType.INT16, (0.02, 4), (0.0003, 0)),
    (DataType.INT16, DataType.INT8, (0.0002, 0), (0.03, -5)),
])
def test_a_constant_requantize_folds_to_litert_s_value(x_type, y_type, x_q, y_q) -> None:
    from npuplan.io.tflite_write import write_tflite
    from npuplan.run.litert import ReferenceModel

    x = fm("x", (2, 40), x_type, Quantization((x_q[0],), (x_q[1],)))
    y = fm("y", (2, 40), y_type, Quantization((y_q[0],), (y_q[1],)))
    quantize = op("QUANTIZE", [x], [y], 0)
    info = np.iinfo(np.dtype(x_type.value))
    data = np.random.default_rng(x_q[1] + 7).integers(info.min, info.max + 1, x.shape).astype(info.dtype)
    expected = ReferenceModel(write_tflite(Model("q", (Graph("main", (quantize,), (x,), (y,)),))),
                              label="q").invoke([data])[0]
    folded = op("QUANTIZE", [const("x", data, x_type, x.quant)], [y], 0)
    assert foldable_requantize(folded)
    value = requantize_value(folded, [data])
    assert value.dtype == expected.dtype and np.array_equal(value, expected)


def test_a_requantized_constant_is_folded_and_a_requantized_feature_map_is_not() -> None:
    data = np.arange(-8, 8).reshape(1, 16)
    x = const("x", data, quant=Quantization((0.0015289,), (0,)))
    y = fm("y", (1, 16), quant=Quantization((0.0015149,), (-1,)))
    other = fm("z", (1, 16), quant=y.quant)
    out = fm("out", (1, 16), quant=y.quant)
    add = op("ADD", [y, other], [out], 1, fused_activation_function="NONE")
    folded, removed = fold_constants(Graph("g", (op("QUANTIZE", [x], [y], 0), add), (other,), (out,)))
    assert [o.type for o in folded.ops] == ["ADD"] and removed
    value = folded.ops[0].inputs[0]
    assert value.is_constant and value.dtype == DataType.INT8 and np.array_equal(value.data, data - 1)
    feature_map = fm("x", (1, 16), quant=x.quant)
    kept, _ = fold_constants(Graph("g", (op("QUANTIZE", [feature_map], [y], 0), add), (feature_map, other), (out,)))
    assert [o.type for o in kept.ops] == ["QUANTIZE", "ADD"]
