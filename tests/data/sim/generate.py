"""Write the single-operator int8 (and int16x8) models the simulator's oracle test compiles with Vela.

Run with TensorFlow (a tool for making test data, never a dependency of npuplan):
    /work/tfvenv/bin/python tests/data/sim/generate.py OUT_DIR [NAME ...]
Each model is one Keras layer (or two where TFLite needs them) with seeded random weights,
converted with full-integer quantization over a seeded representative dataset.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import tensorflow as tf


def _layers() -> dict[str, tuple[tuple[int, ...], object]]:
    L = tf.keras.layers
    return {
        "conv3x3_same": ((12, 12, 16), lambda x: L.Conv2D(24, 3, padding="same")(x)),
        "conv3x3_s2_rgb": ((17, 15, 3), lambda x: L.Conv2D(8, 3, strides=2, padding="valid", activation="relu")(x)),
        "conv5x5_dil2": ((14, 14, 8), lambda x: L.Conv2D(16, 5, dilation_rate=2, padding="same")(x)),
        "conv1x1_odd": ((7, 9, 40), lambda x: L.Conv2D(37, 1)(x)),
        "conv_deep": ((6, 6, 96), lambda x: L.Conv2D(144, 3, padding="same", activation="relu6")(x)),
        "conv_big_kernel": ((20, 20, 4), lambda x: L.Conv2D(8, (9, 10), strides=(1, 2), padding="same")(x)),
        "depthwise3x3": ((10, 10, 32), lambda x: L.DepthwiseConv2D(3, padding="same")(x)),
        "depthwise_s2": ((15, 13, 24), lambda x: L.DepthwiseConv2D(3, strides=2, padding="same", activation="relu")(x)),
        "depthwise_mult2": ((8, 8, 8), lambda x: L.DepthwiseConv2D(3, depth_multiplier=2, padding="valid")(x)),
        "fully_connected": ((64,), lambda x: L.Dense(10)(x)),
        "fully_connected_wide": ((300,), lambda x: L.Dense(70, activation="relu")(x)),
        "maxpool": ((12, 12, 20), lambda x: L.MaxPooling2D(2)(x)),
        "avgpool_same": ((11, 11, 18), lambda x: L.AveragePooling2D(3, strides=1, padding="same")(x)),
        "add": ((9, 9, 20), "add"),
        "add_broadcast": ((9, 9, 20), "add_broadcast"),
        "mul": ((8, 8, 16), "mul"),
        "sub_scalar": ((8, 8, 16), "sub_scalar"),
        "tanh": ((8, 8, 16), lambda x: L.Activation("tanh")(x)),
        "sigmoid": ((8, 8, 16), lambda x: L.Activation("sigmoid")(x)),
        "leaky_relu": ((8, 8, 16), lambda x: L.LeakyReLU(0.2)(x)),
        "resize_nearest": ((6, 6, 8), lambda x: L.UpSampling2D(2)(x)),
        "resize_bilinear": ((6, 6, 8), lambda x: L.Resizing(12, 12, interpolation="bilinear")(x)),
        "transpose_conv": ((6, 6, 8), lambda x: L.Conv2DTranspose(8, 3, strides=2, padding="same")(x)),
        "concat": ((8, 8, 12), "concat"),
        "pad_conv": ((10, 10, 8), lambda x: L.Conv2D(8, 3)(L.ZeroPadding2D(((2, 1), (1, 2)))(x))),
        "mean": ((7, 7, 32), lambda x: L.GlobalAveragePooling2D(keepdims=True)(x)),
        "softmax": ((1, 1, 40), lambda x: L.Softmax()(x)),
        "avgpool_valid": ((12, 12, 16), lambda x: L.AveragePooling2D(3, strides=3)(x)),
        "conv_s3": ((19, 17, 12), lambda x: L.Conv2D(20, 3, strides=3, padding="same")(x)),
        "conv_s4_k5": ((23, 23, 6), lambda x: L.Conv2D(10, 5, strides=4, padding="valid")(x)),
        "maxpool_s3": ((19, 17, 12), lambda x: L.MaxPooling2D(3, strides=3, padding="same")(x)),
        "dw_dil2": ((14, 14, 16), lambda x: L.DepthwiseConv2D(3, dilation_rate=2, padding="same")(x)),
        "add_bcast_h": ((6, 7, 9), ((1, 7, 9), tf.keras.ops.add)),
        "mul_bcast_w": ((6, 7, 9), ((6, 1, 9), tf.keras.ops.multiply)),
        # LUT activations around an operation without one (tables reloaded or kept per configuration)
        "lut_chain": ((8, 8, 16), lambda x: L.Activation("sigmoid")(L.Conv2D(16, 3, padding="same")(
            L.Activation("tanh")(x)))),
        # two 256-byte tables live at once (two slots), then a third after the add
        "lut_two_tables": ((8, 8, 16), lambda x: L.Activation("tanh")(
            L.Add()([L.Activation("tanh")(x), L.Activation("sigmoid")(x)]))),
    }


def _build(shape: tuple[int, ...], body: object) -> tf.keras.Model:
    x = tf.keras.Input(shape=shape, batch_size=1)
    if isinstance(body, tuple):  # a binary op with a second input of another (broadcast) shape
        other, function = body
        y = tf.keras.Input(shape=other, batch_size=1)
        return tf.keras.Model([x, y], function(x, y))
    if body == "add":
        y = tf.keras.Input(shape=shape, batch_size=1)
        return tf.keras.Model([x, y], tf.keras.layers.Add()([x, y]))
    if body == "add_broadcast":
        y = tf.keras.Input(shape=(1, 1, shape[-1]), batch_size=1)
        return tf.keras.Model([x, y], tf.keras.ops.add(x, y))
    if body == "mul":
        y = tf.keras.Input(shape=shape, batch_size=1)
        return tf.keras.Model([x, y], tf.keras.layers.Multiply()([x, y]))
    if body == "sub_scalar":
        return tf.keras.Model(x, tf.keras.ops.subtract(x, 0.75))
    if body == "concat":
        y = tf.keras.Input(shape=shape[:-1] + (20,), batch_size=1)
        return tf.keras.Model([x, y], tf.keras.layers.Concatenate()([x, y]))
    return tf.keras.Model(x, body(x))  # type: ignore[operator]


def convert(model: tf.keras.Model, *, int16: bool, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    shapes = [tuple(int(d) for d in t.shape) for t in model.inputs]

    def data():
        for _ in range(32):
            yield [rng.uniform(-2, 2, s).astype(np.float32) for s in shapes]

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = data
    if int16:
        conv.target_spec.supported_ops = [tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
        conv.inference_input_type = conv.inference_output_type = tf.int16
    else:
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = conv.inference_output_type = tf.int8
    return conv.convert()


def main(out: Path, names: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tf.keras.utils.set_random_seed(7)
    for k, (name, (shape, body)) in enumerate(_layers().items()):
        if names and name not in names:  # a subset keeps each model's data seed (k); Keras draws other weights
            continue
        model = _build(shape, body)
        (out / f"{name}.tflite").write_bytes(convert(model, int16=False, seed=k))
        if name in ("conv3x3_same", "depthwise3x3", "add", "mul", "maxpool", "tanh", "fully_connected", "softmax"):
            (out / f"{name}_i16.tflite").write_bytes(convert(model, int16=True, seed=k))


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
