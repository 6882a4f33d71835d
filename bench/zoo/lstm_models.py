"""UNIDIRECTIONAL_SEQUENCE_LSTM networks for the differential zoo, written with npuplan's own TFLite
writer (TensorFlow 2.21's int8 and 16x8 converters crash on a not unrolled Keras LSTM, so
``generate.py`` cannot make them).

Each network is one LSTM (no CIFG, peephole, projection or normalisation, as Vela runs it) over a
seeded sequence: weights drawn from a normal distribution (as trained weights are, rather than
uniform), biases small, the output and cell states variable tensors, TFLite's five intermediates
(the gates' int16 scales and the hidden state's). Batch-major and time-major, int8 and 16x8.
``head`` networks put a FULLY_CONNECTED before and after the LSTM (the NPU runs those, the CPU the
LSTM, so the variable states live in the NPU's arena between NPU partitions). ``svdf_model`` is an
int8 SVDF (keyword spotting's layer) between two FULLY_CONNECTED, its activation state variable.

Usage: python bench/zoo/lstm_models.py [--out /work/zoo_lstm]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from npuplan.io.tflite_write import write_tflite  # noqa: E402
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options  # noqa: E402
from npuplan.ir.types import DataType, Quantization  # noqa: E402

_NUMPY = {DataType.INT8: np.int8, DataType.INT16: np.int16, DataType.INT32: np.int32, DataType.INT64: np.int64}


def _constants(seed: int):  # noqa: ANN202 - a closure over one generator
    rng = np.random.default_rng(seed)

    def const(name: str, shape: tuple[int, ...], dtype: DataType, quant: Quantization | None, spread: int) -> Tensor:
        bound = 32767 if dtype is DataType.INT16 else 127
        values = np.clip(np.round(rng.normal(0, spread, size=shape)), -bound, bound).astype(_NUMPY[dtype])
        values.flags.writeable = False
        return Tensor(name, shape, dtype, quant, values)
    return const


def _dense(const, name: str, x: Tensor, units: int, out_quant: Quantization) -> Op:  # noqa: ANN001
    """A FULLY_CONNECTED of ``x``'s last axis to ``units`` (int8, keeping the leading dims)."""
    w = const(f"{name}_w", (units, x.shape[-1]), DataType.INT8, Quantization((0.01,), (0,)), 32)
    b = const(f"{name}_b", (units,), DataType.INT32, Quantization((x.quant.scale[0] * 0.01,), (0,)), 25)
    y = Tensor(name, (*x.shape[:-1], units), DataType.INT8, out_quant)
    return Op("FULLY_CONNECTED", (x, w, b), (y,), frozen_options(dict(
        fused_activation_function="NONE", weights_format="DEFAULT", keep_num_dims=True,
        asymmetric_quantize_inputs=False)))


def lstm_model(*, steps: int, features: int, cells: int, int16: bool = False, time_major: bool = False,
               batches: int = 1, seed: int = 0, head: bool = False) -> bytes:
    """One LSTM network as TFLite bytes (``head``: between two FULLY_CONNECTED)."""
    const = _constants(seed)

    act = DataType.INT16 if int16 else DataType.INT8
    zero = 0 if int16 else -3
    shape = (steps, batches, features) if time_major else (batches, steps, features)
    x = Tensor("x", shape, act, Quantization((0.05,), (zero,)))
    weights = Quantization((0.01,), (0,))
    w_in = [const(f"w_{g}", (cells, features), DataType.INT8, weights, 32) for g in "ifco"]
    w_rec = [const(f"r_{g}", (cells, cells), DataType.INT8, weights, 32) for g in "ifco"]
    bias = [const(f"b_{g}", (cells,), DataType.INT64 if int16 else DataType.INT32, None, 25) for g in "ifco"]
    hidden = Quantization((0.02,), (0 if int16 else -1,))
    output_state = Tensor("output_state", (batches, cells), act, hidden, None, is_variable=True)
    cell_state = Tensor("cell_state", (batches, cells), DataType.INT16, Quantization((2.0**-11,), (0,)), None,
                        is_variable=True)
    y = Tensor("y", (*shape[:2], cells), act, hidden)
    scales = [Tensor(f"gate_scale_{i}", (), DataType.INT16, Quantization((2.0**-12,), (0,))) for i in range(4)]
    scales.append(Tensor("hidden_scale", (), DataType.INT8, Quantization((0.007,), (0,))))
    inputs = [x, *w_in, *w_rec, None, None, None, *bias, None, None, output_state, cell_state, None, None, None, None]
    lstm = Op("UNIDIRECTIONAL_SEQUENCE_LSTM", tuple(inputs), (y,),
              frozen_options(dict(fused_activation_function="TANH", cell_clip=0.0, proj_clip=0.0,
                                  time_major=time_major, asymmetric_quantize_inputs=False)),
              0, intermediates=tuple(scales))
    if not head:
        return write_tflite(Model("lstm", (Graph("main", (lstm,), (x,), (y,)),)))
    x_in = Tensor("x_in", shape, act, x.quant)
    first = _dense(const, "x", x_in, features, x.quant)
    lstm = Op(lstm.type, (first.outputs[0], *lstm.inputs[1:]), lstm.outputs, lstm.options, 0,
              intermediates=lstm.intermediates)
    last = _dense(const, "logits", y, 10, Quantization((0.1,), (0,)))
    return write_tflite(Model("lstm", (Graph("main", (first, lstm, last), (x_in,), last.outputs),)))


