"""Generate the differential zoo: small int8 TFLite networks across architecture families and one
per operator type, for comparing npuplan with Vela on networks neither was tuned on.

Run with a Python that has TensorFlow (a tool, never a dependency of npuplan):
  /path/to/tf-venv/bin/python bench/zoo/generate.py --out /work/zoo [--only NAME ...]
  /path/to/tf-venv/bin/python bench/zoo/generate.py --set holdout --out /work/zoo2   (the hold-out set)
  /path/to/tf-venv/bin/python bench/zoo/generate.py --set unseen --out /work/zoo3    (the third set, unseen.py)

Then ``python3 bench/zoo/op_census.py --zoo DIR`` (system Python, ``tflite`` package) checks and
records which operator types each file really holds. Seeded: the same TensorFlow version gives the
same files. Weights are random; each model is
converted with full-integer post-training quantization (int8 inputs and outputs) from a random
representative dataset. Writes DIR/<name>.tflite and DIR/manifest.json (family, input shape and
the TFLite operator types each file really contains).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import zlib
from collections import Counter
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

L = tf.keras.layers


def _conv_bn(x, filters, k=3, s=1, act="relu", name=None):
    x = L.Conv2D(filters, k, strides=s, padding="same", use_bias=False)(x)
    x = L.BatchNormalization()(x)
    if act == "leaky":
        return L.LeakyReLU(0.1)(x)
    return L.Activation(act)(x) if act else x


# ---------------------------------------------------------------- families
def tiny_yolo(size=96, width=16, classes=3):
    inp = L.Input((size, size, 3))
    x = inp
    skips = []
    for i, f in enumerate((width, width * 2, width * 4, width * 8)):
        x = _conv_bn(x, f, act="leaky")
        skips.append(x)
        x = L.MaxPooling2D(2)(x)
    x = _conv_bn(x, width * 8, act="leaky")
    head1 = L.Conv2D(3 * (5 + classes), 1)(x)
    y = _conv_bn(x, width * 4, 1, act="leaky")
    y = L.UpSampling2D(2)(y)
    y = L.Concatenate()([y, skips[-1]])
    y = _conv_bn(y, width * 4, act="leaky")
    head2 = L.Conv2D(3 * (5 + classes), 1)(y)
    return tf.keras.Model(inp, [head1, head2])


def unet(size=64, width=8, depth=3, up="transpose", channels=1):
    inp = L.Input((size, size, channels))
    x, skips = inp, []
    for d in range(depth):
        x = _conv_bn(x, width * 2**d)
        skips.append(x)
        x = L.MaxPooling2D(2)(x)
    x = _conv_bn(x, width * 2**depth)
    for d in reversed(range(depth)):
        if up == "transpose":
            x = L.Conv2DTranspose(width * 2**d, 2, strides=2, padding="same")(x)
        elif up == "bilinear":
            x = L.UpSampling2D(2, interpolation="bilinear")(x)
        else:
            x = L.UpSampling2D(2)(x)
        x = L.Concatenate()([x, skips[d]])
        x = _conv_bn(x, width * 2**d)
    return tf.keras.Model(inp, L.Conv2D(1, 1, activation="sigmoid")(x))


def densenet(size=32, growth=8, blocks=(3, 3)):
    inp = L.Input((size, size, 3))
    x = L.Conv2D(2 * growth, 3, padding="same")(inp)
    for b, n in enumerate(blocks):
        for _ in range(n):
            y = L.BatchNormalization()(x)
            y = L.ReLU()(y)
            y = L.Conv2D(growth, 3, padding="same")(y)
            x = L.Concatenate()([x, y])
        if b < len(blocks) - 1:
            x = L.Conv2D(x.shape[-1] // 2, 1)(x)
            x = L.AveragePooling2D(2)(x)
    x = L.GlobalAveragePooling2D()(x)
    return tf.keras.Model(inp, L.Dense(10)(x))


def squeezenet(size=64, fires=3):
    inp = L.Input((size, size, 3))
    x = L.Conv2D(32, 3, strides=2, padding="same", activation="relu")(inp)
    x = L.MaxPooling2D(3, 2)(x)
    for i in range(fires):
        s = L.Conv2D(8 + 4 * i, 1, activation="relu")(x)
        e1 = L.Conv2D(16 + 8 * i, 1, activation="relu")(s)
        e3 = L.Conv2D(16 + 8 * i, 3, padding="same", activation="relu")(s)
        x = L.Concatenate()([e1, e3])
    x = L.Conv2D(10, 1)(x)
    return tf.keras.Model(inp, L.GlobalAveragePooling2D()(x))


def inception(size=48, width=8, cells=2):
    inp = L.Input((size, size, 3))
    x = L.Conv2D(width * 2, 3, strides=2, padding="same", activation="relu")(inp)
    for _ in range(cells):
        a = L.Conv2D(width, 1, activation="relu")(x)
        b = L.Conv2D(width, 3, padding="same", activation="relu")(L.Conv2D(width, 1, activation="relu")(x))
        c = L.Conv2D(width, 5, padding="same", activation="relu")(L.Conv2D(width // 2, 1, activation="relu")(x))
        d = L.Conv2D(width, 1, activation="relu")(L.MaxPooling2D(3, 1, padding="same")(x))
        e = L.SeparableConv2D(width, 3, padding="same")(x)
        x = L.Concatenate()([a, b, c, d, e])
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(x)))


def transformer(tokens=16, dim=32, heads=2, layers=1):
    inp = L.Input((tokens, dim))
    x = inp
    for _ in range(layers):
        y = L.LayerNormalization()(x)
        y = L.MultiHeadAttention(heads, dim // heads)(y, y)
        x = L.Add()([x, y])
        y = L.LayerNormalization()(x)
        y = L.Dense(dim * 2, activation="gelu")(y)
        y = L.Dense(dim)(y)
        x = L.Add()([x, y])
    return tf.keras.Model(inp, L.Dense(4)(L.GlobalAveragePooling1D()(x)))


def mlp_mixer(size=32, patch=8, dim=32):
    inp = L.Input((size, size, 3))
    x = L.Conv2D(dim, patch, strides=patch)(inp)
    n = (size // patch) ** 2
    x = L.Reshape((n, dim))(x)
    for _ in range(2):
        y = L.LayerNormalization()(x)
        y = L.Permute((2, 1))(y)
        y = L.Dense(n, activation="gelu")(y)
        y = L.Permute((2, 1))(y)
        x = L.Add()([x, y])
        y = L.LayerNormalization()(x)
        y = L.Dense(dim, activation="gelu")(y)
        x = L.Add()([x, y])
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling1D()(x)))


def audio1d(length=256, channels=1, width=16):
    inp = L.Input((length, channels))
    x = inp
    for i in range(3):
        x = L.Conv1D(width * 2**i, 5, strides=2, padding="same", activation="relu")(x)
    x = L.GlobalAveragePooling1D()(x)
    return tf.keras.Model(inp, L.Dense(8, activation="softmax")(x))


def decoder(latent=32, size=4, width=32, steps=3):
    inp = L.Input((latent,))
    x = L.Dense(size * size * width, activation="relu")(inp)
    x = L.Reshape((size, size, width))(x)
    for i in range(steps):
        x = L.Conv2DTranspose(max(width // 2**i, 4), 3, strides=2, padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Conv2D(1, 3, padding="same", activation="sigmoid")(x))


def prelu_net(size=32, width=16, shared=True):
    inp = L.Input((size, size, 3))
    x = inp
    for i in range(3):
        x = L.Conv2D(width, 3, padding="same")(x)
        x = L.PReLU(shared_axes=[1, 2] if shared else None)(x)
    return tf.keras.Model(inp, L.Conv2D(4, 1)(x))


def dilated(size=32, width=16, rate=2):
    inp = L.Input((size, size, 3))
    x = L.Conv2D(width, 3, padding="same", activation="relu")(inp)
    x = L.Conv2D(width, 3, padding="same", dilation_rate=rate, activation="relu")(x)
    x = L.DepthwiseConv2D(3, padding="same", dilation_rate=rate)(x)
    return tf.keras.Model(inp, L.Conv2D(4, 1)(x))


def lstm_net(steps=8, features=16, units=16):
    """The LSTM unrolled into its gate ops. Not unrolled (one UNIDIRECTIONAL_SEQUENCE_LSTM), TF
    2.21's int8 converter crashes (segmentation fault in calibration), so the zoo has none."""
    inp = L.Input((steps, features))
    return tf.keras.Model(inp, L.Dense(4)(L.LSTM(units, unroll=True)(inp)))


