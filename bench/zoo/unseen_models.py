"""The fourth differential set: networks unlike /work/zoo, /work/zoo2 and /work/zoo3, for judging
npuplan on files it was never tuned on (issues 22, 25, 26: "checked on networks you have not seen").

What is new here: PyTorch-style exports (NCHW inputs with TRANSPOSE around the convolutions, GELU,
LayerNorm, MEAN over channels), a ConvNeXt block (7x7 depthwise, LayerNorm, 4x pointwise expand),
a small U-Net with transposed convolutions and concatenations, a 1-D audio CNN over 16000 samples,
GRU and LSTM sequence models, SPLIT/GATHER/PACK heavy graphs, int16x8 variants, float-I/O int8
variants (QUANTIZE / DEQUANTIZE ends), a dynamic-batch input, odd shapes (1xN, prime sizes,
channel counts 1/3/5/17), and very wide / very deep small nets.

Runs with TensorFlow (a tool, never a dependency of npuplan), seeded by name; models under /tmp:
  /work/tfvenv/bin/python bench/zoo/unseen_models.py [--out /tmp/zoo4] [--only NAME ...]
Writes DIR/<name>.tflite and DIR/manifest.json (input shapes, I/O type, operator types).
"""

from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tensorflow as tf  # noqa: E402
from generate import L, convert, op_types, zoo_arguments  # noqa: E402

FLOAT = tf.float32  # float32 inputs and outputs around an int8 network (QUANTIZE / DEQUANTIZE ends)


def _gelu(x):
    return L.Activation(tf.nn.gelu)(x)


def _nchw_conv(x, filters, k=3, s=1):
    """A PyTorch-style conv on an NCHW tensor: transpose to NHWC, conv, transpose back."""
    x = L.Permute((2, 3, 1))(x)
    x = L.Conv2D(filters, k, strides=s, padding="same")(x)
    return L.Permute((3, 1, 2))(x)


def torch_cnn(c=3, size=32):
    inp = L.Input((c, size, size))
    x = _nchw_conv(inp, 16, 3, 2)
    x = L.ReLU()(x)
    x = _nchw_conv(x, 24)
    x = L.Lambda(lambda t: tf.reduce_mean(t, axis=[2, 3]))(x)
    return tf.keras.Model(inp, L.Dense(10)(x))


def torch_gelu_ln(tokens=16, dim=32):
    inp = L.Input((tokens, dim))
    x = L.LayerNormalization()(inp)
    x = _gelu(L.Dense(dim * 2)(x))
    x = L.Add()([inp, L.Dense(dim)(x)])
    x = L.LayerNormalization()(x)
    x = L.Lambda(lambda t: tf.reduce_mean(t, axis=1))(x)
    return tf.keras.Model(inp, L.Dense(5)(x))


def torch_mean_channels(size=20, c=12):
    inp = L.Input((c, size, size))
    x = _nchw_conv(inp, 8)
    m = L.Lambda(lambda t: tf.reduce_mean(t, axis=1, keepdims=True))(x)
    return tf.keras.Model(inp, L.Multiply()([x, L.Activation("sigmoid")(m)]))


def convnext(size=28, c=24, blocks=2):
    inp = L.Input((size, size, 3))
    x = L.Conv2D(c, 4, strides=4)(inp)
    x = L.LayerNormalization()(x)
    for _ in range(blocks):
        y = L.DepthwiseConv2D(7, padding="same")(x)
        y = L.LayerNormalization()(y)
        y = _gelu(L.Conv2D(4 * c, 1)(y))
        x = L.Add()([x, L.Conv2D(c, 1)(y)])
    x = L.GlobalAveragePooling2D()(x)
    return tf.keras.Model(inp, L.Dense(10)(L.LayerNormalization()(x)))