def svdf_model(*, features: int, units: int, memory: int, rank: int = 1, batches: int = 1, seed: int = 0) -> bytes:
    """An int8 SVDF between two FULLY_CONNECTED, as TFLite bytes. TFLite's integer SVDF: int8
    input, feature weights and output, int16 time weights and activation state (variable), int32 bias."""
    const = _constants(seed)
    x_in = Tensor("x_in", (batches, features), DataType.INT8, Quantization((0.05,), (-3,)))
    first = _dense(const, "x", x_in, features, Quantization((0.05,), (-3,)))
    filters = units * rank
    w_feature = const("w_feature", (filters, features), DataType.INT8, Quantization((0.01,), (0,)), 32)
    w_time = const("w_time", (filters, memory), DataType.INT16, Quantization((2.0**-10,), (0,)), 300)
    bias = const("svdf_b", (units,), DataType.INT32, Quantization((1e-5,), (0,)), 25)
    state = Tensor("activation_state", (batches, filters * memory), DataType.INT16,
                   Quantization((2.0**-8,), (0,)), None, is_variable=True)
    y = Tensor("svdf", (batches, units), DataType.INT8, Quantization((0.03,), (-2,)))
    svdf = Op("SVDF", (first.outputs[0], w_feature, w_time, bias, state), (y,), frozen_options(dict(
        rank=rank, fused_activation_function="RELU", asymmetric_quantize_inputs=False)))
    last = _dense(const, "logits", y, 10, Quantization((0.1,), (0,)))
    return write_tflite(Model("svdf", (Graph("main", (first, svdf, last), (x_in,), last.outputs),)))


MODELS = {
    "lstm_t8_f16_c16": dict(steps=8, features=16, cells=16),
    "lstm_t16_f8_c24": dict(steps=16, features=8, cells=24),
    "lstm_16x8_t8": dict(steps=8, features=16, cells=16, int16=True),
    "lstm_tm_t4_b2": dict(steps=4, features=16, cells=16, time_major=True, batches=2),
    "lstm_head_t8_f16_c16": dict(steps=8, features=16, cells=16, head=True),
    "lstm_head_tm_t4_b2": dict(steps=4, features=16, cells=16, time_major=True, batches=2, head=True),
}
SVDF_MODELS = {
    "svdf_f32_u16_m8": dict(features=32, units=16, memory=8),
    "svdf_f16_u8_m10_r2": dict(features=16, units=8, memory=10, rank=2),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/work/zoo_lstm"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, shape in MODELS.items():
        (args.out / f"{name}.tflite").write_bytes(lstm_model(**shape))  # type: ignore[arg-type]
        print(name)
    for name, shape in SVDF_MODELS.items():
        (args.out / f"{name}.tflite").write_bytes(svdf_model(**shape))  # type: ignore[arg-type]
        print(name)


if __name__ == "__main__":
    main()