def keras3_tokens(size=16, channels=8, dim=24):
    """Keras 3 style shape arithmetic: a RESHAPE whose shape is SHAPE/STRIDED_SLICE/PACK of its input."""
    inp = L.Input((size, size, channels))
    x = L.Conv2D(channels, 3, padding="same", activation="relu")(inp)
    x = L.Lambda(lambda t: tf.reshape(t, tf.stack([tf.shape(t)[0], -1, tf.shape(t)[3]])))(x)
    x = L.Dense(dim, activation="relu")(x)
    return tf.keras.Model(inp, L.Dense(4)(L.GlobalAveragePooling1D()(x)))


def single(op, shape=(16, 16, 8)):
    """One operator on a feature map (with a conv, or for tokens x features a dense layer, before
    it so the input is an NPU tensor)."""
    inp = L.Input(shape)
    x = L.Conv2D(shape[-1], 1)(inp) if len(shape) == 3 else L.Dense(shape[-1])(inp)
    layer = op if isinstance(op, L.Layer) else L.Lambda(op)
    return tf.keras.Model(inp, layer(x))


def _slice_op(x):
    return x[:, 2:10, 1:13, :]


def _strided(x):
    return x[:, ::2, :, 2:6]


FAMILIES = {
    "tiny_yolo_96": ("tiny_yolo", lambda: tiny_yolo(96, 16)),
    "tiny_yolo_160": ("tiny_yolo", lambda: tiny_yolo(160, 8, 5)),
    "tiny_yolo_64w32": ("tiny_yolo", lambda: tiny_yolo(64, 32)),
    "unet_transpose_64": ("unet", lambda: unet(64, 8, 3, "transpose")),
    "unet_nearest_64": ("unet", lambda: unet(64, 8, 3, "nearest")),
    "unet_bilinear_48": ("unet", lambda: unet(48, 8, 2, "bilinear")),
    "unet_transpose_96_rgb": ("unet", lambda: unet(96, 4, 3, "transpose", 3)),
    "densenet_32": ("densenet", lambda: densenet(32, 8, (3, 3))),
    "densenet_48_g12": ("densenet", lambda: densenet(48, 12, (4, 4))),
    "squeezenet_64": ("squeezenet", lambda: squeezenet(64, 3)),
    "squeezenet_96": ("squeezenet", lambda: squeezenet(96, 4)),
    "inception_48": ("inception", lambda: inception(48, 8, 2)),
    "inception_64_w16": ("inception", lambda: inception(64, 16, 1)),
    "transformer_16x32": ("transformer", lambda: transformer(16, 32, 2, 1)),
    "transformer_32x64": ("transformer", lambda: transformer(32, 64, 4, 1)),
    "mlp_mixer_32": ("mlp_mixer", lambda: mlp_mixer(32, 8, 32)),
    "mlp_mixer_48": ("mlp_mixer", lambda: mlp_mixer(48, 8, 24)),
    "audio1d_256": ("audio1d", lambda: audio1d(256, 1, 16)),
    "audio1d_1024x2": ("audio1d", lambda: audio1d(1024, 2, 8)),
    "decoder_4to32": ("decoder", lambda: decoder(32, 4, 32, 3)),
    "decoder_8to32": ("decoder", lambda: decoder(16, 8, 16, 2)),
    "prelu_32": ("prelu", lambda: prelu_net(32, 16)),
    "dilated_32": ("dilated", lambda: dilated(32, 16, 2)),
    "dilated_48_r3": ("dilated", lambda: dilated(48, 8, 3)),
    "lstm_8x16": ("lstm", lambda: lstm_net(8, 16, 16)),
    "lstm_16x8": ("lstm", lambda: lstm_net(16, 8, 24)),
    "prelu_48_channel": ("prelu", lambda: prelu_net(48, 8, shared=False)),
    "keras3_tokens_16": ("keras3", lambda: keras3_tokens(16, 8, 24)),
    "keras3_tokens_32w16": ("keras3", lambda: keras3_tokens(32, 16, 32)),
    "op_leaky_relu": ("single", lambda: single(L.LeakyReLU(0.2))),
    "op_prelu": ("single", lambda: single(L.PReLU(shared_axes=[1, 2]))),
    "op_transpose_conv": ("single", lambda: single(L.Conv2DTranspose(8, 3, strides=2, padding="same"))),
    "op_resize_bilinear": ("single", lambda: single(L.UpSampling2D(2, interpolation="bilinear"))),
    "op_resize_nearest": ("single", lambda: single(lambda x: tf.image.resize(x, (32, 32), "nearest"))),
    "op_resize_nearest_x3": ("single", lambda: single(lambda x: tf.image.resize(x, (48, 48), "nearest"))),
    "op_resize_bilinear_hp": ("single", lambda: single(lambda x: tf.image.resize(x, (32, 32), "bilinear"))),
    "op_concat_channels": ("single", lambda: single(lambda x: tf.concat([x, x * 2.0, x], axis=-1))),
    "op_fc_tokens": ("single", lambda: single(L.Dense(24), (16, 32))),
    "op_mul_broadcast": ("single", lambda: single(lambda x: x * tf.reduce_mean(x, axis=[1, 2], keepdims=True))),
    "op_add_relu6": ("single", lambda: single(lambda x: tf.nn.relu6(x + x))),
    "op_depth_to_space": ("single", lambda: single(lambda x: tf.nn.depth_to_space(x, 2))),
    "op_maximum": ("single", lambda: single(lambda x: tf.maximum(x, x * 0.3))),
    "op_upsampling2d": ("single", lambda: single(L.UpSampling2D(2))),
    "op_strided_slice": ("single", lambda: single(_strided)),
    "op_slice": ("single", lambda: single(_slice_op)),
    "op_split": ("single", lambda: single(lambda x: L.Add()(tf.split(x, 2, axis=-1)))),
    "op_split_v": ("single", lambda: single(lambda x: L.Concatenate()(tf.split(x, [2, 6], axis=-1)[::-1]))),
    "op_unpack_pack": ("single", lambda: single(lambda x: tf.stack(tf.unstack(x, axis=1)[::-1], axis=1))),
    "op_transpose": ("single", lambda: single(lambda x: tf.transpose(x, (0, 2, 1, 3)))),
    "op_rsqrt": ("single", lambda: single(lambda x: tf.math.rsqrt(tf.abs(x) + 1.0))),
    "op_squared_difference": ("single", lambda: single(lambda x: tf.math.squared_difference(x, x * 0.5))),
    "op_exp": ("single", lambda: single(tf.exp)),
    "op_log": ("single", lambda: single(lambda x: tf.math.log(tf.abs(x) + 1.0))),
    "op_abs": ("single", lambda: single(tf.abs)),
    "op_argmax": ("single", lambda: single(lambda x: tf.cast(tf.argmax(x, axis=-1), tf.int32))),
    "op_mirror_pad": ("single", lambda: single(lambda x: tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], "REFLECT"))),
    "op_hard_swish": ("single", lambda: single(lambda x: x * tf.nn.relu6(x + 3.0) / 6.0)),
    "op_tanh": ("single", lambda: single(tf.tanh)),
    "op_logistic": ("single", lambda: single(tf.sigmoid)),
    "op_gelu": ("single", lambda: single(tf.nn.gelu)),
    "op_mean": ("single", lambda: single(lambda x: tf.reduce_mean(x, axis=[1, 2], keepdims=True))),
    "op_quantize_uint8": ("single", lambda: single(L.ReLU())),
    "op_slice_tf": ("single", lambda: single(lambda x: tf.slice(x, [0, 2, 1, 0], [1, 8, 12, 8]))),
    "op_pad": ("single", lambda: single(lambda x: tf.pad(x, [[0, 0], [1, 2], [2, 1], [0, 0]]))),
    "op_sub": ("single", lambda: single(lambda x: x - tf.reduce_mean(x, axis=[1, 2], keepdims=True))),
    "op_minimum": ("single", lambda: single(lambda x: tf.minimum(x, x * 0.5 + 1.0))),
    "op_reduce_sum": ("single", lambda: single(lambda x: tf.reduce_sum(x, axis=-1, keepdims=True))),
    "op_reduce_max": ("single", lambda: single(lambda x: tf.reduce_max(x, axis=[1, 2], keepdims=True))),
    "op_squeeze": ("single", lambda: single(lambda x: tf.squeeze(x, axis=2), (16, 1, 8))),
    "op_softmax": ("single", lambda: single(L.Softmax(), (16, 32))),
    "op_batch_matmul": ("single", lambda: single(lambda x: tf.matmul(x, x, transpose_b=True), (16, 32))),
    "op_batchnorm_mul": ("single", lambda: single(lambda x: x * tf.constant(np.linspace(0.5, 2, 8), tf.float32))),
}


