"""The eighth differential set: real architectures at realistic sizes and shapes that stress the
planner, unlike /work/zoo, zoo2, zoo3 and /tmp/zoo4..zoo7 (issues 25, 26: "checked on networks you
have not seen"), meant to be run in hardware configs and budgets no other bench uses.

What is new here: EfficientNet-B0 blocks with swish squeeze-excitation at 96x96; a MobileViT-XXS
style stage (unfold to patches, two transformer layers, fold back, fuse by concatenation) and an
EdgeNeXt-style stage (7x7 depthwise encoder, cross-covariance attention over channels); a YOLO
neck with three scales (FPN upsampling and PAN downsampling, concatenations of two scales each,
three heads); a four-level U-Net with skip concatenations and transposed convs; a WaveNet stack
(gated tanh x sigmoid, dilations 1..32, residual and skip sums) and an M5 raw-audio net on
16000x1 samples; a tiny BERT (2 layers, 32 tokens, int8 and int16x8) and an ALBERT whose two
layers share one set of weights; DS-CNN-L and a MicroNet-style KWS on 49x10 MFCCs; the MLPerf
Tiny anomaly autoencoder (640 -> 128 x4 -> 8) and ResNet-8 (CIFAR 32x32); the person-detection
MobileNet-v1 0.25 at 96x96 grayscale; an RNN-T style stack (unrolled LSTM encoder, prediction
net, joint). Shapes: 2048-channel 1x1 convs on 7x7, a 1280 -> 1001 classifier head, a 4096 ->
1024 dense (4 MiB of weights), prime maps (53x47), batch 4, 7x7 and 9x9 kernels (ConvMixer),
stride 3, asymmetric padding, Inception and NASNet cells with many small branches, a conformer
convolution module (GLU, 1-D depthwise 31), a Ghost module, an ASPP head with image pooling.

Runs with TensorFlow (a tool, never a dependency of npuplan), seeded by name; models under /tmp:
  /work/tfvenv/bin/python bench/zoo/zoo8_models.py [--out /tmp/zoo8] [--only NAME ...]
Writes DIR/<name>.tflite and DIR/manifest.json (family, I/O type, converter variant, operator types).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tensorflow as tf  # noqa: E402
from generate import L  # noqa: E402
from zoo5_models import FLOAT, I16, Spec, zoo_main  # noqa: E402

U8 = tf.uint8


def _lambda(fn):
    return L.Lambda(fn)


def _cbr(x, filters, k=3, s=1, act="relu"):
    x = L.Conv2D(filters, k, strides=s, padding="same", use_bias=False)(x)
    x = L.BatchNormalization()(x)
    return L.Activation(act)(x) if act else x


def _dw(x, k=3, s=1, act="relu"):
    x = L.DepthwiseConv2D(k, strides=s, padding="same", use_bias=False)(x)
    x = L.BatchNormalization()(x)
    return L.Activation(act)(x) if act else x


# ---------------------------------------------------------------- real architectures


def _mbconv_se(x, expand, out, k, s):
    """EfficientNet-B0's MBConv: expand 1x1, depthwise kxk, swish SE (squeeze to in/4), project."""
    c_in = x.shape[-1]
    y = _cbr(x, c_in * expand, 1, act="swish") if expand > 1 else x
    y = _dw(y, k, s, act="swish")
    se = L.GlobalAveragePooling2D(keepdims=True)(y)
    se = L.Conv2D(max(1, c_in // 4), 1, activation="swish")(se)
    se = L.Conv2D(y.shape[-1], 1, activation="sigmoid")(se)
    y = _cbr(L.Multiply()([y, se]), out, 1, act=None)
    return L.Add()([x, y]) if s == 1 and c_in == out else y


def effnet_b0(size=96, width=1.0):
    inp = L.Input((size, size, 3))
    x = _cbr(inp, int(32 * width), 3, 2, "swish")
    for expand, out, k, s, n in ((1, 16, 3, 1, 1), (6, 24, 3, 2, 2), (6, 40, 5, 2, 2), (6, 80, 3, 2, 2),
                                 (6, 112, 5, 1, 1), (6, 192, 5, 2, 1)):
        for i in range(n):
            x = _mbconv_se(x, expand, int(out * width), k, s if i == 0 else 1)
    x = _cbr(x, 320, 1, act="swish")
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(x)))


