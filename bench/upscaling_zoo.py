"""Generate small int8 TFLite networks with upscaling operators (Conv2DTranspose, UpSampling2D nearest and
bilinear, tf.image resize variants, decoders) for bench/upscaling_compare.py.

TensorFlow is a tool here, never a dependency of npuplan: run it with a TF environment, e.g.
  /work/tf-venv/bin/python bench/upscaling_zoo.py OUT_DIR [NAME ...]
Seeded (Keras seed 1, representative data seed 0), so the models are the same on every run.
"""
import os
import sys

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from keras import layers  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else "upscaling_zoo"
os.makedirs(OUT, exist_ok=True)
ONLY = set(sys.argv[2:])


def convert(name, fn_or_model, in_shape):
    if ONLY and name not in ONLY:
        return
    rng = np.random.default_rng(0)

    def rep():
        for _ in range(8):
            yield [rng.uniform(-1, 1, size=(1, *in_shape)).astype(np.float32)]

    if isinstance(fn_or_model, keras.Model):
        conv = tf.lite.TFLiteConverter.from_keras_model(fn_or_model)
    else:
        conv = tf.lite.TFLiteConverter.from_concrete_functions([fn_or_model.get_concrete_function()], fn_or_model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = rep
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.int8
    conv.inference_output_type = tf.int8
    data = conv.convert()
    with open(f"{OUT}/{name}.tflite", "wb") as f:
        f.write(data)
    print("wrote", name)


def seq(in_shape, *ls):
    inp = keras.Input(in_shape, batch_size=1)
    x = inp
    for l in ls:
        x = l(x)
    return keras.Model(inp, x)


def fn(in_shape, body):
    @tf.function(input_signature=[tf.TensorSpec((1, *in_shape), tf.float32)])
    def f(x):
        return body(x)
    return f


keras.utils.set_random_seed(1)
S = (16, 16, 8)
# transpose convolutions
convert("tconv_s2_k3_same", seq(S, layers.Conv2DTranspose(16, 3, strides=2, padding="same")), S)
convert("tconv_s2_k3_valid", seq(S, layers.Conv2DTranspose(16, 3, strides=2, padding="valid")), S)
convert("tconv_s2_k2_same", seq(S, layers.Conv2DTranspose(16, 2, strides=2, padding="same")), S)
convert("tconv_s2_k4_same_relu", seq(S, layers.Conv2DTranspose(16, 4, strides=2, padding="same", activation="relu")), S)
convert("tconv_s1_k3_same", seq(S, layers.Conv2DTranspose(16, 3, strides=1, padding="same")), S)
convert("tconv_s1_k3_valid", seq(S, layers.Conv2DTranspose(16, 3, strides=1, padding="valid")), S)
convert("tconv_s2_k3_same_nobias", seq(S, layers.Conv2DTranspose(16, 3, strides=2, padding="same", use_bias=False)), S)
convert("tconv_s3_k3_same", seq(S, layers.Conv2DTranspose(16, 3, strides=3, padding="same")), S)
convert("tconv_s2_k3_same_32c", seq((12, 20, 32), layers.Conv2DTranspose(32, 3, strides=2, padding="same")), (12, 20, 32))
# keras upsampling
convert("up_nearest2", seq(S, layers.UpSampling2D(2, interpolation="nearest")), S)
convert("up_nearest4", seq(S, layers.UpSampling2D(4, interpolation="nearest")), S)
convert("up_nearest_2x3", seq(S, layers.UpSampling2D((2, 3), interpolation="nearest")), S)
convert("up_bilinear2", seq(S, layers.UpSampling2D(2, interpolation="bilinear")), S)
convert("up_bilinear4", seq(S, layers.UpSampling2D(4, interpolation="bilinear")), S)
# tf.image / compat resize variants: name, kind, IFM (h, w, c), OFM size, flags
v1 = tf.compat.v1.image
RESIZES = [
    ("rnn2", "nn", S, (32, 32), {}), ("rnn2_hpc", "nn", S, (32, 32), {"half_pixel_centers": True}),
    ("rnn2_ac", "nn", S, (31, 31), {"align_corners": True}), ("rnn4", "nn", S, (64, 64), {}),
    ("rnn8", "nn", (8, 8, 8), (64, 64), {}), ("rnn4_ac", "nn", S, (61, 61), {"align_corners": True}),
    ("rnn3", "nn", S, (48, 48), {}), ("rnn_1x1", "nn", (1, 1, 8), (7, 7), {}),
    ("rnn_h1", "nn", (1, 16, 8), (1, 32), {}), ("rbl2", "bl", S, (32, 32), {}),
    ("rbl2_hpc", "bl", S, (32, 32), {"half_pixel_centers": True}),
    ("rbl2_ac", "bl", S, (31, 31), {"align_corners": True}), ("rbl4", "bl", S, (64, 64), {}),
    ("rbl8", "bl", (8, 8, 8), (64, 64), {}), ("rbl4_hpc", "bl", S, (64, 64), {"half_pixel_centers": True}),
    ("rbl_1x1", "bl", (1, 1, 8), (5, 5), {}), ("rbl_1x1_hpc", "bl", (1, 1, 8), (5, 5), {"half_pixel_centers": True}),
    ("rbl_w1", "bl", (16, 1, 8), (32, 1), {}), ("rbl2_c24", "bl", (10, 14, 24), (20, 28), {}),
]
for name, kind, shape, size, flags in RESIZES:
    op = v1.resize_nearest_neighbor if kind == "nn" else v1.resize_bilinear
    convert(name, fn(shape, lambda x, op=op, size=size, flags=flags: op(x, size, **flags)), shape)


def unet_decoder():
    inp = keras.Input((8, 8, 32), batch_size=1)
    skip1 = layers.Conv2D(16, 3, padding="same", activation="relu")(layers.UpSampling2D(2)(inp))
    x = layers.Conv2DTranspose(16, 2, strides=2, padding="same")(inp)
    x = layers.Concatenate()([x, skip1])
    x = layers.Conv2D(16, 3, padding="same", activation="relu")(x)
    x = layers.Conv2D(16, 3, padding="same", activation="relu")(x)
    x = layers.UpSampling2D(2, interpolation="bilinear")(x)
    x = layers.Conv2D(8, 3, padding="same", activation="relu")(x)
    x = layers.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.Conv2D(4, 3, padding="same")(x)
    return keras.Model(inp, x)


def decoder_chain():
    inp = keras.Input((12, 12, 16), batch_size=1)
    x = layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    x = layers.UpSampling2D(2)(x)
    x = layers.Conv2D(16, 3, padding="same", activation="relu")(x)
    x = layers.Conv2DTranspose(16, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.Conv2D(8, 3, padding="same", activation="relu")(x)
    x = layers.UpSampling2D(2, interpolation="bilinear")(x)
    x = layers.Conv2D(8, 3, padding="same", activation="relu")(x)
    return keras.Model(inp, x)


def tf_resize_chain():
    @tf.function(input_signature=[tf.TensorSpec((1, 12, 12, 16), tf.float32)])
    def f(x):
        x = tf.nn.relu(tf.nn.conv2d(x, tf.constant(np.random.default_rng(1).normal(size=(3, 3, 16, 16)).astype(np.float32) * 0.1), 1, "SAME"))
        x = v1.resize_nearest_neighbor(x, (24, 24))
        x = tf.nn.relu(tf.nn.conv2d(x, tf.constant(np.random.default_rng(2).normal(size=(3, 3, 16, 16)).astype(np.float32) * 0.1), 1, "SAME"))
        x = v1.resize_bilinear(x, (48, 48))
        x = tf.nn.relu(tf.nn.conv2d(x, tf.constant(np.random.default_rng(3).normal(size=(3, 3, 16, 8)).astype(np.float32) * 0.1), 1, "SAME"))
        return x
    return f


convert("unet_decoder", unet_decoder(), (8, 8, 32))
convert("decoder_chain", decoder_chain(), (12, 12, 16))
convert("resize_chain", tf_resize_chain(), (12, 12, 16))


def unet_big():
    inp = keras.Input((32, 32, 16), batch_size=1)
    x = layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    x = layers.UpSampling2D(2)(x)
    x = layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = layers.Conv2DTranspose(16, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)
    x = layers.Conv2D(8, 3, padding="same")(x)
    return keras.Model(inp, x)


convert("unet_big", unet_big(), (32, 32, 16))