# ---------------------------------------------------------------- hold-out families (--set holdout)
# Architectures and operator patterns the first zoo lacks, for checking npuplan on networks it was
# not tuned on. Written to their own directory (e.g. /work/zoo2).
def _se(x, ratio=4):
    """Squeeze-excite: MEAN over the map, two 1x1 convs, a sigmoid gate multiplied back."""
    c = x.shape[-1]
    s = L.GlobalAveragePooling2D(keepdims=True)(x)
    s = L.Conv2D(max(c // ratio, 1), 1, activation="relu")(s)
    s = L.Conv2D(c, 1, activation="sigmoid")(s)
    return L.Multiply()([x, s])


def _swish(x):
    return L.Multiply()([x, L.Activation("sigmoid")(x)])


def _mbconv(x, out, expand=4, k=3, s=1, se=True, act="swish"):
    inp, c = x, x.shape[-1]
    activate = _swish if act == "swish" else (lambda t: L.ReLU(6.0)(t))
    if expand != 1:
        x = activate(L.BatchNormalization()(L.Conv2D(c * expand, 1, use_bias=False)(x)))
    x = activate(L.BatchNormalization()(L.DepthwiseConv2D(k, s, padding="same", use_bias=False)(x)))
    if se:
        x = _se(x)
    x = L.BatchNormalization()(L.Conv2D(out, 1, use_bias=False)(x))
    return L.Add()([inp, x]) if s == 1 and c == out else x


def efficientnet(size=64, width=16, se=True, act="swish"):
    inp = L.Input((size, size, 3))
    x = L.Conv2D(width, 3, strides=2, padding="same", activation="relu6")(inp)
    x = _mbconv(x, width, 1, 3, 1, se, act)
    x = _mbconv(x, width + 8, 4, 3, 2, se, act)
    x = _mbconv(x, width + 8, 4, 5, 1, se, act)
    x = _mbconv(x, width * 2 + 8, 4, 5, 2, se, act)
    x = L.GlobalAveragePooling2D()(x)
    return tf.keras.Model(inp, L.Dense(10)(x))


def _shuffle(x, groups=2):
    h, w, c = x.shape[1:]
    x = L.Reshape((h, w, groups, c // groups))(x)
    x = L.Permute((1, 2, 4, 3))(x)
    return L.Reshape((h, w, c))(x)


def shufflenet(size=48, width=24, units=2):
    inp = L.Input((size, size, 3))
    x = L.Conv2D(width, 3, strides=2, padding="same", activation="relu")(inp)
    x = L.MaxPooling2D(3, 2, padding="same")(x)
    for _ in range(units):
        a, b = L.Lambda(lambda t: tf.split(t, 2, axis=-1))(x)
        b = L.Conv2D(width // 2, 1, activation="relu")(b)
        b = L.DepthwiseConv2D(3, padding="same")(b)
        b = L.Conv2D(width // 2, 1, activation="relu")(b)
        x = _shuffle(L.Concatenate()([a, b]))
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(x)))


def inception_v3(size=35, width=16):
    """Factorised 1x7 / 7x1 and 1x3 / 3x1 branches."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(width, 3, strides=2, padding="valid", activation="relu")(inp)
    a = L.Conv2D(width, 1, activation="relu")(x)
    b = L.Conv2D(width, (1, 7), padding="same", activation="relu")(L.Conv2D(width // 2, 1, activation="relu")(x))
    b = L.Conv2D(width, (7, 1), padding="same", activation="relu")(b)
    c = L.Conv2D(width // 2, (3, 1), padding="same", activation="relu")(x)
    d = L.Conv2D(width // 2, (1, 3), padding="same", activation="relu")(x)
    e = L.Conv2D(width, 1, activation="relu")(L.AveragePooling2D(3, 1, padding="same")(x))
    x = L.Concatenate()([a, b, c, d, e])
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalMaxPooling2D()(x)))


def mobilenet_v1_pad(size=65, width=16, multiplier=1):
    """ZeroPadding2D then a valid stride-2 conv / depthwise, as Keras' MobileNet writes them."""
    inp = L.Input((size, size, 3))
    x = L.ZeroPadding2D(((0, 1), (0, 1)))(inp)
    x = L.Conv2D(width, 3, strides=2, padding="valid", activation="relu6")(x)
    for f in (width * 2, width * 4):
        x = L.DepthwiseConv2D(3, padding="same", depth_multiplier=multiplier, activation="relu6")(x)
        x = L.Conv2D(f, 1, activation="relu6")(x)
        x = L.ZeroPadding2D(((0, 1), (0, 1)))(x)
        x = L.DepthwiseConv2D(3, strides=2, padding="valid", activation="relu6")(x)
    return tf.keras.Model(inp, L.Dense(5)(L.GlobalAveragePooling2D()(x)))


def depthwise_net(size=32, channels=8, multiplier=2, k=3, s=1):
    inp = L.Input((size, size, 3))
    x = L.Conv2D(channels, 3, padding="same", activation="relu")(inp)
    x = L.DepthwiseConv2D(k, strides=s, padding="same", depth_multiplier=multiplier, activation="relu")(x)
    x = L.DepthwiseConv2D(k, strides=s, padding="same", depth_multiplier=1)(x)
    return tf.keras.Model(inp, L.Conv2D(6, 1)(x))


def resnet_v2(size=32, width=16, blocks=3):
    """Pre-activation residual blocks (BN, ReLU, conv), a projection on the stride-2 block."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(width, 3, padding="same")(inp)
    for i in range(blocks):
        stride = 2 if i == 1 else 1
        f = width * (2 if i >= 1 else 1)
        pre = L.ReLU()(L.BatchNormalization()(x))
        shortcut = L.Conv2D(f, 1, strides=stride)(pre) if stride != 1 or f != x.shape[-1] else x
        y = L.Conv2D(f, 3, strides=stride, padding="same")(pre)
        y = L.Conv2D(f, 3, padding="same")(L.ReLU()(L.BatchNormalization()(y)))
        x = L.Add()([shortcut, y])
    x = L.ReLU()(L.BatchNormalization()(x))
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(x)))


def hard_sigmoid_net(size=32, width=12):
    inp = L.Input((size, size, 3))
    x = L.Conv2D(width, 3, padding="same")(inp)
    g = L.Activation("hard_sigmoid")(L.Conv2D(width, 1)(x))
    x = L.Multiply()([x, g])
    x = L.Lambda(lambda t: tf.nn.relu6(t + 3.0) / 6.0)(L.Conv2D(width, 3, padding="same")(x))
    return tf.keras.Model(inp, L.Conv2D(4, 1)(x))


def tcn(length=512, channels=4, width=16, rates=(1, 2, 4, 8), causal=True):
    """A Conv1D stack with growing dilation (WaveNet/TCN style), residual adds."""
    inp = L.Input((length, channels))
    x = L.Conv1D(width, 1)(inp)
    for r in rates:
        y = L.Conv1D(width, 3, dilation_rate=r, padding="causal" if causal else "same", activation="relu")(x)
        x = L.Add()([x, y])
    return tf.keras.Model(inp, L.Dense(6)(L.GlobalMaxPooling1D()(x)))


def transpose_decoder(size=6, width=16, kernel=3, strides=3, padding="valid", steps=2):
    inp = L.Input((size, size, width))
    x = inp
    for i in range(steps):
        x = L.Conv2DTranspose(max(width // 2**i, 4), kernel, strides=strides, padding=padding, activation="relu")(x)
    return tf.keras.Model(inp, L.Conv2D(2, 1)(x))


def concat_axis(size=24, width=8, axis=2):
    inp = L.Input((size, size, 3))
    a = L.Conv2D(width, 3, padding="same", activation="relu")(inp)
    b = L.Conv2D(width, 1, activation="relu")(inp)
    x = L.Concatenate(axis=axis)([a, b, a])
    return tf.keras.Model(inp, L.Conv2D(width, 3, padding="same")(x))


def pooling_net(size=30, width=12):
    inp = L.Input((size, size, 3))
    x = L.Conv2D(width, 3, padding="same", activation="relu")(inp)
    a = L.MaxPooling2D(3, 2, padding="valid")(x)
    b = L.AveragePooling2D(3, 2, padding="valid")(x)
    x = L.Add()([a, b])
    x = L.MaxPooling2D((2, 3), (1, 2), padding="same")(x)
    g1 = L.GlobalMaxPooling2D()(x)
    g2 = L.GlobalAveragePooling2D()(x)
    return tf.keras.Model(inp, L.Dense(4)(L.Concatenate()([g1, g2])))


def mlp_tokens(tokens=10, features=20, hidden=(33, 17)):
    inp = L.Input((tokens, features))
    x = inp
    for h in hidden:
        x = L.Dense(h, activation="relu")(x)
    return tf.keras.Model(inp, L.Dense(5)(x))


def mlp_flat(features=100, hidden=(130, 64, 40)):
    inp = L.Input((features,))
    x = inp
    for h in hidden:
        x = L.Dense(h, activation="relu")(x)
    return tf.keras.Model(inp, L.Dense(7, activation="softmax")(x))


def attention(tokens=24, dim=48, heads=3):
    inp = L.Input((tokens, dim))
    y = L.LayerNormalization()(inp)
    y = L.MultiHeadAttention(heads, dim // heads)(y, y)
    x = L.Add()([inp, y])
    y = L.Dense(dim * 2, activation="relu")(x)
    return tf.keras.Model(inp, L.Add()([x, L.Dense(dim)(y)]))


def small_cnn(size=32, width=16, channels=3, act="relu"):
    inp = L.Input((size, size, channels))
    x = L.Conv2D(width, 3, strides=2, padding="same", activation=act)(inp)
    y = L.DepthwiseConv2D(3, padding="same", activation=act)(x)
    x = L.Add()([x, L.Conv2D(width, 1)(y)])
    x = L.MaxPooling2D(2)(x)
    x = L.Conv2D(width * 2, 3, padding="same", activation=act)(x)
    x = L.AveragePooling2D(2)(x)
    return tf.keras.Model(inp, L.Dense(10)(L.Flatten()(x)))


def odd_shapes(h=17, w=23, channels=5, widths=(7, 13, 21)):
    inp = L.Input((h, w, channels))
    x = inp
    for f in widths:
        x = L.Conv2D(f, 3, padding="same", activation="relu")(x)
    x = L.DepthwiseConv2D(3, strides=2, padding="same")(x)
    return tf.keras.Model(inp, L.Conv2D(3, 1)(x))


def strip_net(h=64, w=1, channels=4, width=12):
    """A map one pixel wide (or high): column / row kernels."""
    inp = L.Input((h, w, channels))
    k = (3, 1) if w == 1 else (1, 3)
    x = L.Conv2D(width, k, padding="same", activation="relu")(inp)
    x = L.Conv2D(width, k, strides=(2, 1) if w == 1 else (1, 2), padding="same", activation="relu")(x)
    x = L.MaxPooling2D((2, 1) if w == 1 else (1, 2))(x)
    return tf.keras.Model(inp, L.Conv2D(3, 1)(x))


def wide_net(h=8, w=320, channels=3, width=16):
    inp = L.Input((h, w, channels))
    x = L.Conv2D(width, 3, padding="same", activation="relu")(inp)
    x = L.Conv2D(width, 3, strides=2, padding="same", activation="relu")(x)
    x = L.DepthwiseConv2D(3, padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Conv2D(8, 1)(x))


def resnext(size=32, width=32, groups=4, blocks=2):
    """ResNeXt-style bottlenecks: 1x1, a grouped 3x3 (Conv2D groups), 1x1, residual add."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(width, 3, strides=2, padding="same", activation="relu")(inp)
    for _ in range(blocks):
        y = L.Conv2D(width, 1, activation="relu")(x)
        y = L.Conv2D(width, 3, padding="same", groups=groups, activation="relu")(y)
        y = L.Conv2D(width, 1)(y)
        x = L.ReLU()(L.Add()([x, y]))
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(x)))


def gru_net(steps=8, features=12, units=16):
    """A GRU unrolled into its gate ops (FULLY_CONNECTED, SPLIT, LOGISTIC, TANH, MUL, SUB, ADD)."""
    inp = L.Input((steps, features))
    return tf.keras.Model(inp, L.Dense(4)(L.GRU(units, unroll=True)(inp)))


def autoencoder(size=16, channels=4, latent=32):
    """Conv encoder, dense bottleneck, transpose-conv decoder (FC on a flattened map, RESHAPE back)."""
    inp = L.Input((size, size, channels))
    x = L.Conv2D(8, 3, strides=2, padding="same", activation="relu")(inp)
    x = L.Dense(latent, activation="relu")(L.Flatten()(x))
    x = L.Reshape((size // 2, size // 2, 8))(L.Dense((size // 2) ** 2 * 8)(x))
    return tf.keras.Model(inp, L.Conv2DTranspose(channels, 3, strides=2, padding="same")(x))


def two_inputs_outputs(size=8, channels=4):
    a, b = L.Input((size, size, channels)), L.Input((size, size, channels))
    x = L.Add()([L.Conv2D(channels, 1)(a), b])
    return tf.keras.Model([a, b], [L.Conv2D(2, 1)(x), L.GlobalAveragePooling2D()(x)])


def dw_dilated_s2(size=20, channels=8):
    """A dilated depthwise (SPACE_TO_BATCH_ND + depthwise + BATCH_TO_SPACE_ND) then a stride-2 one."""
    inp = L.Input((size, size, channels))
    x = L.DepthwiseConv2D(3, dilation_rate=2, padding="same")(inp)
    return tf.keras.Model(inp, L.DepthwiseConv2D(3, strides=2)(x))


def _broadcast_hw(x):
    """Multiply by a row profile (1, 1, W, C) and add a column (1, H, 1, 1)."""
    row = tf.reduce_mean(x, axis=1, keepdims=True)
    col = tf.reduce_max(x, axis=[2, 3], keepdims=True)
    return x * row + col


HOLDOUT = {
    "effnet_lite_se_64": ("efficientnet", lambda: efficientnet(64, 16, True, "swish")),
    "effnet_lite_relu6_48": ("efficientnet", lambda: efficientnet(48, 16, False, "relu6")),
    "effnet_se_relu6_96": ("efficientnet", lambda: efficientnet(96, 8, True, "relu6")),
    "shufflenet_48": ("shufflenet", lambda: shufflenet(48, 24, 2)),
    "shufflenet_64w32": ("shufflenet", lambda: shufflenet(64, 32, 3)),
    "inception_v3_35": ("inception_v3", lambda: inception_v3(35, 16)),
    "inception_v3_47w24": ("inception_v3", lambda: inception_v3(47, 24)),
    "mobilenet_v1_pad_65": ("mobilenet_pad", lambda: mobilenet_v1_pad(65, 16)),
    "mobilenet_v1_pad_97_m2": ("mobilenet_pad", lambda: mobilenet_v1_pad(97, 8, 2)),
    "dw_mult2_32": ("depthwise", lambda: depthwise_net(32, 8, 2)),
    "dw_5x5_s2_64": ("depthwise", lambda: depthwise_net(64, 16, 1, 5, 2)),
    "dw_mult3_5x5_24": ("depthwise", lambda: depthwise_net(24, 5, 3, 5, 1)),
    "resnet_v2_32": ("resnet_v2", lambda: resnet_v2(32, 16, 3)),
    "resnet_v2_48w8": ("resnet_v2", lambda: resnet_v2(48, 8, 3)),
    "hard_sigmoid_32": ("hard_sigmoid", lambda: hard_sigmoid_net(32, 12)),
    "tcn_causal_512": ("tcn", lambda: tcn(512, 4, 16, (1, 2, 4, 8), True)),
    "tcn_same_300": ("tcn", lambda: tcn(300, 1, 24, (1, 3, 9), False)),
    "convT_valid_s3_6": ("transpose_decoder", lambda: transpose_decoder(6, 16, 3, 3, "valid", 2)),
    "convT_valid_k4s2_8": ("transpose_decoder", lambda: transpose_decoder(8, 8, 4, 2, "valid", 2)),
    "convT_nonsquare": ("transpose_decoder", lambda: transpose_decoder(8, 12, (3, 2), (2, 1), "same", 2)),
    "concat_width_24": ("concat_axis", lambda: concat_axis(24, 8, 2)),
    "concat_height_20": ("concat_axis", lambda: concat_axis(20, 12, 1)),
    "pooling_30": ("pooling", lambda: pooling_net(30, 12)),
    "pooling_61": ("pooling", lambda: pooling_net(61, 20)),
    "mlp_tokens_10x20": ("mlp", lambda: mlp_tokens(10, 20, (33, 17))),
    "mlp_flat_100": ("mlp", lambda: mlp_flat(100, (130, 64, 40))),
    "attention_24x48": ("attention", lambda: attention(24, 48, 3)),
    "attention_8x20": ("attention", lambda: attention(8, 20, 1)),
    "cnn_uint8_32": ("uint8_io", lambda: small_cnn(32, 16)),
    "cnn_int16_32": ("int16", lambda: small_cnn(32, 16)),
    "effnet_int16_32": ("int16", lambda: efficientnet(32, 8, True, "swish")),
    "int16_ops_16": ("int16", lambda: single(lambda x: tf.nn.relu(tf.tanh(x) + tf.sigmoid(x) * x))),
    "int16_pool_concat": ("int16", lambda: pooling_net(20, 8)),
    "odd_17x23x5": ("odd_shapes", lambda: odd_shapes(17, 23, 5, (7, 13, 21))),
    "odd_9x31x1": ("odd_shapes", lambda: odd_shapes(9, 31, 1, (3, 19, 33))),
    "strip_w1_64": ("odd_shapes", lambda: strip_net(64, 1, 4, 12)),
    "strip_h1_96": ("odd_shapes", lambda: strip_net(1, 96, 2, 20)),
    "wide_8x320": ("odd_shapes", lambda: wide_net(8, 320, 3, 16)),
    "large_160x160": ("odd_shapes", lambda: small_cnn(160, 8, 1)),
    "op_mean_axis1": ("single", lambda: single(lambda x: tf.reduce_mean(x, axis=1), (12, 10, 24))),
    "op_mean_channels": ("single", lambda: single(lambda x: tf.reduce_mean(x, axis=-1, keepdims=True), (12, 10, 24))),
    "op_reduce_max_channels": ("single", lambda: single(lambda x: tf.reduce_max(x, axis=-1, keepdims=True), (20, 20, 6))),
    "op_broadcast_hw": ("single", lambda: single(_broadcast_hw, (10, 14, 6))),
    "op_add_bcast_row": ("single", lambda: single(lambda x: x + x[:, :1, :, :], (9, 11, 7))),
    "op_swish": ("single", lambda: single(lambda x: x * tf.sigmoid(x), (20, 12, 40))),
    "op_leaky_relu_odd": ("single", lambda: single(L.LeakyReLU(0.05), (15, 7, 3))),
    "op_prelu_channel": ("single", lambda: single(L.PReLU(), (12, 12, 20))),
    "op_resize_bilinear_x4": ("single", lambda: single(L.UpSampling2D(4, interpolation="bilinear"), (6, 10, 8))),
    "op_upsample_3x2": ("single", lambda: single(L.UpSampling2D((3, 2)), (8, 8, 8))),
    "op_strided_slice_neg": ("single", lambda: single(lambda x: x[:, 1::3, ::-1, :], (18, 12, 8))),
    "op_slice_channels": ("single", lambda: single(lambda x: x[:, :, :, 3:17], (12, 12, 24))),
    "op_split3_h": ("single", lambda: single(lambda x: L.Add()(tf.split(x, 3, axis=1)), (18, 8, 8))),
    "op_split_v_w": ("single", lambda: single(lambda x: tf.concat(tf.split(x, [5, 11], axis=2)[::-1], axis=2), (16, 16, 4))),
    "op_pack_axis3": ("single", lambda: single(lambda x: tf.reshape(tf.stack([x, x * 0.5], axis=3), (1, 8, 8, 16)), (8, 8, 8))),
    "op_transpose_hc": ("single", lambda: single(lambda x: tf.transpose(x, (0, 3, 2, 1)), (8, 12, 16))),
    "op_exp_tokens": ("single", lambda: single(tf.exp, (30, 40))),
    "op_squared_diff_bcast": ("single", lambda: single(lambda x: tf.math.squared_difference(x, tf.reduce_mean(x, axis=-1, keepdims=True)), (12, 12, 16))),
    "op_pad_channels": ("single", lambda: single(lambda x: tf.pad(x, [[0, 0], [0, 0], [0, 0], [2, 3]]), (8, 8, 8))),
    "op_mirror_pad_sym": ("single", lambda: single(lambda x: tf.pad(x, [[0, 0], [2, 2], [1, 1], [0, 0]], "SYMMETRIC"), (10, 10, 8))),
    "op_softmax_map": ("single", lambda: single(L.Softmax(), (6, 6, 10))),
    "op_concat_mixed_q": ("single", lambda: single(lambda x: tf.concat([x, tf.nn.relu(x) * 3.0, tf.tanh(x)], axis=-1), (10, 10, 6))),
    "op_relu_n1_to_1": ("single", lambda: single(lambda x: tf.clip_by_value(x, -1.0, 1.0), (16, 16, 8))),
    "op_maxpool_5x5_s3": ("single", lambda: single(L.MaxPooling2D(5, 3, padding="same"), (31, 31, 8))),
    "op_avgpool_valid_2x3": ("single", lambda: single(L.AveragePooling2D((2, 3), (2, 3), padding="valid"), (20, 21, 12))),
    "op_conv_7x7_s2": ("single", lambda: single(L.Conv2D(24, 7, strides=2, padding="same"), (40, 40, 3))),
    "op_conv_dilated_same_r4": ("single", lambda: single(L.Conv2D(8, 3, dilation_rate=4, padding="same"), (24, 24, 8))),
    "resnext_32": ("resnext", lambda: resnext(32, 32, 4, 2)),
    "resnext_48_g8": ("resnext", lambda: resnext(48, 32, 8, 1)),
    "gru_8x12": ("gru", lambda: gru_net(8, 12, 16)),
    "gru_int16_8x12": ("int16", lambda: gru_net(8, 12, 16)),
    "op_reduce_min": ("single", lambda: single(lambda x: tf.reduce_min(x, axis=[1, 2], keepdims=True), (8, 8, 8))),
    "autoencoder_16": ("autoencoder", lambda: autoencoder(16, 4, 32)),
    "two_in_out_8": ("multi_io", lambda: two_inputs_outputs(8, 4)),
    "op_sepconv1d": ("single", lambda: single(L.SeparableConv1D(12, 5, padding="same", activation="relu"), (64, 6))),
    "op_convT_outpad": ("single", lambda: single(L.Conv2DTranspose(8, 3, strides=2, padding="same", output_padding=1),
                                                 (7, 7, 8))),
    "dw_dilated_then_s2_20": ("depthwise", lambda: dw_dilated_s2(20, 8)),
    "op_layernorm_map": ("single", lambda: single(L.LayerNormalization(), (8, 8, 16))),
    "op_pool1d": ("single", lambda: single(lambda x: L.AveragePooling1D(3, padding="same")(L.MaxPooling1D(2)(x)), (50, 8))),
    "op_cropping2d": ("single", lambda: single(L.Cropping2D(((1, 2), (3, 0))), (20, 20, 8))),
    "op_elu_softplus": ("single", lambda: single(lambda x: tf.nn.softplus(tf.nn.elu(x)), (8, 8, 8))),
    "op_conv_valid_s2_odd": ("single", lambda: single(L.Conv2D(8, 3, strides=2, padding="valid"), (33, 17, 3))),
}
SETS = {"zoo": FAMILIES, "holdout": HOLDOUT, "unseen": None}  # unseen: bench/zoo/unseen.py, imported when asked for
INT16 = {name for name, (family, _) in HOLDOUT.items() if family == "int16"}


def representative(model, rng):
    shapes = [tuple(d or 1 for d in inp.shape) for inp in model.inputs]

    def data():
        for _ in range(8):
            yield [rng.standard_normal((1, *s[1:])).astype(np.float32) for s in shapes]

    return data


UINT8_IO = {"op_quantize_uint8", "cnn_uint8_32"}  # uint8 inputs and outputs: QUANTIZE ops convert them from and to int8


def convert(model, rng, io_type=tf.int8, per_tensor=False) -> bytes:
    """Full-integer quantization; ``io_type`` int16 means 16x8 (int16 activations, int8 weights);
    ``per_tensor`` quantizes conv weights with one scale per tensor rather than per channel."""
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter._experimental_disable_per_channel = per_tensor
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative(model, rng)
    converter.target_spec.supported_ops = [
        tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8 if io_type == tf.int16
        else tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = io_type
    converter.inference_output_type = io_type
    return converter.convert()


def zoo_arguments(description: str, default_out: Path) -> tuple[argparse.Namespace, Path, dict]:
    """A zoo generator's command line (``--out DIR``, ``--only NAME ...``), its output directory made,
    and the manifest path with what it already holds."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, default=default_out)
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    manifest_path = args.out / "manifest.json"
    return args, manifest_path, json.loads(manifest_path.read_text()) if manifest_path.exists() else {}


def op_types(data: bytes) -> dict[str, int]:
    interpreter = tf.lite.Interpreter(model_content=data)
    return dict(Counter(op["op_name"] for op in interpreter._get_ops_details()))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path("/work/zoo"))
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--set", choices=sorted(SETS), default="zoo",
                        help="zoo: the first 72 networks; holdout: the hold-out set; unseen: the third set "
                             "(write each set to its own --out)")
    args = parser.parse_args()
    per_tensor: set[str] = set()
    if args.set == "unseen":
        from unseen import PER_TENSOR, UNSEEN
        SETS["unseen"], per_tensor = UNSEEN, PER_TENSOR
    args.out.mkdir(parents=True, exist_ok=True)
    manifest_path = args.out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    for name, (family, build) in SETS[args.set].items():
        if args.only and name not in args.only:
            continue
        tf.keras.utils.set_random_seed(zlib.crc32(name.encode()))
        rng = np.random.default_rng(len(name))
        try:
            model = build()
            data = convert(model, rng, tf.uint8 if name in UINT8_IO else tf.int16 if name in INT16 else tf.int8,
                           per_tensor=name in per_tensor)
        except Exception as error:  # noqa: BLE001 - report and go on with the rest of the zoo
            print(f"{name}: FAILED {type(error).__name__}: {str(error).splitlines()[0][:200]}", file=sys.stderr)
            continue
        (args.out / f"{name}.tflite").write_bytes(data)
        manifest[name] = {"family": family, "input": [list(i.shape) for i in model.inputs], "ops": op_types(data)}
        print(name, len(data), manifest[name]["ops"], flush=True)
        manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
