"""The sixth differential set: networks unlike /work/zoo, zoo2, zoo3, /tmp/zoo4 and /tmp/zoo5
(issues 25, 26: "checked on networks you have not seen").

What is new here: EfficientNet-lite and MobileNetV3-large stages at odd resolutions (57, 45, 29) with
hard-sigmoid squeeze-excite; ResNeXt with 8 and 16 groups and a strided grouped conv; a tiny ViT
with a class token and position embeddings (Keras MultiHeadAttention) and a MobileViT block built
with reshapes and transposes; YOLO heads over three scales with many concatenations, nearest and
bilinear resizes and a reshaped box output; U-Nets on non-square maps with transposed convolutions
and skip concatenations; wav2letter (kernel 11..32, 1-D, long sequences), a depthwise-separable 1-D
audio stack over 4000 steps, TCNs with dilations 1..8 and residual 1x1s; GRU keyword spotters with
``reset_after=False`` and a bidirectional CRNN; dense and conv autoencoders with bottlenecks;
channel shuffle with three groups; SE with PReLU; mixed strides and paddings (kernel 4 stride 2
same, kernel 3 stride 3 valid, even kernels); batch 4; NCHW graphs with pixel shuffle; maps far
larger than SRAM (192x256x16, int16 128x128x16: cascades) and weights far larger than SRAM (a
2048x1024 dense, a 3x3x256x512 conv: streaming); operators the NPU leaves on the CPU (LOG_SOFTMAX,
ARG_MIN, SELECT_V2, SPACE_TO_BATCH_ND, GATHER_ND, a non-integer bilinear resize); a 60-layer 4-deep
net. Most are int8; some int16x8, uint8 I/O, float I/O, per-tensor weights.

Runs with TensorFlow (a tool, never a dependency of npuplan), seeded by name; models under /tmp:
  /work/tfvenv/bin/python bench/zoo/zoo6_models.py [--out /tmp/zoo6] [--only NAME ...]
Writes DIR/<name>.tflite and DIR/manifest.json (family, I/O type, converter variant, operator types).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tensorflow as tf  # noqa: E402
from generate import L, zoo_arguments  # noqa: E402
from zoo5_models import FLOAT, I16, Spec, write_models  # noqa: E402

U8 = tf.uint8


# ---------------------------------------------------------------- blocks


def _hsig(x):
    return L.Lambda(lambda t: tf.nn.relu6(t + 3.0) / 6.0)(x)


def _hswish(x):
    return L.Multiply()([x, _hsig(x)])


def _se_hsig(x, ratio=4):
    """MobileNetV3 squeeze-excite: mean, 1x1 relu, 1x1, hard-sigmoid gate."""
    c = x.shape[-1]
    s = L.GlobalAveragePooling2D(keepdims=True)(x)
    s = L.Conv2D(max(c // ratio, 8), 1, activation="relu")(s)
    return L.Multiply()([x, _hsig(L.Conv2D(c, 1)(s))])


def _se_prelu(x, ratio=4):
    c = x.shape[-1]
    s = L.GlobalAveragePooling2D(keepdims=True)(x)
    s = L.PReLU(shared_axes=[1, 2])(L.Conv2D(max(c // ratio, 4), 1)(s))
    return L.Multiply()([x, L.Conv2D(c, 1, activation="sigmoid")(s)])


def _bneck(x, expand, out, k, s, se, act):
    inp, c = x, x.shape[-1]
    activate = _hswish if act == "hs" else (lambda t: L.ReLU()(t))
    y = activate(L.Conv2D(expand, 1)(x)) if expand != c else x
    y = activate(L.DepthwiseConv2D(k, s, padding="same")(y))
    if se:
        y = _se_hsig(y)
    y = L.Conv2D(out, 1)(y)
    return L.Add()([inp, y]) if s == 1 and c == out else y


# ---------------------------------------------------------------- mobile CNNs


def effnet_lite(size=57, width=16):
    """EfficientNet-lite: relu6 everywhere, no SE, 5x5 depthwise at stride 2, odd resolution."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(width * 2, 3, strides=2, padding="same", activation="relu6")(inp)
    for out, expand, k, s in ((width, 1, 3, 1), (width + 8, 6, 3, 2), (width + 8, 6, 3, 1), (width * 2 + 8, 6, 5, 2),
                              (width * 2 + 8, 6, 5, 1)):
        c = x.shape[-1]
        y = L.Conv2D(c * expand, 1, activation="relu6")(x) if expand != 1 else x
        y = L.DepthwiseConv2D(k, s, padding="same", activation="relu6")(y)
        y = L.Conv2D(out, 1)(y)
        x = L.Add()([x, y]) if s == 1 and c == out else y
    x = L.Conv2D(128, 1, activation="relu6")(x)
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(x)))