def mobilevit(size=32, c=16, dim=24):
    inp = L.Input((size, size, 3))
    x = L.Conv2D(c, 3, strides=2, padding="same", activation="swish")(inp)
    local = L.Conv2D(dim, 1)(L.Conv2D(c, 3, padding="same", activation="swish")(x))
    h = size // 2
    t = L.Reshape((h * h // 4, 4 * dim))(L.Lambda(lambda v: tf.nn.space_to_depth(v, 2))(local))
    t = L.LayerNormalization()(t)
    att = L.MultiHeadAttention(2, 16)(t, t)
    t = L.Add()([t, att])
    t = L.Add()([t, L.Dense(4 * dim)(_gelu(L.Dense(2 * dim)(L.LayerNormalization()(t))))])
    g = L.Lambda(lambda v: tf.nn.depth_to_space(v, 2))(L.Reshape((h // 2, h // 2, 4 * dim))(t))
    x = L.Conv2D(c, 3, padding="same")(L.Concatenate()([x, L.Conv2D(c, 1)(g)]))
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(x)))


def unet(size=32, c=8):
    inp = L.Input((size, size, 1))
    e1 = L.Conv2D(c, 3, padding="same", activation="relu")(inp)
    e2 = L.Conv2D(2 * c, 3, strides=2, padding="same", activation="relu")(e1)
    e3 = L.Conv2D(4 * c, 3, strides=2, padding="same", activation="relu")(e2)
    d2 = L.Conv2DTranspose(2 * c, 2, strides=2, padding="same")(e3)
    d2 = L.Conv2D(2 * c, 3, padding="same", activation="relu")(L.Concatenate()([d2, e2]))
    d1 = L.Conv2DTranspose(c, 3, strides=2, padding="same")(d2)
    d1 = L.Conv2D(c, 3, padding="same", activation="relu")(L.Concatenate()([d1, e1]))
    return tf.keras.Model(inp, L.Conv2D(2, 1, activation="sigmoid")(d1))


def audio1d(samples=16000):
    inp = L.Input((samples, 1))
    x = L.Conv1D(8, 80, strides=16, activation="relu")(inp)
    x = L.MaxPooling1D(4)(x)
    x = L.Conv1D(16, 3, padding="same", activation="relu")(x)
    x = L.MaxPooling1D(4)(x)
    x = L.Conv1D(32, 3, padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Dense(12)(L.GlobalAveragePooling1D()(x)))


def gru_seq(steps=10, features=8, units=12):
    inp = L.Input((steps, features))
    x = L.GRU(units, unroll=True, return_sequences=True)(inp)
    return tf.keras.Model(inp, L.Dense(3)(L.GRU(units, unroll=True)(x)))


def lstm_bidir(steps=6, features=5, units=8):
    inp = L.Input((steps, features))
    x = L.Bidirectional(L.LSTM(units, unroll=True))(inp)
    return tf.keras.Model(inp, L.Dense(4)(x))


def split_gather_pack(size=12, c=12):
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 1)(inp)
    parts = L.Lambda(lambda t: tf.split(t, 4, axis=-1))(x)
    parts = [L.Conv2D(3, 3, padding="same")(p) for p in parts]
    x = L.Lambda(lambda ps: tf.concat(ps[::-1], axis=-1))(parts)
    x = L.Lambda(lambda t: tf.gather(t, [5, 0, 7, 2, 11, 3], axis=-1))(x)
    s = L.Lambda(lambda t: tf.stack(tf.unstack(t, axis=1)[:4], axis=1))(x)
    return tf.keras.Model(inp, L.Conv2D(4, 1)(s))


def gather_rows(rows=20, dim=16):
    inp = L.Input((rows, dim))
    x = L.Dense(dim)(inp)
    x = L.Lambda(lambda t: tf.gather(t, [0, 3, 3, 19, 7], axis=1))(x)
    return tf.keras.Model(inp, L.Dense(4)(x))


def pack_unpack(size=8, c=6):
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 3, padding="same")(inp)
    rows = L.Lambda(lambda t: tf.unstack(t, axis=1))(x)
    x = L.Lambda(lambda rs: tf.stack([r * 0.5 + rs[0] for r in rs], axis=2))(rows)
    return tf.keras.Model(inp, L.Conv2D(4, 1)(x))


def resnet_small(size=24, c=16):
    inp = L.Input((size, size, 3))
    x = L.Conv2D(c, 3, padding="same", activation="relu")(inp)
    for _ in range(2):
        y = L.Conv2D(c, 3, padding="same", activation="relu")(x)
        x = L.ReLU()(L.Add()([x, L.Conv2D(c, 3, padding="same")(y)]))
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(x)))


