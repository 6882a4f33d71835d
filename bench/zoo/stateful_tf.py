"""Stateful networks as TensorFlow converts them (run with TensorFlow's Python, /work/tfvenv):
Keras ``stateful=True`` SimpleRNN and GRU (unrolled; TensorFlow 2.21's int8 converter keeps their
state as resource variables: CALL_ONCE, VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE and an
initialiser subgraph, not ``is_variable`` tensors), a GRU returning its whole sequence, two stacked
stateful LSTMs (two variables each), and ``tf.Variable`` states updated each call (one starting at
zero, one at a non-zero value, so CALL_ONCE's initialiser matters). Full int8 quantization with a
seeded representative set.

Usage: /work/tfvenv/bin/python bench/zoo/stateful_tf.py [--out /work/zoo_stateful]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import tensorflow as tf


def _representative(shape: tuple[int, ...]):  # noqa: ANN202
    def gen():  # noqa: ANN202
        rng = np.random.default_rng(0)
        for _ in range(20):
            yield [rng.normal(0, 1, shape).astype(np.float32)]
    return gen


def _int8(converter: tf.lite.TFLiteConverter, shape: tuple[int, ...]) -> bytes:
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = _representative(shape)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.int8
    converter.inference_output_type = tf.int8
    return converter.convert()


def keras_rnn(kind: str, units: int = 12, steps: int = 4, features: int = 8, *, layers: int = 1,
              sequences: bool = False) -> bytes:
    """Dense -> ``layers`` stateful ``kind`` layers (all but the last, or all with ``sequences``,
    returning the whole sequence) -> Dense."""
    tf.keras.utils.set_random_seed(0)
    inp = tf.keras.Input(batch_size=1, shape=(steps, features))
    x = tf.keras.layers.Dense(features)(inp)
    for k in range(layers):
        last = k == layers - 1
        x = getattr(tf.keras.layers, kind)(units, stateful=True, unroll=True, return_sequences=sequences or not last)(x)
    model = tf.keras.Model(inp, tf.keras.layers.Dense(6)(x))
    return _int8(tf.lite.TFLiteConverter.from_keras_model(model), (1, steps, features))


class _Accumulator(tf.Module):
    """h = relu(x W + state); state <- h / 2; y = h W."""

    def __init__(self, width: int = 16, start: float = 0.0) -> None:
        self.state = tf.Variable(tf.fill((1, width), start), trainable=False)
        self.w = tf.constant(np.random.default_rng(1).normal(0, 0.3, (width, width)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec((1, 16), tf.float32)])
    def __call__(self, x: tf.Tensor) -> tf.Tensor:
        h = tf.nn.relu(tf.matmul(x, self.w) + self.state)
        self.state.assign(h * 0.5)
        return tf.matmul(h, self.w)


def tf_variable(start: float = 0.0) -> bytes:
    module = _Accumulator(start=start)
    converter = tf.lite.TFLiteConverter.from_concrete_functions([module.__call__.get_concrete_function()], module)
    return _int8(converter, (1, 16))


MODELS = {"simplernn_stateful": lambda: keras_rnn("SimpleRNN"), "gru_stateful": lambda: keras_rnn("GRU"),
          "tf_variable_state": tf_variable,
          "gru_seq_stateful": lambda: keras_rnn("GRU", units=8, steps=6, sequences=True),
          "lstm2_stateful": lambda: keras_rnn("LSTM", units=10, steps=4, layers=2),
          "tf_variable_start": lambda: tf_variable(0.75)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/work/zoo_stateful"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, make in MODELS.items():
        (args.out / f"{name}.tflite").write_bytes(make())
        print(name)


if __name__ == "__main__":
    main()
