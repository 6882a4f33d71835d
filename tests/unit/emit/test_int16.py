"""16-bit networks (16x8: int16 feature maps, int8 weights, int64 biases) emitted: a convolution,
the hardware's own tanh in a 1x1 average pool, and an elementwise ADD."""

from __future__ import annotations

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization
from tests.unit.emit._stream import registers_at_kicks
from tests.unit.emit.conftest import emit_graph

NATURAL = 2  # OFM_PRECISION bits 14-15: the rounding mode
TANH = 3  # the ACTIVATION register's function field (low bits), as Vela's generator writes it


def _const(name: str, values: np.ndarray, dtype: DataType, quant: Quantization | None) -> Tensor:
    values.flags.writeable = False
    return Tensor(name, values.shape, dtype, quant, values)


def test_an_int16_network_runs_on_the_npu(tmp_path):
    from npuplan.regstream.events import NpuEvent

    q = Quantization((0.001,), (0,))
    x, y = Tensor("x", (1, 8, 8, 4), DataType.INT16, q), Tensor("y", (1, 8, 8, 8), DataType.INT16, q)
    t = Tensor("t", (1, 8, 8, 8), DataType.INT16, Quantization((1 / 32768,), (0,)))
    z = Tensor("z", (1, 8, 8, 8), DataType.INT16, Quantization((0.002,), (0,)))
    w = _const("w", np.arange(8 * 3 * 3 * 4, dtype=np.int8).reshape(8, 3, 3, 4) % 7 - 3, DataType.INT8,
               Quantization((0.02,), (0,)))
    b = _const("b", np.arange(8, dtype=np.int64) * 100, DataType.INT64, None)
    conv = Op("CONV_2D", (x, w, b), (y,), frozen_options({
        "padding": "SAME", "stride_h": 1, "stride_w": 1, "dilation_h_factor": 1, "dilation_w_factor": 1,
        "fused_activation_function": "NONE"}), 0)
    ops = (conv, Op("TANH", (y,), (t,), frozen_options({}), 1),
           Op("ADD", (t, y), (z,), frozen_options({"fused_activation_function": "NONE"}), 2))
    _, emitted, report = emit_graph(tmp_path, Graph("int16", ops, (x,), (z,)))
    kinds = [e.kind for s in report.streams for e in s.events if isinstance(e, NpuEvent)]
    assert kinds == ["Conv2D", "Pooling", "ElementWise"]
    assert [a & 0xF for a in registers_at_kicks(emitted.data, "ACTIVATION")] == [0, TANH, 0]
    # Vela's conventions for a 16-bit convolution: natural rounding, 16-bit multipliers (int64 biases)
    precision = registers_at_kicks(emitted.data, "OFM_PRECISION")
    assert [p >> 14 & 3 for p in precision] == [NATURAL, 0, 0]


def test_int16_convolution_scales_have_16_bit_multipliers():
    from npuplan.emit.weights import channel_scales
    from npuplan.ir.lowered import BlockType, NpuOp
    from npuplan.lowering.fixedpoint import quantise_scale

    q = Quantization((0.001,), (0,))
    x, y = Tensor("x", (1, 4, 4, 8), DataType.INT16, q), Tensor("y", (1, 4, 4, 8), DataType.INT16, q)
    w = _const("w", np.ones((8, 1, 1, 8), dtype=np.int8), DataType.INT8, Quantization((0.3,), (0,)))
    op = NpuOp("y", "CONV_2D", "Conv2DBias", BlockType.CONV, x, x.shape4d, y, y.shape4d, weights=w.data,
               weight_tensor=w, bias=np.zeros(8, dtype=np.int64))
    multiplier, shift = quantise_scale(0.3)
    assert channel_scales(op) == [((multiplier + (1 << 15)) >> 16, shift - 16)] * 8


def test_int16_tanh_clamps_to_its_range(tmp_path):
    """Vela clamps the hardware's tanh to [-1, 1] and sigmoid to [0, 1] in the output's quantization."""
    q = Quantization((1 / 4096,), (0,))
    x, t = Tensor("x", (1, 4, 4, 8), DataType.INT16, q), Tensor("t", (1, 4, 4, 8), DataType.INT16,
                                                                   Quantization((1 / 32768,), (0,)))
    s = Tensor("s", (1, 4, 4, 8), DataType.INT16, Quantization((1 / 32768,), (0,)))
    ops = (Op("TANH", (x,), (t,), frozen_options({}), 0), Op("LOGISTIC", (x,), (s,), frozen_options({}), 1))
    _, emitted, _ = emit_graph(tmp_path, Graph("act16", ops, (x,), (t, s)))
    mins = [m - (1 << 16) if m >= 1 << 15 else m for m in registers_at_kicks(emitted.data, "ACTIVATION_MIN")]
    assert sorted(mins) == [-32768, 0]


def test_fully_connected_scales_multiply_in_float32():
    """TFLite's fully-connected kernel (and Vela) multiply the IFM and weight scales in float32."""
    from npuplan.emit.weights import channel_scales
    from npuplan.ir.lowered import BlockType, NpuOp
    from npuplan.lowering.fixedpoint import quantise_scale

    x = Tensor("x", (1, 16), DataType.INT8, Quantization((0.0123456,), (3,)))
    y = Tensor("y", (1, 4), DataType.INT8, Quantization((0.0871,), (-1,)))
    w = _const("w", np.ones((4, 1, 1, 16), dtype=np.int8), DataType.INT8, Quantization((0.00377,), (0,)))
    op = NpuOp("y", "FULLY_CONNECTED", "FullyConnected", BlockType.VECTOR_PRODUCT, x, x.shape4d, y, y.shape4d,
               weights=w.data, weight_tensor=w, bias=np.zeros(4, dtype=np.int32))
    product = np.float32(np.float32(0.0123456) * np.float32(0.00377))
    assert channel_scales(op) == [quantise_scale(float(np.float64(product) / np.float64(0.0871)))] * 4