def row_1xn(width=97, c=5):
    inp = L.Input((1, width, c))
    x = L.Conv2D(17, (1, 5), padding="same", activation="relu")(inp)
    x = L.DepthwiseConv2D((1, 3), strides=(1, 2), padding="valid")(x)
    return tf.keras.Model(inp, L.Conv2D(3, 1)(x))


def prime_shapes(h=31, w=37):
    inp = L.Input((h, w, 3))
    x = L.Conv2D(17, 3, strides=2, padding="same", activation="relu")(inp)
    x = L.Conv2D(5, 5, padding="valid")(x)
    x = L.MaxPooling2D(3, strides=2)(x)
    return tf.keras.Model(inp, L.Conv2D(1, 1)(x))


def channels_1(size=23):
    inp = L.Input((size, size, 1))
    x = L.Conv2D(1, 3, padding="same", activation="relu")(inp)
    x = L.DepthwiseConv2D(3, padding="same")(x)
    return tf.keras.Model(inp, L.Add()([inp, x]))


def wide(size=4, c=512):
    inp = L.Input((size, size, 16))
    x = L.Conv2D(c, 1, activation="relu")(inp)
    x = L.Conv2D(c, 3, padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Conv2D(16, 1)(x))


def deep(size=8, c=8, layers=40):
    inp = L.Input((size, size, c))
    x = inp
    for i in range(layers):
        x = L.Conv2D(c, 3 if i % 2 else 1, padding="same", activation="relu")(x)
    return tf.keras.Model(inp, x)


def dynamic_batch(size=16):
    inp = L.Input((size, size, 3), batch_size=None)
    x = L.Conv2D(8, 3, padding="same", activation="relu")(inp)
    return tf.keras.Model(inp, L.Dense(4)(L.Flatten()(L.MaxPooling2D(4)(x))))


def attention_softmax(tokens=12, dim=16):
    inp = L.Input((tokens, dim))
    att = L.MultiHeadAttention(4, 4)(inp, inp)
    return tf.keras.Model(inp, L.Softmax()(L.Dense(6)(L.Add()([inp, att]))))


def sepconv_1d_kws(frames=49, mfcc=13):
    inp = L.Input((frames, mfcc))
    x = L.Conv1D(32, 5, strides=2, activation="relu")(inp)
    for _ in range(3):
        x = L.SeparableConv1D(32, 3, padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Softmax()(L.Dense(12)(L.GlobalMaxPooling1D()(x))))


def mixed_acts(size=16, c=8):
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 1)(inp)
    a = L.Activation("tanh")(x)
    b = L.Activation("sigmoid")(x)
    d = L.Activation("elu")(x)
    e = L.LeakyReLU(0.3)(x)
    return tf.keras.Model(inp, L.Concatenate()([L.Multiply()([a, b]), L.Maximum()([d, e])]))


def strided_slices(size=20, c=10):
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 3, padding="same")(inp)
    x = L.Lambda(lambda t: t[:, 1:-1:2, ::3, 2:7])(x)
    return tf.keras.Model(inp, L.Conv2D(3, 1)(x))