def mnv3_large(size=45):
    """MobileNetV3-large's first stages: relu then hard-swish bnecks, hard-sigmoid SE."""
    inp = L.Input((size, size, 3))
    x = _hswish(L.Conv2D(16, 3, strides=2, padding="same")(inp))
    for expand, out, k, s, se, act in ((16, 16, 3, 1, False, "re"), (64, 24, 3, 2, False, "re"),
                                       (72, 24, 3, 1, False, "re"), (72, 40, 5, 2, True, "re"),
                                       (120, 40, 5, 1, True, "re"), (240, 80, 3, 2, False, "hs"),
                                       (200, 80, 3, 1, False, "hs"), (480, 112, 3, 1, True, "hs")):
        x = _bneck(x, expand, out, k, s, se, act)
    x = _hswish(L.Conv2D(240, 1)(x))
    x = L.GlobalAveragePooling2D(keepdims=True)(x)
    x = _hswish(L.Conv2D(320, 1)(x))
    return tf.keras.Model(inp, L.Flatten()(L.Conv2D(12, 1)(x)))


def resnext(size=20, width=64, groups=8, blocks=2):
    """ResNeXt with many groups; the first grouped conv has stride 2 and a projected shortcut."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(width, 3, padding="same", activation="relu")(inp)
    for b in range(blocks):
        s = 2 if b == 0 else 1
        y = L.Conv2D(width, 1, activation="relu")(x)
        y = L.Conv2D(width, 3, strides=s, padding="same", groups=groups, activation="relu")(y)
        y = L.Conv2D(width * 2 if b == 0 else x.shape[-1], 1)(y)
        short = L.Conv2D(width * 2, 1, strides=2)(x) if b == 0 else x
        x = L.ReLU()(L.Add()([short, y]))
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(x)))


def shuffle_g3(size=30, c=24):
    """ShuffleNet-v1 style: grouped 1x1 (3 groups), channel shuffle of 3, depthwise, grouped 1x1, add."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(c, 3, strides=2, padding="same", activation="relu")(inp)
    for _ in range(2):
        y = L.Conv2D(c, 1, groups=3, activation="relu")(x)
        h, w = y.shape[1:3]
        y = L.Reshape((h, w, c))(L.Permute((1, 2, 4, 3))(L.Reshape((h, w, 3, c // 3))(y)))
        y = L.DepthwiseConv2D(3, padding="same")(y)
        x = L.ReLU()(L.Add()([x, L.Conv2D(c, 1, groups=3)(y)]))
    return tf.keras.Model(inp, L.Dense(6)(L.GlobalAveragePooling2D()(x)))


def se_prelu(size=36, c=20):
    inp = L.Input((size, size, 3))
    x = L.PReLU(shared_axes=[1, 2])(L.Conv2D(c, 3, strides=2, padding="same")(inp))
    x = _se_prelu(L.PReLU()(L.Conv2D(c, 3, padding="same")(x)))
    x = L.MaxPooling2D(3, 2, padding="same")(x)
    x = _se_prelu(L.PReLU(shared_axes=[1, 2])(L.DepthwiseConv2D(3, padding="same")(x)))
    return tf.keras.Model(inp, L.Dense(5)(L.GlobalMaxPooling2D()(x)))


def hard_sigmoid_gates(size=24, c=16):
    """Keras' own hard_sigmoid activation as a spatial gate and as a channel gate."""
    inp = L.Input((size, size, 4))
    x = L.Conv2D(c, 3, padding="same", activation="relu")(inp)
    g = L.Conv2D(1, 3, padding="same", activation="hard_sigmoid")(x)
    x = L.Multiply()([x, g])
    s = L.Conv2D(c, 1, activation="hard_sigmoid")(L.GlobalAveragePooling2D(keepdims=True)(x))
    return tf.keras.Model(inp, L.Conv2D(3, 1)(L.Multiply()([x, s])))


def mixed_strides(size=37):
    """Even kernels, kernel 4 stride 2 same, kernel 3 stride 3 valid, kernel 2 stride 2, 3x3 pool s2 valid."""
    inp = L.Input((size, size + 6, 3))
    x = L.Conv2D(12, 4, strides=2, padding="same", activation="relu")(inp)
    x = L.Conv2D(16, 3, strides=3, padding="valid", activation="relu")(x)
    y = L.Conv2D(16, (2, 4), padding="same")(x)
    x = L.Add()([x, y])
    x = L.Conv2D(20, (5, 1), strides=(1, 2), padding="valid", activation="relu")(x)
    x = L.MaxPooling2D(3, 2, padding="valid")(L.ZeroPadding2D(((1, 0), (0, 1)))(x))
    return tf.keras.Model(inp, L.Conv2D(7, 2, strides=2, padding="same")(x))


def deep_narrow(layers=60, size=12, c=4):
    inp = L.Input((size, size, c))
    x = inp
    for i in range(layers):
        y = L.Conv2D(c, 3 if i % 3 else 1, padding="same", activation="relu" if i % 2 else None)(x)
        x = L.Add()([x, y]) if i % 4 == 3 else y
    return tf.keras.Model(inp, x)


def batched_cnn(batch=4, size=16, c=6):
    inp = L.Input((size, size, c), batch_size=batch)
    x = L.Conv2D(12, 3, strides=2, padding="same", activation="relu")(inp)
    x = L.DepthwiseConv2D(3, padding="same", activation="relu")(x)
    x = L.Conv2D(16, 1)(x)
    return tf.keras.Model(inp, L.Dense(4)(L.GlobalAveragePooling2D()(x)))


def nchw_pixel_shuffle(c=8, size=14):
    """PyTorch export: NCHW, TRANSPOSE around convs, a depthwise, then PixelShuffle(2) as DEPTH_TO_SPACE."""
    inp = L.Input((c, size, size))
    x = L.Permute((2, 3, 1))(inp)
    x = L.Conv2D(16, 3, padding="same", activation="relu")(x)
    x = L.DepthwiseConv2D(3, padding="same", activation="relu")(x)
    x = L.Conv2D(12, 1)(x)
    x = L.Lambda(lambda t: tf.nn.depth_to_space(t, 2))(x)
    return tf.keras.Model(inp, L.Permute((3, 1, 2))(x))


# ---------------------------------------------------------------- transformers


def tiny_vit(size=32, patch=4, dim=32, layers=2, heads=2):
    """Patch embedding, a class token concatenated in front, position embeddings, pre-norm encoder."""
    inp = L.Input((size, size, 3))
    n = (size // patch) ** 2
    x = L.Reshape((n, dim))(L.Conv2D(dim, patch, strides=patch)(inp))
    cls = tf.constant(np.random.default_rng(1).normal(0, 0.5, (1, 1, dim)).astype(np.float32))
    pos = tf.constant(np.random.default_rng(2).normal(0, 0.2, (1, n + 1, dim)).astype(np.float32))
    x = L.Lambda(lambda t: tf.concat([tf.tile(cls, [tf.shape(t)[0], 1, 1]), t], axis=1) + pos)(x)
    for _ in range(layers):
        y = L.LayerNormalization(epsilon=1e-6)(x)
        x = L.Add()([x, L.MultiHeadAttention(heads, dim // heads)(y, y)])
        y = L.Dense(dim)(L.Dense(2 * dim, activation="gelu")(L.LayerNormalization(epsilon=1e-6)(x)))
        x = L.Add()([x, y])
    x = L.Lambda(lambda t: t[:, 0])(L.LayerNormalization(epsilon=1e-6)(x))
    return tf.keras.Model(inp, L.Dense(10)(x))


def mobilevit_unfold(size=24, c=16, dim=32, p=2):
    """MobileViT block with the unfold written as RESHAPE + TRANSPOSE (pixels of a patch as batch)."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(c, 3, strides=2, padding="same", activation="swish")(inp)
    h = size // 2
    y = L.Conv2D(dim, 1)(L.Conv2D(c, 3, padding="same", activation="swish")(x))
    np_ = (h // p) ** 2

    def unfold(t):
        t = tf.reshape(t, (-1, h // p, p, h // p, p, dim))
        return tf.reshape(tf.transpose(t, (0, 2, 4, 1, 3, 5)), (-1, p * p, np_, dim))

    def fold(t):
        t = tf.reshape(t, (-1, p, p, h // p, h // p, dim))
        return tf.reshape(tf.transpose(t, (0, 3, 1, 4, 2, 5)), (-1, h, h, dim))

    t = L.Lambda(unfold)(y)
    n = L.LayerNormalization()(t)
    q, k, v = L.Dense(dim)(n), L.Dense(dim)(n), L.Dense(dim)(n)
    a = L.Softmax()(L.Lambda(lambda qk: tf.matmul(qk[0], qk[1], transpose_b=True) * dim ** -0.5)([q, k]))
    t = L.Add()([t, L.Dense(dim)(L.Lambda(lambda av: tf.matmul(av[0], av[1]))([a, v]))])
    t = L.Add()([t, L.Dense(dim)(L.Dense(2 * dim, activation="swish")(L.LayerNormalization()(t)))])
    g = L.Conv2D(c, 1)(L.Lambda(fold)(t))
    x = L.Conv2D(c, 3, padding="same", activation="swish")(L.Concatenate()([x, g]))
    return tf.keras.Model(inp, L.Dense(8)(L.GlobalAveragePooling2D()(x)))


def batch_tokens_attention(batch=2, tokens=12, dim=24):
    """A fixed batch of 2 through a self-attention block (batched BATCH_MATMULs)."""
    inp = L.Input((tokens, dim), batch_size=batch)
    y = L.MultiHeadAttention(3, dim // 3)(inp, inp)
    x = L.LayerNormalization()(L.Add()([inp, y]))
    return tf.keras.Model(inp, L.Dense(4)(L.GlobalAveragePooling1D()(x)))


# ---------------------------------------------------------------- detection and segmentation


def yolo_heads(size=96, classes=3, anchors=2):
    """A small backbone, an FPN + PAN neck (nearest/bilinear resizes, concatenations), three
    heads reshaped to (boxes, 5 + classes) and concatenated."""
    inp = L.Input((size, size, 3))
    c1 = L.Conv2D(16, 3, strides=2, padding="same", activation="relu")(inp)
    c2 = L.Conv2D(24, 3, strides=2, padding="same", activation="relu")(c1)
    c3 = L.Conv2D(32, 3, strides=2, padding="same", activation="relu")(c2)
    c4 = L.Conv2D(48, 3, strides=2, padding="same", activation="relu")(c3)
    c5 = L.Conv2D(64, 3, strides=2, padding="same", activation="relu")(c4)
    p5 = L.Conv2D(32, 1, activation="relu")(c5)
    p4 = L.Conv2D(32, 3, padding="same", activation="relu")(L.Concatenate()([L.UpSampling2D()(p5), c4]))
    p3 = L.Conv2D(24, 3, padding="same", activation="relu")(
        L.Concatenate()([L.UpSampling2D(interpolation="bilinear")(p4), c3, L.MaxPooling2D()(c2)]))
    n4 = L.Conv2D(32, 3, padding="same", activation="relu")(
        L.Concatenate()([L.Conv2D(24, 3, strides=2, padding="same")(p3), p4]))
    n5 = L.Conv2D(48, 3, padding="same", activation="relu")(
        L.Concatenate()([L.Conv2D(32, 3, strides=2, padding="same")(n4), p5]))
    outs = []
    for f in (p3, n4, n5):
        y = L.Conv2D(anchors * (5 + classes), 1)(f)
        outs.append(L.Reshape((-1, 5 + classes))(y))
    return tf.keras.Model(inp, L.Activation("sigmoid")(L.Concatenate(axis=1)(outs)))


def unet_rect(h=56, w=40, c=8, depth=3):
    """A U-Net on a non-square map: strided convs down, transposed convs up, skip concatenations."""
    inp = L.Input((h, w, 2))
    x, skips = inp, []
    for d in range(depth):
        x = L.Conv2D(c << d, 3, padding="same", activation="relu")(x)
        skips.append(x)
        x = L.Conv2D(c << (d + 1), 3, strides=2, padding="same", activation="relu")(x)
    x = L.Conv2D(c << depth, 3, padding="same", activation="relu")(x)
    for d in reversed(range(depth)):
        x = L.Conv2DTranspose(c << d, 2 if d % 2 else 3, strides=2, padding="same", activation="relu")(x)
        x = L.Conv2D(c << d, 3, padding="same", activation="relu")(L.Concatenate()([skips[d], x]))
    return tf.keras.Model(inp, L.Conv2D(3, 1, activation="softmax")(x))


def concat_many(size=16, branches=12):
    """A head concatenating a dozen branches of different depths (YOLO-style routing)."""
    inp = L.Input((size, size, 8))
    outs = [L.Conv2D(3 + i, 1 if i % 2 else 3, padding="same", activation="relu")(inp) for i in range(branches)]
    x = L.Concatenate()(outs)
    return tf.keras.Model(inp, L.Conv2D(10, 1)(x))


# ---------------------------------------------------------------- audio and sequences


def wav2letter(frames=320, feats=39, width=64):
    """wav2letter: a kernel-11 stride-2 input layer, a kernel-7 stack, a kernel-32 layer, 1x1 layers."""
    inp = L.Input((frames, feats))
    x = L.Conv1D(width, 11, strides=2, padding="same", activation="relu")(inp)
    for _ in range(3):
        x = L.Conv1D(width, 7, padding="same", activation="relu")(x)
    x = L.Conv1D(width * 2, 32, padding="same", activation="relu")(x)
    x = L.Conv1D(width * 2, 1, activation="relu")(x)
    return tf.keras.Model(inp, L.Conv1D(29, 1)(x))


def dscnn_1d(length=4000, width=24):
    """A depthwise-separable 1-D audio stack on raw samples."""
    inp = L.Input((length, 1))
    x = L.Conv1D(width, 9, strides=4, padding="same", activation="relu")(inp)
    for s in (2, 2, 2, 1):
        x = L.SeparableConv1D(width, 9, strides=s, padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalMaxPooling1D()(x)))


def tcn_residual(length=800, c=3, width=16, rates=(1, 2, 4, 8)):
    """TCN: causal dilated conv pairs, a 1x1 projection on the first residual."""
    inp = L.Input((length, c))
    x = inp
    for r in rates:
        y = L.Conv1D(width, 3, dilation_rate=r, padding="causal", activation="relu")(x)
        y = L.Conv1D(width, 3, dilation_rate=r, padding="causal", activation="relu")(y)
        short = L.Conv1D(width, 1)(x) if x.shape[-1] != width else x
        x = L.ReLU()(L.Add()([short, y]))
    return tf.keras.Model(inp, L.Conv1D(2, 1)(x))


def kws_gru(steps=49, feats=10, units=32):
    """Keyword spotting: a conv front end over the spectrogram, then an unrolled GRU (reset_after=False)."""
    inp = L.Input((steps, feats, 1))
    x = L.Conv2D(16, (10, 4), strides=(2, 1), padding="same", activation="relu")(inp)
    x = L.Reshape((x.shape[1], x.shape[2] * 16))(x)
    x = L.GRU(units, unroll=True, reset_after=False)(x)
    return tf.keras.Model(inp, L.Dense(12, activation="softmax")(x))


def crnn_bigru(steps=20, feats=16, units=12):
    inp = L.Input((steps, feats, 1))
    x = L.Conv2D(8, 3, strides=(1, 2), padding="same", activation="relu")(inp)
    x = L.Reshape((steps, 8 * feats // 2))(x)
    x = L.Bidirectional(L.GRU(units, unroll=True, return_sequences=True))(x)
    return tf.keras.Model(inp, L.Dense(5)(x))


# ---------------------------------------------------------------- autoencoders


def dense_autoencoder(features=784, hidden=(256, 32)):
    inp = L.Input((features,))
    x = inp
    for h in hidden:
        x = L.Dense(h, activation="relu")(x)
    for h in reversed(hidden[:-1]):
        x = L.Dense(h, activation="relu")(x)
    return tf.keras.Model(inp, L.Dense(features, activation="sigmoid")(x))


def conv_autoencoder(size=28, latent=16):
    inp = L.Input((size, size, 1))
    x = L.Conv2D(16, 3, strides=2, padding="same", activation="relu")(inp)
    x = L.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x)
    s = x.shape[1]
    x = L.Dense(latent, activation="tanh")(L.Flatten()(x))
    x = L.Reshape((s, s, 32))(L.Dense(s * s * 32, activation="relu")(x))
    x = L.Conv2DTranspose(16, 3, strides=2, padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Conv2DTranspose(1, 3, strides=2, padding="same", activation="sigmoid")(x))


# ---------------------------------------------------------------- bigger than SRAM


def big_map(h=192, w=256, c=16):
    """A full-resolution stem whose maps are far larger than SRAM (cascades)."""
    inp = L.Input((h, w, 3))
    x = L.Conv2D(c, 3, padding="same", activation="relu")(inp)
    x = L.DepthwiseConv2D(3, padding="same", activation="relu")(x)
    x = L.Conv2D(c, 1, activation="relu")(x)
    x = L.Conv2D(2 * c, 3, strides=2, padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Conv2D(4, 3, strides=2, padding="same")(x))


def big_dense(features=1024, hidden=2048):
    """A 1024x2048 and a 2048x256 dense layer: 2.5 MB of weights (streaming)."""
    inp = L.Input((features,))
    x = L.Dense(hidden, activation="relu")(inp)
    return tf.keras.Model(inp, L.Dense(10)(L.Dense(256, activation="relu")(x)))


def big_conv(size=6, c=256, out=512):
    """A 3x3x256x512 conv on a small map: 1.2 MB of weights."""
    inp = L.Input((size, size, c))
    x = L.Conv2D(out, 3, padding="same", activation="relu")(inp)
    return tf.keras.Model(inp, L.Conv2D(64, 1)(x))


# ---------------------------------------------------------------- operators the NPU leaves to the CPU


def cpu_logsoftmax_argmin(size=10, c=8):
    inp = L.Input((size, size, c))
    x = L.Conv2D(6, 3, padding="same")(inp)
    ls = L.Lambda(lambda t: tf.nn.log_softmax(t, axis=-1))(x)
    idx = L.Lambda(lambda t: tf.argmin(t, axis=-1, output_type=tf.int32))(x)
    return tf.keras.Model(inp, [L.Conv2D(4, 1)(ls), idx])


def cpu_select(size=12, c=8):
    """SELECT_V2 with a GREATER mask between NPU convs."""
    inp = L.Input((size, size, c))
    a = L.Conv2D(c, 3, padding="same")(inp)
    b = L.Conv2D(c, 1)(inp)
    x = L.Lambda(lambda ab: tf.where(ab[0] > ab[1], ab[0], ab[1] * 0.5))([a, b])
    return tf.keras.Model(inp, L.Conv2D(3, 3, padding="same")(x))


def cpu_space_batch(size=16, c=8):
    """An explicit SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND pair around a conv."""
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 1, activation="relu")(inp)
    x = L.Lambda(lambda t: tf.space_to_batch(t, [2, 2], [[0, 0], [0, 0]]))(x)
    x = L.Conv2D(c, 3, padding="same", activation="relu")(x)
    x = L.Lambda(lambda t: tf.batch_to_space(t, [2, 2], [[0, 0], [0, 0]]))(x)
    return tf.keras.Model(inp, L.Conv2D(4, 1)(x))


def cpu_gather_nd(size=10, c=6):
    idx = tf.constant([[0, 1], [3, 4], [7, 2], [9, 9]], tf.int32)
    inp = L.Input((size, size, c))
    x = L.Conv2D(8, 3, padding="same", activation="relu")(inp)
    g = L.Lambda(lambda t: tf.gather_nd(t[0], idx)[tf.newaxis])(x)
    return tf.keras.Model(inp, L.Dense(3)(L.Flatten()(g)))


def resize_odd(size=17, c=8):
    """A bilinear resize by 40/17 (not an integer scale) between convs."""
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 3, padding="same", activation="relu")(inp)
    x = L.Resizing(40, 40, interpolation="bilinear")(x)
    return tf.keras.Model(inp, L.Conv2D(4, 3, strides=2, padding="same")(x))


# ---------------------------------------------------------------- the set

PER_TENSOR = {"_experimental_disable_per_channel": True}

MODELS: dict[str, Spec] = {
    "effnet_lite_57": Spec("efficientnet", effnet_lite),
    "effnet_lite_float_41": Spec("efficientnet", lambda: effnet_lite(41, 8), FLOAT),
    "mnv3_large_45": Spec("mobilenet_v3", mnv3_large),
    "effnet_lite_int16_33": Spec("efficientnet", lambda: effnet_lite(33, 8), I16),
    "mnv3_large_uint8_33": Spec("mobilenet_v3", lambda: mnv3_large(33), U8),
    "resnext_g8_20": Spec("resnext", resnext),
    "resnext_g16_per_tensor_14": Spec("resnext", lambda: resnext(14, 64, 16, 1), variant=PER_TENSOR),
    "shuffle_g3_30": Spec("shufflenet", shuffle_g3),
    "se_prelu_36": Spec("se", se_prelu),
    "hard_sigmoid_gates_int16_20": Spec("activations", lambda: hard_sigmoid_gates(20, 12), I16),
    "hard_sigmoid_gates_24": Spec("activations", hard_sigmoid_gates),
    "mixed_strides_37": Spec("strides", mixed_strides),
    "mixed_strides_uint8_45": Spec("strides", lambda: mixed_strides(45), U8),
    "deep_narrow_60": Spec("deep", deep_narrow),
    "batch4_cnn_16": Spec("batch", batched_cnn),
    "nchw_pixel_shuffle_14": Spec("pytorch", nchw_pixel_shuffle),
    "nchw_pixel_shuffle_float_10": Spec("pytorch", lambda: nchw_pixel_shuffle(4, 10), FLOAT),
    "tiny_vit_32": Spec("vit", tiny_vit),
    "tiny_vit_float_24": Spec("vit", lambda: tiny_vit(24, 6, 24, 1, 2), FLOAT),
    "mobilevit_unfold_24": Spec("vit", mobilevit_unfold),
    "batch2_attention_12": Spec("batch", batch_tokens_attention),
    "yolo_heads_96": Spec("detection", yolo_heads),
    "yolo_heads_uint8_64": Spec("detection", lambda: yolo_heads(64, 2, 3), U8),
    "yolo_heads_int16_64": Spec("detection", lambda: yolo_heads(64), I16),
    "unet_rect_56x40": Spec("segmentation", unet_rect),
    "unet_rect_float_24x32": Spec("segmentation", lambda: unet_rect(24, 32, 4, 2), FLOAT),
    "concat_many_16": Spec("concat", concat_many),
    "wav2letter_320": Spec("audio", wav2letter),
    "wav2letter_int16_96": Spec("audio", lambda: wav2letter(96, 20, 32), I16),
    "dscnn_1d_4000": Spec("audio", dscnn_1d),
    "tcn_residual_800": Spec("tcn", tcn_residual),
    "tcn_residual_int16_300": Spec("tcn", lambda: tcn_residual(300, 1, 12), I16),
    "kws_gru_49x10": Spec("recurrent", kws_gru),
    "crnn_bigru_20x16": Spec("recurrent", crnn_bigru),
    "dense_autoencoder_784": Spec("autoencoder", dense_autoencoder),
    "conv_autoencoder_float_28": Spec("autoencoder", conv_autoencoder, FLOAT),
    "big_map_192x256": Spec("cascade", big_map),
    "big_map_int16_128": Spec("cascade", lambda: big_map(128, 128, 16), I16),
    "big_dense_1024x2048": Spec("streaming", big_dense),
    "big_conv_256x512": Spec("streaming", big_conv),
    "cpu_logsoftmax_argmin_10": Spec("cpu_ops", cpu_logsoftmax_argmin),
    "cpu_select_12": Spec("cpu_ops", cpu_select),
    "cpu_space_batch_16": Spec("cpu_ops", cpu_space_batch),
    "cpu_gather_nd_10": Spec("cpu_ops", cpu_gather_nd),
    "resize_odd_17": Spec("cpu_ops", resize_odd),
}


def main() -> None:
    args, manifest_path, manifest = zoo_arguments(__doc__.splitlines()[0], Path("/tmp/zoo6"))
    write_models({name: MODELS[name] for name in args.only or MODELS}, args.out, manifest_path, manifest)


if __name__ == "__main__":
    main()