def _transformer(x, dim, heads, mlp):
    h = L.LayerNormalization(epsilon=1e-5)(x)
    h = L.MultiHeadAttention(heads, dim // heads)(h, h)
    x = L.Add()([x, h])
    h = L.LayerNormalization(epsilon=1e-5)(x)
    h = L.Dense(dim)(L.Dense(mlp, activation="swish")(h))
    return L.Add()([x, h])


def mobilevit_xxs(size=64, c=48, dim=64, patch=2, layers=2):
    """A MobileViT block after an MV2 stem: local 3x3 + 1x1, unfold into patches, transformers,
    fold back, 1x1, concatenate with the input, 3x3 fuse."""
    inp = L.Input((size, size, 3), batch_size=1)  # static: the unfold moves patches into the batch
    x = _cbr(inp, 16, 3, 2, "swish")
    x = _cbr(_dw(_cbr(x, 32, 1, act="swish"), 3, 2, "swish"), c, 1, act=None)
    h = w = size // 4
    y = _cbr(_cbr(x, c, 3, act="swish"), dim, 1, act=None)
    n = (h // patch) * (w // patch)
    t = _lambda(lambda t: tf.reshape(tf.transpose(tf.reshape(t, (1, h // patch, patch, w // patch, patch, dim)),
                                                  (0, 2, 4, 1, 3, 5)), (patch * patch, n, dim)))(y)
    for _ in range(layers):
        t = _transformer(t, dim, 2, 2 * dim)
    y = _lambda(lambda t: tf.reshape(tf.transpose(tf.reshape(t, (1, patch, patch, h // patch, w // patch, dim)),
                                                  (0, 3, 1, 4, 2, 5)), (1, h, w, dim)))(t)
    y = _cbr(y, c, 1, act="swish")
    y = _cbr(L.Concatenate()([x, y]), c, 3, act="swish")
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(y)))


def edgenext(size=64, c=48, heads=4):
    """EdgeNeXt-style: a 4x4 stride-4 stem, two conv encoders (7x7 depthwise, LayerNorm, 4x MLP with
    GELU, residual), then split-depthwise features and cross-covariance attention over channels."""
    inp = L.Input((size, size, 3))
    x = L.LayerNormalization(epsilon=1e-6)(L.Conv2D(c, 4, strides=4)(inp))
    for _ in range(2):
        y = L.LayerNormalization(epsilon=1e-6)(L.DepthwiseConv2D(7, padding="same")(x))
        y = L.Dense(c)(L.Dense(4 * c, activation="gelu")(y))
        x = L.Add()([x, y])
    s = size // 4
    d = c // heads
    t = L.Reshape((s * s, c))(x)
    qkv = L.Dense(3 * c)(L.LayerNormalization(epsilon=1e-6)(t))

    def xca(u):
        q, k, v = (tf.transpose(tf.reshape(p, (-1, s * s, heads, d)), (0, 2, 3, 1)) for p in tf.split(u, 3, -1))
        q, k = tf.math.l2_normalize(q, -1), tf.math.l2_normalize(k, -1)
        a = tf.nn.softmax(tf.matmul(q, k, transpose_b=True) * 2.0)
        return tf.reshape(tf.transpose(tf.matmul(a, v), (0, 3, 1, 2)), (-1, s * s, c))

    t = L.Add()([t, L.Dense(c)(_lambda(xca)(qkv))])
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling1D()(t)))


def yolo_pan(size=128, width=16, classes=3):
    """A YOLO-style backbone with three outputs (strides 8, 16, 32), an FPN (upsample x2, concat)
    and a PAN (3x3 stride 2, concat), three 1x1 heads."""
    inp = L.Input((size, size, 3))
    x = _cbr(inp, width, 3, 2, "swish")
    x = _cbr(x, 2 * width, 3, 2, "swish")
    c3 = _cbr(_cbr(x, 4 * width, 3, 2, "swish"), 4 * width, 3, act="swish")
    c4 = _cbr(_cbr(c3, 8 * width, 3, 2, "swish"), 8 * width, 3, act="swish")
    c5 = _cbr(_cbr(c4, 16 * width, 3, 2, "swish"), 16 * width, 1, act="swish")
    p5 = _cbr(c5, 8 * width, 1, act="swish")
    p4 = _cbr(L.Concatenate()([L.UpSampling2D()(p5), c4]), 8 * width, 3, act="swish")
    p4r = _cbr(p4, 4 * width, 1, act="swish")
    p3 = _cbr(L.Concatenate()([L.UpSampling2D()(p4r), c3]), 4 * width, 3, act="swish")
    n4 = _cbr(L.Concatenate()([_cbr(p3, 4 * width, 3, 2, "swish"), p4r]), 8 * width, 3, act="swish")
    n5 = _cbr(L.Concatenate()([_cbr(n4, 8 * width, 3, 2, "swish"), p5]), 16 * width, 3, act="swish")
    heads = [L.Conv2D(3 * (5 + classes), 1)(t) for t in (p3, n4, n5)]
    return tf.keras.Model(inp, heads)


def unet4(size=64, c=8):
    """A four-level U-Net: two 3x3 per level, max pool, transposed-conv upsampling, skip concats."""
    inp = L.Input((size, size, 1))
    x, skips = inp, []
    for level in range(3):
        x = _cbr(_cbr(x, c << level), c << level)
        skips.append(x)
        x = L.MaxPooling2D()(x)
    x = _cbr(_cbr(x, c << 3), c << 3)
    for level in reversed(range(3)):
        x = L.Conv2DTranspose(c << level, 2, strides=2)(x)
        x = _cbr(_cbr(L.Concatenate()([skips[level], x]), c << level), c << level)
    return tf.keras.Model(inp, L.Conv2D(2, 1, activation="softmax")(x))


def wavenet(length=2000, channels=24, rates=(1, 2, 4, 8, 16, 32)):
    """WaveNet: causal dilated 1-D convs, gated tanh x sigmoid, residual and skip 1x1s, skip sum; a
    static batch (with a dynamic one the dilations' SPACE_TO_BATCH_ND/BATCH_TO_SPACE_ND keep
    placeholder shapes that neither tool's file runs)."""
    inp = L.Input((length, 1), batch_size=1)
    x = L.Conv1D(channels, 2, padding="causal")(inp)
    skips = []
    for rate in rates:
        f = L.Conv1D(channels, 2, dilation_rate=rate, padding="causal", activation="tanh")(x)
        g = L.Conv1D(channels, 2, dilation_rate=rate, padding="causal", activation="sigmoid")(x)
        z = L.Multiply()([f, g])
        skips.append(L.Conv1D(channels, 1)(z))
        x = L.Add()([x, L.Conv1D(channels, 1)(z)])
    s = L.ReLU()(L.Add()(skips))
    s = L.Conv1D(channels, 1, activation="relu")(s)
    return tf.keras.Model(inp, L.Conv1D(16, 1)(s))


def m5_audio(samples=16000, c=32):
    """M5 on raw audio 16000x1: an 80-tap stride-4 conv, then 3-tap convs and max pools by 4."""
    inp = L.Input((samples, 1))
    x = L.MaxPooling1D(4)(_bn_relu(L.Conv1D(c, 80, strides=4, padding="same")(inp)))
    for mult in (1, 2, 4):
        x = L.MaxPooling1D(4)(_bn_relu(L.Conv1D(c * mult, 3, padding="same")(x)))
    return tf.keras.Model(inp, L.Dense(12)(L.GlobalAveragePooling1D()(x)))


def _bn_relu(x):
    return L.ReLU()(L.BatchNormalization()(x))


def tiny_bert(tokens=32, dim=64, layers=2, heads=2, shared=False, norm=True):
    """A BERT-tiny encoder on embedded tokens (the embedding lookup stays on the host): post-norm
    layers with GELU; ``shared`` (ALBERT) calls the same layer objects twice (one set of weights);
    without LayerNorm for 16x8 (its quantizer has no NEG)."""
    inp = L.Input((tokens, dim))

    def ln():
        return L.LayerNormalization(epsilon=1e-12) if norm else L.Activation("linear")

    def make_layer():
        return (L.MultiHeadAttention(heads, dim // heads), ln(), L.Dense(4 * dim, activation="gelu"), L.Dense(dim),
                ln())

    x = ln()(inp)
    the_layer = make_layer()
    for _ in range(layers):
        att, ln1, up, down, ln2 = the_layer if shared else make_layer()
        x = ln1(L.Add()([x, att(x, x)]))
        x = ln2(L.Add()([x, down(up(x))]))
    pooled = L.Dense(dim, activation="tanh")(_lambda(lambda t: t[:, 0])(x))
    return tf.keras.Model(inp, L.Dense(2)(pooled))


def dscnn_l(frames=49, mfcc=10, c=276):
    """DS-CNN-L (ARM's KWS): a 10x4 stride-2 conv, five depthwise-separable blocks, average pool."""
    inp = L.Input((frames, mfcc, 1))
    x = _cbr(inp, c, (10, 4), 2)
    for _ in range(5):
        x = _cbr(_dw(x), c, 1)
    return tf.keras.Model(inp, L.Dense(12)(L.GlobalAveragePooling2D()(x)))


def micronet_kws(frames=49, mfcc=10):
    """MicroNet-KWS-M style: a 10x4 stem, inverted bottlenecks of uneven widths, a 1x1 head."""
    inp = L.Input((frames, mfcc, 1))
    x = _cbr(inp, 140, (10, 4), (2, 1))
    for expand, out in ((140, 60), (120, 60), (124, 76), (148, 76), (188, 112), (220, 112)):
        y = _cbr(_dw(_cbr(x, expand, 1)), out, 1, act=None)
        x = L.Add()([x, y]) if x.shape[-1] == out else y
    x = _cbr(x, 196, 1)
    return tf.keras.Model(inp, L.Dense(12)(L.GlobalAveragePooling2D()(x)))


def anomaly_ae(features=640, hidden=128, latent=8):
    """The MLPerf Tiny anomaly-detection autoencoder: 640 -> 128 x4 -> 8 -> 128 x4 -> 640."""
    inp = L.Input((features,))
    x = inp
    for width in (hidden,) * 4 + (latent,) + (hidden,) * 4:
        x = L.ReLU()(L.BatchNormalization()(L.Dense(width)(x)))
    return tf.keras.Model(inp, L.Dense(features)(x))


def resnet8(size=32):
    """The MLPerf Tiny image classifier: ResNet-8 on CIFAR (16, 32, 64 channels)."""
    inp = L.Input((size, size, 3))
    x = _cbr(inp, 16)
    for c, s in ((16, 1), (32, 2), (64, 2)):
        y = _cbr(_cbr(x, c, 3, s), c, 3, act=None)
        short = x if s == 1 else L.Conv2D(c, 1, strides=s)(x)
        x = L.ReLU()(L.Add()([short, y]))
    return tf.keras.Model(inp, L.Dense(10, activation="softmax")(L.Flatten()(L.AveragePooling2D(8)(x))))


def person_detect(size=96, alpha=0.25):
    """MobileNet-v1 0.25 on a 96x96 grayscale frame (TFLite Micro's person detection)."""
    inp = L.Input((size, size, 1))
    x = _cbr(inp, int(32 * alpha), 3, 2, "relu6")
    for out, s in ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1),
                   (512, 1), (512, 1), (1024, 2), (1024, 1)):
        x = _cbr(_dw(x, 3, s, "relu6"), int(out * alpha), 1, act="relu6")
    x = L.AveragePooling2D(3)(x)
    return tf.keras.Model(inp, L.Softmax()(L.Reshape((2,))(L.Conv2D(2, 1)(x))))


def rnnt(steps=6, feats=20, units=48, vocab=16):
    """An RNN-T style stack: a two-layer unrolled LSTM encoder, a one-layer prediction net on the
    previous labels' embeddings, and the joint (sum of projections, tanh, vocabulary)."""
    audio, labels = L.Input((steps, feats)), L.Input((steps, feats))  # one shape: the converter reorders inputs
    enc = L.LSTM(units, unroll=True, return_sequences=True)(audio)
    enc = L.LSTM(units, unroll=True, return_sequences=True)(enc)
    pred = L.LSTM(units // 2, unroll=True, return_sequences=True)(labels)
    joint = L.Activation("tanh")(L.Add()([L.Dense(units)(enc), L.Dense(units)(pred)]))
    return tf.keras.Model([audio, labels], L.Dense(vocab)(joint))


def conformer_conv(frames=64, dim=64):
    """A conformer's convolution module: pointwise to 2*dim, GLU, 1-D depthwise 31, BN, swish,
    pointwise, residual."""
    inp = L.Input((frames, dim))
    y = L.Dense(2 * dim)(L.LayerNormalization()(inp))
    y = _lambda(lambda t: t[..., :dim] * tf.sigmoid(t[..., dim:]))(y)
    y = L.Reshape((frames, 1, dim))(y)
    y = L.Activation("swish")(L.BatchNormalization()(L.DepthwiseConv2D((31, 1), padding="same")(y)))
    y = L.Dense(dim)(L.Reshape((frames, dim))(y))
    return tf.keras.Model(inp, L.Add()([inp, y]))


# ---------------------------------------------------------------- shapes that stress the planner


def wide_2048(size=7, c=2048, mid=512):
    """ResNet-50's last bottleneck at full width: 2048 -> 512 1x1, 3x3, 512 -> 2048, residual."""
    inp = L.Input((size, size, c))
    y = _cbr(_cbr(_cbr(inp, mid, 1), mid, 3), c, 1, act=None)
    return tf.keras.Model(inp, L.ReLU()(L.Add()([inp, y])))


def classifier_head(size=7, c=320, feat=1280, classes=1001):
    """MobileNet-v2's head: 1x1 to 1280, global average, a 1280 -> 1001 dense (1.3 MB of weights)."""
    inp = L.Input((size, size, c))
    x = L.GlobalAveragePooling2D()(_cbr(inp, feat, 1, act="relu6"))
    return tf.keras.Model(inp, L.Softmax()(L.Dense(classes)(x)))


def huge_fc(features=4096, hidden=1024, out=256):
    """A 4096 -> 1024 -> 256 MLP: 4 MiB of weights, far beyond every SRAM."""
    inp = L.Input((features,))
    return tf.keras.Model(inp, L.Dense(out)(L.Dense(hidden, activation="relu")(inp)))


def prime_map(h=53, w=47, c=13):
    inp = L.Input((h, w, 3))
    x = _cbr(inp, c, 5, 2)
    x = _cbr(_dw(x, 3, 1), 2 * c + 1, 1)
    x = L.MaxPooling2D(3, 2, padding="same")(x)
    return tf.keras.Model(inp, L.Conv2D(7, 3, strides=2)(x))


def batch4(batch=4, size=32, c=16):
    inp = L.Input((size, size, 3), batch_size=batch)
    x = _cbr(_cbr(inp, c, 3, 2), 2 * c, 3, 2)
    return tf.keras.Model(inp, L.Conv2D(4, 1)(_dw(x)))


def convmixer(size=64, dim=64, k=9, patch=4, depth=3):
    """ConvMixer: a patch embedding, depth x (9x9 depthwise + GELU + BN residual, 1x1)."""
    inp = L.Input((size, size, 3))
    x = L.BatchNormalization()(L.Conv2D(dim, patch, strides=patch, activation="gelu")(inp))
    for _ in range(depth):
        x = L.Add()([x, L.BatchNormalization()(L.DepthwiseConv2D(k, padding="same", activation="gelu")(x))])
        x = L.BatchNormalization()(L.Conv2D(dim, 1, activation="gelu")(x))
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(x)))


