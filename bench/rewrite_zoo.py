"""Generate the int8 networks that exercise the compile-time rewrites (TensorFlow only, never npuplan).

Token fully-connected layers (a 64-token MLP, an MLP-mixer, a transformer block), dilated convs
(dilations 2 to 18, odd and even, an ASPP block, a TF SPACE_TO_BATCH_ND sandwich the converter
does not fuse), and Keras 3 / tf.function exports whose RESHAPE shapes are computed with SHAPE,
STRIDED_SLICE, PACK, GATHER and REDUCE_PROD (dynamic batch). Weights and the representative
data come from seeded generators, so a figure names a reproducible model.

Usage (in a TensorFlow environment): python bench/rewrite_zoo.py OUT_DIR [NAME ...]
Then: PYTHONPATH=src python3 bench/rewrite_compare.py OUT_DIR --vela PATH/TO/vela
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
from keras import layers  # noqa: E402

Network = tuple[Any, tuple[int, ...]]


def _convert(model: Any, shape: tuple[int, ...]) -> bytes:
    def representative() -> Any:
        rng = np.random.default_rng(0)
        for _ in range(8):
            yield [rng.standard_normal((1, *shape)).astype(np.float32)]

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.int8
    converter.inference_output_type = tf.int8
    return bytes(converter.convert())


def fc_tokens() -> Network:
    x = keras.Input((64, 96), batch_size=1)
    y = layers.Dense(96)(layers.Dense(192, activation="relu")(x))
    return keras.Model(x, y), (64, 96)


def mixer() -> Network:
    x = keras.Input((16, 16, 3), batch_size=1)
    t = layers.Reshape((16, 64))(layers.Conv2D(64, 4, strides=4)(x))
    for _ in range(2):
        u = layers.Dense(16)(layers.Dense(32, activation="relu")(layers.Permute((2, 1))(t)))
        t = t + layers.Permute((2, 1))(u)
        t = t + layers.Dense(64)(layers.Dense(128, activation="relu")(t))
    return keras.Model(x, layers.Dense(10)(layers.GlobalAveragePooling1D()(t))), (16, 16, 3)


def transformer(batch_size: int | None = 1) -> Network:
    x = keras.Input((32, 64), batch_size=batch_size)
    h = layers.Add()([x, layers.MultiHeadAttention(num_heads=4, key_dim=16)(x, x)])
    f = layers.Dense(64)(layers.Dense(128, activation="relu")(h))
    return keras.Model(x, layers.Add()([h, f])), (32, 64)


def flatten_dynamic() -> Network:
    x = keras.Input((8, 8, 16))
    y = layers.Reshape((64, 16))(layers.Conv2D(16, 3, padding="same")(x))
    return keras.Model(x, layers.Dense(10)(layers.Flatten()(layers.Dense(32)(y)))), (8, 8, 16)


class ShapeReshape(layers.Layer):
    """tf.shape arithmetic feeding reshapes, as tf.function code writes it."""

    def call(self, x):  # type: ignore[no-untyped-def]
        s = tf.shape(x)
        return tf.reshape(tf.reshape(x, [s[0], s[1] * s[2], s[3]]), [s[0], 1024])


def tf_shape_dynamic() -> Network:
    x = keras.Input((8, 8, 16))
    y = ShapeReshape()(layers.Conv2D(16, 3, padding="same")(x))
    return keras.Model(x, layers.Dense(10)(y)), (8, 8, 16)


class SpaceToBatchConv(layers.Layer):
    """A dilated conv written as TF lowers it, with an inner SAME conv the converter leaves unfused."""

    # (no leading underscore in the class name: it becomes a TF name scope, which cannot start with one)
    def build(self, input_shape):  # type: ignore[no-untyped-def]
        self.w = self.add_weight(shape=(3, 3, input_shape[-1], 8), initializer="glorot_uniform")

    def call(self, x):  # type: ignore[no-untyped-def]
        y = tf.nn.conv2d(tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]]), self.w, 1, "SAME")
        return tf.batch_to_space(y, [2, 2], [[0, 0], [0, 0]])


def space_to_batch_conv() -> Network:
    x = keras.Input((20, 20, 8), batch_size=1)
    return keras.Model(x, layers.ReLU()(SpaceToBatchConv()(layers.Conv2D(8, 1)(x)))), (20, 20, 8)


def dilated() -> Network:
    x = keras.Input((32, 32, 8), batch_size=1)
    y = layers.Conv2D(16, 3, padding="same", dilation_rate=2, activation="relu")(x)
    y = layers.DepthwiseConv2D(3, padding="same", dilation_rate=4)(y)
    y = layers.Conv2D(16, 3, padding="valid", dilation_rate=2)(y)
    return keras.Model(x, layers.Conv2D(16, 3, padding="same", dilation_rate=(2, 3))(y)), (32, 32, 8)


def aspp() -> Network:
    x = keras.Input((32, 32, 16), batch_size=1)
    branches = [layers.Conv2D(16, 1, activation="relu")(x)]
    branches += [layers.Conv2D(16, 3, padding="same", dilation_rate=d, activation="relu")(x) for d in (6, 12, 18)]
    return keras.Model(x, layers.Conv2D(16, 1)(layers.Concatenate()(branches))), (32, 32, 16)


def depthwise_dilations() -> Network:
    x = keras.Input((24, 24, 32), batch_size=1)
    y = x
    for d in (1, 2, 3, 4, 5):
        y = layers.Conv2D(32, 1)(layers.DepthwiseConv2D(3, padding="same", dilation_rate=d, activation="relu")(y))
    return keras.Model(x, y), (24, 24, 32)


NETWORKS: dict[str, Callable[[], Network]] = {
    "fc_tokens": fc_tokens,
    "mixer": mixer,
    "transformer": transformer,
    "transformer_dynamic": lambda: transformer(None),
    "flatten_dynamic": flatten_dynamic,
    "tf_shape_dynamic": tf_shape_dynamic,
    "space_to_batch_conv": space_to_batch_conv,
    "dilated": dilated,
    "aspp": aspp,
    "depthwise_dilations": depthwise_dilations,
}


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name in sys.argv[2:] or NETWORKS:
        keras.utils.set_random_seed(0)
        model, shape = NETWORKS[name]()
        data = _convert(model, shape)
        (out / f"{name}.tflite").write_bytes(data)
        print(f"wrote {name}.tflite ({len(data)} bytes)")


if __name__ == "__main__":
    main()