def dense_only(features=257, hidden=300):
    inp = L.Input((features,))
    x = L.Dense(hidden, activation="relu")(inp)
    x = L.Dense(hidden // 3, activation="relu")(x)
    return tf.keras.Model(inp, L.Dense(7)(x))


# name -> (family, builder, I/O: int8 / int16 (16x8) / float)
MODELS = {
    "torch_cnn_nchw_32": ("pytorch", lambda: torch_cnn(3, 32), tf.int8),
    "torch_cnn_nchw_float_29": ("pytorch", lambda: torch_cnn(3, 29), FLOAT),
    "torch_gelu_ln_16x32": ("pytorch", torch_gelu_ln, tf.int8),
    "torch_gelu_ln_float_9x24": ("pytorch", lambda: torch_gelu_ln(9, 24), FLOAT),
    "torch_mean_channels_20": ("pytorch", torch_mean_channels, tf.int8),
    "convnext_28": ("convnext", convnext, tf.int8),
    "prime_int16_31x37": ("int16", prime_shapes, tf.int16),
    "mobilevit_32": ("mobilevit", mobilevit, tf.int8),
    "unet_small_32": ("unet", unet, tf.int8),
    "unet_small_int16_24": ("unet", lambda: unet(24, 4), tf.int16),
    "audio1d_16000": ("audio", audio1d, tf.int8),
    "audio1d_float_8000": ("audio", lambda: audio1d(8000), FLOAT),
    "gru_seq_10x8": ("recurrent", gru_seq, tf.int8),
    "lstm_bidir_6x5": ("recurrent", lstm_bidir, tf.int8),
    "split_gather_pack_12": ("shape_ops", split_gather_pack, tf.int8),
    "gather_rows_20": ("shape_ops", gather_rows, tf.int8),
    "pack_unpack_8": ("shape_ops", pack_unpack, tf.int8),
    "resnet_int16_24": ("int16", resnet_small, tf.int16),
    "resnet_float_24": ("float_io", resnet_small, FLOAT),
    "row_1x97_c5": ("odd_shape", row_1xn, tf.int8),
    "prime_31x37": ("odd_shape", prime_shapes, tf.int8),
    "channels1_23": ("odd_shape", channels_1, tf.int8),
    "wide_4x512": ("wide_deep", wide, tf.int8),
    "deep_40x8": ("wide_deep", deep, tf.int8),
    "dynamic_batch_16": ("dynamic", dynamic_batch, tf.int8),
    "attention_softmax_12": ("attention", attention_softmax, tf.int8),
    "attention_int16_8": ("attention", lambda: attention_softmax(8, 8), tf.int16),
    "sepconv1d_kws_49x13": ("audio", sepconv_1d_kws, tf.int8),
    "mixed_acts_16": ("activations", mixed_acts, tf.int8),
    "audio1d_int16_4000": ("int16", lambda: audio1d(4000), tf.int16),
    "strided_slices_20": ("shape_ops", strided_slices, tf.int8),
    "dense_257x300": ("dense", dense_only, tf.int8),
    "dense_float_100x60": ("dense", lambda: dense_only(100, 60), FLOAT),
}


def main() -> None:
    args, manifest_path, manifest = zoo_arguments(__doc__.splitlines()[0], Path("/tmp/zoo4"))
    for name, (family, build, io) in MODELS.items():
        if args.only and name not in args.only:
            continue
        tf.keras.utils.set_random_seed(zlib.crc32(name.encode()))
        try:
            model = build()
            data = convert(model, np.random.default_rng(len(name)), io)
        except Exception as error:  # noqa: BLE001 - report and go on with the rest of the set
            print(f"{name}: FAILED {type(error).__name__}: {str(error).splitlines()[0][:200]}", file=sys.stderr)
            continue
        (args.out / f"{name}.tflite").write_bytes(data)
        manifest[name] = {"family": family, "io": str(getattr(io, "name", io)),
                          "input": [list(i.shape) for i in model.inputs], "ops": op_types(data)}
        print(name, len(data), manifest[name]["ops"], flush=True)
        manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