def big_kernels(size=48, c=16):
    """A 7x7 stride-2 conv stem (ResNet), a 9x9 stride-2 depthwise, a 7x7 conv at the end."""
    inp = L.Input((size, size, 3))
    x = _cbr(inp, c, 7, 2)
    x = _dw(x, 9, 2)
    return tf.keras.Model(inp, L.Conv2D(8, 7, padding="same")(x))


def stride3(size=45, c=12):
    """Stride 3 in both dimensions, then stride (3, 1) and (1, 3)."""
    inp = L.Input((size, size, 3))
    x = _cbr(inp, c, 3, 3)
    x = _cbr(x, c, (3, 1), (3, 1))
    x = L.DepthwiseConv2D(3, strides=(1, 3), padding="same")(x)
    return tf.keras.Model(inp, L.Conv2D(4, 1)(x))


def asym_pad(size=30, c=10):
    """Explicit asymmetric zero padding ((1, 2), (0, 3)) and ((2, 0), (1, 0)) before VALID convs."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(c, 3, activation="relu")(L.ZeroPadding2D(((1, 2), (0, 3)))(inp))
    x = L.DepthwiseConv2D(3, strides=2)(L.ZeroPadding2D(((2, 0), (1, 0)))(x))
    x = L.AveragePooling2D(2)(L.ZeroPadding2D(((0, 1), (0, 1)))(x))
    return tf.keras.Model(inp, L.Conv2D(4, (2, 3))(x))


def inception_cell(size=28, c=64):
    """Inception-v3 style 35x35-block at 28x28: 1x1; 1x1-5x5; 1x1-3x3-3x3; avgpool-1x1; concat, x2."""
    inp = L.Input((size, size, 3))
    x = _cbr(inp, c, 3, 1)
    for _ in range(2):
        b1 = _cbr(x, 16, 1)
        b2 = _cbr(_cbr(x, 12, 1), 16, 5)
        b3 = _cbr(_cbr(_cbr(x, 16, 1), 24, 3), 24, 3)
        b4 = _cbr(L.AveragePooling2D(3, 1, padding="same")(x), 8, 1)
        x = L.Concatenate()([b1, b2, b3, b4])
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(x)))


def _sep(x, c, k, s=1):
    return _cbr(L.SeparableConv2D(c, k, strides=s, padding="same", use_bias=False)(L.ReLU()(x)), c, 1, act=None)


def nasnet_cell(size=24, c=32, cells=2):
    """NASNet-A normal cells: five pairwise combinations of separable 3x3/5x5, avg pools and
    identities, all concatenated (ten small branches per cell)."""
    inp = L.Input((size, size, 3))
    prev = cur = _cbr(inp, c, 3)
    for _ in range(cells):
        h = _cbr(cur, c, 1, act=None)
        p = _cbr(prev, c, 1, act=None)
        b0 = L.Add()([_sep(h, c, 5), _sep(p, c, 3)])
        b1 = L.Add()([_sep(p, c, 5), _sep(p, c, 3)])
        b2 = L.Add()([L.AveragePooling2D(3, 1, padding="same")(h), p])
        b3 = L.Add()([L.AveragePooling2D(3, 1, padding="same")(p), L.AveragePooling2D(3, 1, padding="same")(p)])
        b4 = L.Add()([_sep(h, c, 3), h])
        prev, cur = cur, L.Concatenate()([p, b0, b1, b2, b3, b4])
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(cur)))


def ghost_module(size=40, c=32):
    """GhostNet: a 1x1 to half the outputs, a cheap 3x3 depthwise on them, concatenate, twice."""
    inp = L.Input((size, size, 3))
    x = _cbr(inp, 16, 3, 2)
    for out in (c, 2 * c):
        prim = _cbr(x, out // 2, 1)
        x = L.Concatenate()([prim, _dw(prim)])
    return tf.keras.Model(inp, L.Conv2D(5, 1)(x))


def aspp(size=33, c=32):
    """DeepLab-v3's ASPP on an odd map: 1x1, three atrous 3x3 (6, 12, 18), image pooling upsampled
    back by a bilinear resize, concatenation, 1x1."""
    inp = L.Input((size, size, 3))
    x = _cbr(_cbr(inp, c, 3, 2), c, 3)
    s = x.shape[1]
    branches = [_cbr(x, c, 1)] + [L.Conv2D(c, 3, dilation_rate=r, padding="same", activation="relu")(x)
                                  for r in (2, 4, 6)]
    pooled = _cbr(L.GlobalAveragePooling2D(keepdims=True)(x), c, 1)
    branches.append(L.Resizing(s, s, interpolation="bilinear")(pooled))
    y = _cbr(L.Concatenate()(branches), c, 1)
    return tf.keras.Model(inp, L.Conv2D(4, 1)(L.UpSampling2D(2, interpolation="bilinear")(y)))


def hourglass(size=64, c=32):
    """A stacked-hourglass module: downsample by max pools, nearest upsampling added to skips."""
    inp = L.Input((size, size, 3))
    x = _cbr(inp, c, 7, 2)
    skips = []
    for _ in range(3):
        skips.append(_cbr(x, c, 3))
        x = _cbr(L.MaxPooling2D()(x), c, 3)
    for skip in reversed(skips):
        x = L.Add()([skip, L.UpSampling2D()(x)])
    return tf.keras.Model(inp, L.Conv2D(16, 1)(x))


# ---------------------------------------------------------------- the set


MODELS: dict[str, Spec] = {
    "effnet_b0_se_64": Spec("efficientnet", lambda: effnet_b0(64)),
    "effnet_b0_se_int16_48": Spec("efficientnet", lambda: effnet_b0(48, 0.5), I16),
    "mobilevit_xxs_64": Spec("hybrid", mobilevit_xxs),
    "edgenext_xca_64": Spec("hybrid", edgenext),
    "yolo_pan_128": Spec("detection", yolo_pan),
    "yolo_pan_uint8_96": Spec("detection", lambda: yolo_pan(96, 8), U8),
    "unet4_64": Spec("segmentation", unet4),
    "unet4_float_32": Spec("segmentation", lambda: unet4(32, 4), FLOAT),
    "wavenet_2000": Spec("audio", wavenet),
    "wavenet_int16_1000": Spec("audio", lambda: wavenet(1000, 16, (1, 2, 4, 8)), I16),
    "m5_audio_16000": Spec("audio", m5_audio),
    "tiny_bert_32x64": Spec("transformer", tiny_bert),
    "tiny_bert_int16_16x64": Spec("transformer", lambda: tiny_bert(16, 64, norm=False), I16),
    "albert_shared_32x64": Spec("transformer", lambda: tiny_bert(32, 64, 2, 2, True)),
    "dscnn_l_49x10": Spec("kws", dscnn_l),
    "micronet_kws_49x10": Spec("kws", micronet_kws),
    "anomaly_ae_640": Spec("autoencoder", anomaly_ae),
    "resnet8_32": Spec("classifier", resnet8),
    "person_detect_96": Spec("classifier", person_detect),
    "rnnt_6x20": Spec("recurrent", rnnt),
    "conformer_conv_64": Spec("audio", conformer_conv),
    "wide_2048_7": Spec("wide", wide_2048),
    "classifier_head_1280": Spec("wide", classifier_head),
    "huge_fc_4096": Spec("streaming", huge_fc),
    "huge_fc_int16_2048": Spec("streaming", lambda: huge_fc(2048, 1024, 64), I16),
    "prime_map_53x47": Spec("odd_shape", prime_map),
    "batch4_cnn_32": Spec("batch", batch4),
    "convmixer_k9_64": Spec("big_kernel", convmixer),
    "big_kernels_48": Spec("big_kernel", big_kernels),
    "stride3_45": Spec("stride", stride3),
    "asym_pad_30": Spec("padding", asym_pad),
    "inception_cell_28": Spec("branches", inception_cell),
    "nasnet_cell_24": Spec("branches", nasnet_cell),
    "ghost_module_40": Spec("branches", ghost_module),
    "aspp_33": Spec("segmentation", aspp),
    "hourglass_64": Spec("pose", hourglass),
    "person_detect_uint8_96": Spec("classifier", person_detect, U8),
    "anomaly_ae_float_640": Spec("autoencoder", anomaly_ae, FLOAT),
    "dscnn_l_int16_49x10": Spec("kws", lambda: dscnn_l(49, 10, 64), I16),
    "resnet8_per_tensor_32": Spec("classifier", resnet8, variant={"_experimental_disable_per_channel": True}),
}


def main() -> None:
    zoo_main(MODELS, __doc__.splitlines()[0], Path("/tmp/zoo8"), Path(__file__))


if __name__ == "__main__":
    main()
