"""UNIDIRECTIONAL_SEQUENCE_LSTM networks for the differential zoo, written with npuplan's own TFLite
writer (TensorFlow 2.21's int8 and 16x8 converters crash on a not unrolled Keras LSTM, so
``generate.py`` cannot make them).

Each network is one LSTM (no CIFG, peephole, projection or normalisation, as Vela runs it) over a
seeded sequence: weights drawn from a normal distribution (as trained weights are, rather than
uniform), biases small, the output and cell states variable tensors, TFLite's five intermediates
(the gates' int16 scales and the hidden state's). Batch-major and time-major, int8 and 16x8.

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

_NUMPY = {DataType.INT8: np.int8, DataType.INT32: np.int32, DataType.INT64: np.int64}


def lstm_model(*, steps: int, features: int, cells: int, int16: bool = False, time_major: bool = False,
               batches: int = 1, seed: int = 0) -> bytes:
    """One LSTM network as TFLite bytes."""
    rng = np.random.default_rng(seed)

    def const(name: str, shape: tuple[int, ...], dtype: DataType, quant: Quantization | None, spread: int) -> Tensor:
        values = np.clip(np.round(rng.normal(0, spread, size=shape)), -127, 127).astype(_NUMPY[dtype])
        values.flags.writeable = False
        return Tensor(name, shape, dtype, quant, values)

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
    return write_tflite(Model("lstm", (Graph("main", (lstm,), (x,), (y,)),)))


MODELS = {
    "lstm_t8_f16_c16": dict(steps=8, features=16, cells=16),
    "lstm_t16_f8_c24": dict(steps=16, features=8, cells=24),
    "lstm_16x8_t8": dict(steps=8, features=16, cells=16, int16=True),
    "lstm_tm_t4_b2": dict(steps=4, features=16, cells=16, time_major=True, batches=2),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/work/zoo_lstm"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, shape in MODELS.items():
        (args.out / f"{name}.tflite").write_bytes(lstm_model(**shape))  # type: ignore[arg-type]
        print(name)


if __name__ == "__main__":
    main()
