"""The ninth differential set: networks unlike /work/zoo, zoo2, zoo3 and /tmp/zoo4..zoo8, built from
the ways recent architectures write their blocks (issues 25, 26: "networks you have not seen will be
checked the same way").

What is new here: RepVGG and MobileOne blocks in their training form (a 3x3, a 1x1 and a BatchNorm
identity branch summed; k over-parameterised depthwise branches) and RepVGG's deploy form; a
GhostNet-v2 bottleneck with DFC attention (1x5 and 5x1 depthwise on a pooled map, sigmoid, upsampled
gate); FBNet blocks (grouped 1x1s with a channel shuffle, 5x5 depthwise, expansion 1/3/6);
PoolFormer (average pool minus identity as the token mixer, GroupNorm(1) as a LayerNorm over H, W,
C, layer scale); ResMLP (per-channel affines, a cross-patch linear on transposed tokens); a whole
Conformer block (two half-step feed-forwards, relative-free MHSA, convolution module, final norm);
a TCN written in 2-D with explicit causal ZeroPadding before dilated convs; attention variants
(CBAM channel + 7x7 spatial, ECA's 1-D conv across channels, coordinate attention pooling H and W
apart, ConvNeXt-v2's global response normalisation); an HRNet exchange unit and a BiFPN weighted
fusion; a SwiGLU MLP; activation heads (PReLU with shared axes, ELU, SELU, swish, softplus);
depth multipliers 2, 4 and 8; SeparableConv1D with a depth multiplier, stride and dilation; grouped
convs with two channels a group and 5x5 kernels; GRU and LSTM layers unrolled (reset_after both
ways, return_state) and left as loops (dynamic-range); odd shapes (1x127, 113x1, width 1 and one
channel, prime 59x7x11, batch 3); an 80-layer 4-channel chain and a 1-layer 3 -> 1024 -> 10 net;
int16x8 versions of several.

Runs with TensorFlow (a tool, never a dependency of npuplan), seeded by name; models under /tmp:
  /work/tfvenv/bin/python bench/zoo/zoo9_models.py [--out /tmp/zoo9] [--only NAME ...]
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


def _lambda(fn):
    return L.Lambda(fn)


def _bn(x):
    return L.BatchNormalization()(x)


def _cbr(x, filters, k=3, s=1, act="relu", groups=1):
    x = _bn(L.Conv2D(filters, k, strides=s, padding="same", use_bias=False, groups=groups)(x))
    return L.Activation(act)(x) if act else x


def _dw(x, k=3, s=1, act="relu", mult=1):
    x = _bn(L.DepthwiseConv2D(k, strides=s, padding="same", use_bias=False, depth_multiplier=mult)(x))
    return L.Activation(act)(x) if act else x


def _head(x, classes=10):
    return L.Dense(classes)(L.GlobalAveragePooling2D()(x))


# ---------------------------------------------------------------- reparameterised convs


def _repvgg_block(x, c, s=1):
    """RepVGG's training form: 3x3+BN, 1x1+BN and (same shape) a BN identity, summed, ReLU."""
    branches = [_cbr(x, c, 3, s, None), _cbr(x, c, 1, s, None)]
    if s == 1 and x.shape[-1] == c:
        branches.append(_bn(x))
    return L.ReLU()(L.Add()(branches))


def repvgg(size=32, widths=(16, 16, 32, 32, 64), deploy=False):
    inp = L.Input((size, size, 3))
    x = inp
    for i, c in enumerate(widths):
        s = 2 if i in (0, 2, 4) else 1
        x = _cbr(x, c, 3, s) if deploy else _repvgg_block(x, c, s)
    return tf.keras.Model(inp, _head(x))


def _mobileone_block(x, c, s, k=3):
    """MobileOne: k depthwise 3x3+BN branches, a depthwise 1x1+BN, a BN identity, summed, ReLU;
    then k pointwise 1x1+BN branches and a BN identity, summed, ReLU."""
    branches = [_dw(x, 3, s, None) for _ in range(k)] + [_dw(x, 1, s, None)]
    if s == 1:
        branches.append(_bn(x))
    y = L.ReLU()(L.Add()(branches))
    branches = [_cbr(y, c, 1, act=None) for _ in range(k)]
    if y.shape[-1] == c:
        branches.append(_bn(y))
    return L.ReLU()(L.Add()(branches))


def mobileone(size=32, k=3):
    inp = L.Input((size, size, 3))
    x = _cbr(inp, 16, 3, 2)
    for c, s in ((16, 1), (32, 2), (32, 1), (48, 2)):
        x = _mobileone_block(x, c, s, k)
    return tf.keras.Model(inp, _head(x))


# ---------------------------------------------------------------- efficient blocks


def _dfc_attention(x, c):
    """GhostNet-v2's decoupled fully connected attention: avg pool 2, 1x1, 1x5 and 5x1 depthwise,
    sigmoid, nearest upsampling back."""
    a = L.AveragePooling2D(2)(x)
    a = _cbr(a, c, 1, act=None)
    a = _dw(_dw(a, (1, 5), 1, None), (5, 1), 1, None)
    return L.UpSampling2D(2)(L.Activation("sigmoid")(a))


def _ghost(x, out):
    """A Ghost module: a 1x1 to half the outputs, a cheap 3x3 depthwise on them, concatenated."""
    prim = _cbr(x, out // 2, 1)
    return L.Concatenate()([prim, _dw(prim)])


def ghostnet_v2(size=32, c=24):
    """GhostNet-v2 bottlenecks: a Ghost module gated by DFC attention, depthwise, 1x1, residual."""
    inp = L.Input((size, size, 3))
    x = _cbr(inp, 16, 3, 2)
    for out in (c, 2 * c):
        ghost = L.Multiply()([_ghost(x, out), _dfc_attention(x, out)])
        y = _cbr(_dw(ghost, 3, 1, None), out, 1, act=None)
        short = x if x.shape[-1] == out else _cbr(x, out, 1, act=None)
        x = L.Add()([short, y])
    return tf.keras.Model(inp, _head(x))


def _shuffle(x, groups):
    h, w, c = x.shape[1:]
    return L.Reshape((h, w, c))(L.Permute((1, 2, 4, 3))(L.Reshape((h, w, groups, c // groups))(x)))


def fbnet(size=32):
    """FBNet-style blocks: grouped 1x1 expand (g=2) with a channel shuffle, kxk depthwise, grouped
    1x1 project, residual when shapes allow."""
    inp = L.Input((size, size, 3))
    x = _cbr(inp, 16, 3, 2)
    for expand, out, k, s, g in ((1, 16, 3, 1, 1), (6, 24, 5, 2, 2), (3, 24, 3, 1, 2), (6, 32, 5, 2, 2),
                                 (3, 32, 5, 1, 1)):
        y = _cbr(x, x.shape[-1] * expand, 1, groups=g) if expand > 1 else x
        y = _shuffle(y, g) if g > 1 else y
        y = _cbr(_dw(y, k, s), out, 1, act=None, groups=g)
        x = L.Add()([x, y]) if s == 1 and x.shape[-1] == out else y
    return tf.keras.Model(inp, _head(x))


def poolformer(size=32, c=32, blocks=2, norm=True):
    """PoolFormer: a 7x7 stride-4 patch embedding, blocks of GroupNorm(1) (a LayerNorm over H, W, C),
    avgpool3x3 - x, layer scale, residual; GroupNorm, a 4x 1x1 GELU MLP, layer scale, residual.
    Without ``norm`` BatchNorm stands in (TensorFlow's 16x8 quantizer has no NEG)."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(c, 7, strides=4, padding="same")(inp)
    for _ in range(blocks):
        y = L.LayerNormalization(axis=(1, 2, 3))(x) if norm else _bn(x)
        y = L.Subtract()([L.AveragePooling2D(3, 1, padding="same")(y), y])
        x = L.Add()([x, L.DepthwiseConv2D(1, use_bias=False)(y)])  # layer scale: a per-channel multiply
        y = L.LayerNormalization(axis=(1, 2, 3))(x) if norm else _bn(x)
        y = L.Conv2D(c, 1)(L.Conv2D(4 * c, 1, activation="gelu")(y))
        x = L.Add()([x, L.DepthwiseConv2D(1, use_bias=False)(y)])
    return tf.keras.Model(inp, _head(x))


def _affine(x):
    """ResMLP's Aff: a per-channel scale and shift (seeded constants)."""
    c = x.shape[-1]
    alpha = (1.0 + 0.1 * np.random.standard_normal(c)).astype(np.float32)
    beta = (0.1 * np.random.standard_normal(c)).astype(np.float32)
    return _lambda(lambda t: t * alpha + beta)(x)


def resmlp(size=32, patch=4, dim=48, blocks=2):
    inp = L.Input((size, size, 3))
    n = (size // patch) ** 2
    x = L.Reshape((n, dim))(L.Conv2D(dim, patch, strides=patch)(inp))
    for _ in range(blocks):
        y = L.Permute((2, 1))(_affine(x))
        y = L.Permute((2, 1))(L.Dense(n)(y))
        x = L.Add()([x, _affine(y)])
        y = L.Dense(dim)(L.Dense(4 * dim, activation="gelu")(_affine(x)))
        x = L.Add()([x, _affine(y)])
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling1D()(_affine(x))))


def _half_ffn(x, dim):
    y = L.Dense(dim)(L.Dense(4 * dim, activation="swish")(L.LayerNormalization()(x)))
    return L.Add()([x, _lambda(lambda t: 0.5 * t)(y)])


def conformer_block(frames=32, dim=48, heads=4, k=15):
    """A whole Conformer block: FFN/2, MHSA, convolution module (GLU, 1-D depthwise k, BN, swish),
    FFN/2, LayerNorm."""
    inp = L.Input((frames, dim))
    x = _half_ffn(inp, dim)
    h = L.LayerNormalization()(x)
    x = L.Add()([x, L.MultiHeadAttention(heads, dim // heads)(h, h)])
    y = L.Dense(2 * dim)(L.LayerNormalization()(x))
    y = _lambda(lambda t: t[..., :dim] * tf.sigmoid(t[..., dim:]))(y)
    y = L.Activation("swish")(_bn(L.DepthwiseConv1D(k, padding="same")(y)))
    x = L.Add()([x, L.Dense(dim)(y)])
    return tf.keras.Model(inp, L.LayerNormalization()(_half_ffn(x, dim)))


def tcn_2d(steps=256, c=16, rates=(1, 2, 4, 8, 16)):
    """A TCN on a steps x 1 map: explicit causal ZeroPadding2D ((d*(k-1), 0), (0, 0)) before each
    VALID dilated 3x1 conv, residual sums, a last-step head."""
    inp = L.Input((steps, 1, 4))
    x = L.Conv2D(c, 1)(inp)
    for d in rates:
        y = L.ZeroPadding2D(((2 * d, 0), (0, 0)))(x)
        y = L.Conv2D(c, (3, 1), dilation_rate=(d, 1), activation="relu")(y)
        x = L.Add()([x, y])
    last = L.Cropping2D(((steps - 1, 0), (0, 0)))(x)
    return tf.keras.Model(inp, L.Conv2D(6, 1)(last))


# ---------------------------------------------------------------- attention variants


def cbam(size=24, c=32):
    """CBAM: channel attention (shared MLP on avg and max pooled vectors, summed, sigmoid) then
    spatial attention (mean and max over channels, concatenated, 7x7 conv, sigmoid)."""
    inp = L.Input((size, size, 3))
    x = _cbr(_cbr(inp, c, 3, 2), c)
    down, up = L.Dense(c // 8, activation="relu"), L.Dense(c)
    a = L.Add()([up(down(L.GlobalAveragePooling2D(keepdims=True)(x))),
                 up(down(L.GlobalMaxPooling2D(keepdims=True)(x)))])
    x = L.Multiply()([x, L.Activation("sigmoid")(a)])
    s = L.Concatenate()([_lambda(lambda t: tf.reduce_mean(t, -1, keepdims=True))(x),
                         _lambda(lambda t: tf.reduce_max(t, -1, keepdims=True))(x)])
    x = L.Multiply()([x, L.Conv2D(1, 7, padding="same", activation="sigmoid")(s)])
    return tf.keras.Model(inp, _head(x))


def eca(size=24, c=32, k=5):
    """ECA-Net: global average, a 1-D conv of k taps across the channels, sigmoid, scale."""
    inp = L.Input((size, size, 3))
    x = _cbr(_cbr(inp, c, 3, 2), c)
    a = L.Reshape((c, 1))(L.GlobalAveragePooling2D()(x))
    a = L.Conv1D(1, k, padding="same", use_bias=False, activation="sigmoid")(a)
    x = L.Multiply()([x, L.Reshape((1, 1, c))(a)])
    return tf.keras.Model(inp, _head(_cbr(x, 2 * c, 3, 2)))


def coord_attention(size=24, c=32, r=8):
    """Coordinate attention: pool over W and over H apart, concatenate along H, 1x1 + BN + hard
    swish, split back, a sigmoid 1x1 each, both gates multiplied in."""
    inp = L.Input((size, size, 3))
    x = _cbr(inp, c, 3, 2)
    h = w = x.shape[1]
    ph = _lambda(lambda t: tf.reduce_mean(t, 2, keepdims=True))(x)  # (h, 1, c)
    pw = L.Permute((2, 1, 3))(_lambda(lambda t: tf.reduce_mean(t, 1, keepdims=True))(x))  # (w, 1, c)
    y = _cbr(L.Concatenate(axis=1)([ph, pw]), c // r, 1, act="hard_swish")
    gh = L.Conv2D(c, 1, activation="sigmoid")(L.Cropping2D(((0, w), (0, 0)))(y))
    gw = L.Permute((2, 1, 3))(L.Conv2D(c, 1, activation="sigmoid")(L.Cropping2D(((h, 0), (0, 0)))(y)))
    return tf.keras.Model(inp, _head(L.Multiply()([x, gh, gw])))


def convnext_v2_grn(size=16, c=32):
    """ConvNeXt-v2's block: 7x7 depthwise, LayerNorm, 4x expand with GELU, global response
    normalisation (L2 over H, W per channel, divided by its channel mean), project, residual."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(c, 2, strides=2)(inp)
    y = L.LayerNormalization(epsilon=1e-6)(L.DepthwiseConv2D(7, padding="same")(x))
    y = L.Dense(4 * c, activation="gelu")(y)

    def grn(t):
        g = tf.sqrt(tf.reduce_sum(tf.square(t), axis=(1, 2), keepdims=True))
        n = g / (tf.reduce_mean(g, axis=-1, keepdims=True) + 1e-6)
        return t + 0.5 * t * n

    y = L.Dense(c)(_lambda(grn)(y))
    return tf.keras.Model(inp, _head(L.Add()([x, y])))


def hrnet_exchange(size=32, c=16):
    """An HRNet exchange unit: three resolutions in parallel, each output the sum of every branch
    resampled to it (strided 3x3s down, 1x1 + nearest upsampling up)."""
    inp = L.Input((size, size, 3))
    b0 = _cbr(inp, c, 3, 2)
    b1 = _cbr(b0, 2 * c, 3, 2)
    b2 = _cbr(b1, 4 * c, 3, 2)
    outs = []
    for i, width in enumerate((c, 2 * c, 4 * c)):
        terms = []
        for j, b in enumerate((b0, b1, b2)):
            if j == i:
                terms.append(b)
            elif j > i:
                terms.append(L.UpSampling2D(2 ** (j - i))(_cbr(b, width, 1, act=None)))
            else:
                for step in range(i - j):
                    b = _cbr(b, width if step == i - j - 1 else b.shape[-1], 3, 2, None if step == i - j - 1 else "relu")
                terms.append(b)
        outs.append(L.ReLU()(L.Add()(terms)))
    return tf.keras.Model(inp, [L.Conv2D(4, 1)(o) for o in outs])


def bifpn(size=32, c=24):
    """A BiFPN node pair: fast normalised fusion (constant positive weights over their sum) of two
    and three inputs, depthwise-separable 3x3 after each."""
    inp = L.Input((size, size, 3))
    p3 = _cbr(inp, c, 3, 2)
    p4 = _cbr(p3, c, 3, 2)
    p5 = _cbr(p4, c, 3, 2)

    def fuse(ts, ws):
        s = sum(ws) + 1e-4
        return L.Add()([_lambda(lambda t, w=w: t * (w / s))(t) for t, w in zip(ts, ws)])

    def sep(t):
        return _cbr(_dw(t, 3, 1, None), c, 1, act="swish")

    p4_td = sep(fuse([p4, L.UpSampling2D()(p5)], [0.7, 1.3]))
    p3_out = sep(fuse([p3, L.UpSampling2D()(p4_td)], [1.1, 0.4]))
    p4_out = sep(fuse([p4, p4_td, L.MaxPooling2D(3, 2, padding="same")(p3_out)], [0.5, 0.9, 1.6]))
    return tf.keras.Model(inp, [L.Conv2D(9, 1)(p3_out), L.Conv2D(9, 1)(p4_out)])


def swiglu_mlp(tokens=16, dim=32, hidden=64, blocks=2):
    """A LLaMA-style MLP stack on tokens: RMSNorm (x / sqrt(mean x^2)), SwiGLU (swish(xW) * xV) W2."""
    inp = L.Input((tokens, dim))
    x = inp
    for _ in range(blocks):
        h = _lambda(lambda t: t * tf.math.rsqrt(tf.reduce_mean(tf.square(t), -1, keepdims=True) + 1e-6))(x)
        g = L.Multiply()([L.Dense(hidden, activation="swish", use_bias=False)(h), L.Dense(hidden, use_bias=False)(h)])
        x = L.Add()([x, L.Dense(dim, use_bias=False)(g)])
    return tf.keras.Model(inp, L.Dense(8)(x))


# ---------------------------------------------------------------- activations, multipliers, groups


_HEADS = {"prelu": lambda: L.PReLU(shared_axes=(1, 2)), "elu": L.ELU, "selu": lambda: L.Activation("selu"),
          "swish": lambda: L.Activation("swish"), "softplus": lambda: L.Activation("softplus"),
          "tanh": lambda: L.Activation("tanh"), "sigmoid": lambda: L.Activation("sigmoid")}


def act_heads(size=16, c=16, heads=("prelu", "elu", "selu", "swish", "softplus")):
    """One trunk, a head per activation: PReLU shared over H and W, ELU, SELU, swish, softplus (16x8:
    TensorFlow's quantizer has no 16x8 GREATER, which ELU and SELU become, nor PRELU)."""
    inp = L.Input((size, size, 3))
    x = _cbr(inp, c, 3, 2, None)
    return tf.keras.Model(inp, [L.Conv2D(4, 1)(_HEADS[h]()(x)) for h in heads])


def dw_multipliers(size=32):
    """Depthwise multipliers 2, 4 and 8 (strided, 5x5, 3x3) between pointwise convs."""
    inp = L.Input((size, size, 3))
    x = _dw(inp, 3, 2, "relu6", mult=8)
    x = _dw(_cbr(x, 8, 1), 5, 2, "relu6", mult=4)
    x = _dw(_cbr(x, 12, 1), 3, 1, "relu6", mult=2)
    return tf.keras.Model(inp, _head(x))


def sepconv1d(steps=200, c=24):
    """SeparableConv1D with depth multiplier 2 and stride 2, then dilation 2, then a 9-tap one."""
    inp = L.Input((steps, 8))
    x = L.SeparableConv1D(c, 5, strides=2, depth_multiplier=2, padding="same", activation="relu")(inp)
    x = L.SeparableConv1D(c, 3, dilation_rate=2, padding="same", activation="relu")(x)
    x = L.SeparableConv1D(2 * c, 9, strides=3, padding="valid", activation="relu")(x)
    return tf.keras.Model(inp, L.Dense(5)(L.GlobalAveragePooling1D()(x)))


def grouped(size=24):
    """Grouped convs with two channels a group (g=16 on 32), a 5x5 g=4 stride 2, g=8 1x1."""
    inp = L.Input((size, size, 3))
    x = _cbr(inp, 32, 3)
    x = _cbr(x, 32, 3, groups=16)
    x = _cbr(x, 48, 5, 2, groups=4)
    x = _cbr(x, 48, 1, groups=8)
    return tf.keras.Model(inp, _head(x))


def se_dense_relu6(size=20, c=40):
    """Squeeze-excite with Dense layers on a flat vector, ReLU6 and a hard sigmoid gate (relu6(x+3)/6)
    reshaped back to 1x1xC."""
    inp = L.Input((size, size, 3))
    x = _cbr(inp, c, 3, 2, "relu6")
    for _ in range(2):
        a = L.Dense(c // 4, activation="relu6")(L.GlobalAveragePooling2D()(x))
        a = _lambda(lambda t: tf.nn.relu6(t + 3.0) / 6.0)(L.Dense(c)(a))
        x = _cbr(L.Multiply()([x, L.Reshape((1, 1, c))(a)]), c, 3, act="relu6")
    return tf.keras.Model(inp, _head(x))


# ---------------------------------------------------------------- recurrent


def gru_unrolled(steps=10, feats=16, units=24, reset_after=True):
    inp = L.Input((steps, feats))
    x = L.GRU(units, unroll=True, return_sequences=True, reset_after=reset_after)(inp)
    x = L.GRU(units, unroll=True, reset_after=reset_after)(x)
    return tf.keras.Model(inp, L.Dense(6)(x))


def lstm_state(steps=8, feats=12, units=20):
    """An unrolled LSTM returning its sequence and both states, all three feeding the head."""
    inp = L.Input((steps, feats))
    seq, h, c = L.LSTM(units, unroll=True, return_sequences=True, return_state=True)(inp)
    pooled = L.GlobalAveragePooling1D()(seq)
    return tf.keras.Model(inp, L.Dense(5)(L.Concatenate()([pooled, h, c])))


def rnn_loop(steps=6, feats=8, units=12, cell="gru"):
    """A recurrent layer left as a loop (WHILE or a fused op), CNN work before and after it (a static
    batch: with a dynamic one the converter fails on TensorListReserve)."""
    inp = L.Input((steps, feats), batch_size=1)
    x = L.Conv1D(feats, 3, padding="same", activation="relu")(inp)
    layer = L.GRU(units) if cell == "gru" else L.LSTM(units)
    return tf.keras.Model(inp, L.Dense(4)(L.Dense(16, activation="relu")(layer(x))))


# ---------------------------------------------------------------- shapes


def row_1xn(width=127, c=6):
    """A 1x127 map: 1x5 convs, a 1x3 stride-2 pool, a 1x7 depthwise."""
    inp = L.Input((1, width, c))
    x = L.Conv2D(12, (1, 5), padding="same", activation="relu")(inp)
    x = L.MaxPooling2D((1, 3), (1, 2))(x)
    x = L.DepthwiseConv2D((1, 7), padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Conv2D(3, 1)(x))


def col_nx1(height=113, c=5):
    """A 113x1 map: 5x1 convs with stride (2, 1), an average pool (3, 1)."""
    inp = L.Input((height, 1, c))
    x = L.Conv2D(16, (5, 1), strides=(2, 1), padding="same", activation="relu")(inp)
    x = L.AveragePooling2D((3, 1))(x)
    x = L.Conv2D(16, (3, 1), padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Dense(4)(L.Flatten()(x)))


def one_channel(height=97):
    """Width 1, one channel in and out: a denoiser of 1-channel convs and a residual."""
    inp = L.Input((height, 1, 1))
    x = L.Conv2D(1, (9, 1), padding="same", activation="relu")(inp)
    x = L.Conv2D(1, (9, 1), padding="same")(x)
    return tf.keras.Model(inp, L.Add()([inp, x]))


def prime_map(h=59, w=7, c=11):
    inp = L.Input((h, w, c))
    x = _cbr(inp, 13, 3, 2)
    x = _dw(x, (5, 3), 1)
    x = L.Conv2D(17, (3, 2), strides=(2, 1))(x)
    return tf.keras.Model(inp, L.Conv2D(7, 1)(x))


def batch3(batch=3, size=20, c=12):
    """A fixed batch of 3 through convs, a depthwise, a pool and a dense."""
    inp = L.Input((size, size, 3), batch_size=batch)
    x = _dw(_cbr(inp, c, 3, 2), 3, 1)
    x = L.MaxPooling2D()(_cbr(x, 2 * c, 1))
    return tf.keras.Model(inp, L.Dense(5)(L.Flatten()(x)))


def deep_narrow(depth=80, c=4, size=16):
    """An 80-layer chain of 4-channel 3x3 convs, a residual every fourth layer."""
    inp = L.Input((size, size, 1))
    x = L.Conv2D(c, 3, padding="same", activation="relu")(inp)
    for i in range(depth - 1):
        y = L.Conv2D(c, 3, padding="same", activation="relu")(x)
        x = L.Add()([x, y]) if i % 4 == 3 else y
    return tf.keras.Model(inp, L.Conv2D(1, 1)(x))


def wide_shallow(size=8, c=1024):
    """One 3 -> 1024 1x1 conv on 8x8, global pool, 1024 -> 10."""
    inp = L.Input((size, size, 3))
    return tf.keras.Model(inp, _head(L.Conv2D(c, 1, activation="relu")(inp)))


# ---------------------------------------------------------------- the set


MODELS: dict[str, Spec] = {
    "repvgg_train_32": Spec("reparam", repvgg),
    "repvgg_deploy_32": Spec("reparam", lambda: repvgg(deploy=True)),
    "repvgg_train_int16_24": Spec("reparam", lambda: repvgg(24, (8, 8, 16, 16, 32)), I16),
    "mobileone_k3_32": Spec("reparam", mobileone),
    "ghostnet_v2_32": Spec("efficient", ghostnet_v2),
    "fbnet_32": Spec("efficient", fbnet),
    "poolformer_32": Spec("metaformer", poolformer),
    "poolformer_int16_16": Spec("metaformer", lambda: poolformer(16, 16, 1, norm=False), I16),
    "resmlp_32": Spec("metaformer", resmlp),
    "conformer_block_32x48": Spec("transformer", conformer_block),
    "swiglu_mlp_16x32": Spec("transformer", swiglu_mlp),
    "tcn_2d_causal_256": Spec("audio", tcn_2d),
    "tcn_2d_causal_int16_128": Spec("audio", lambda: tcn_2d(128, 8, (1, 2, 4, 8)), I16),
    "cbam_24": Spec("attention", cbam),
    "eca_24": Spec("attention", eca),
    "coord_attention_24": Spec("attention", coord_attention),
    "convnext_v2_grn_16": Spec("attention", convnext_v2_grn),
    "hrnet_exchange_32": Spec("multiscale", hrnet_exchange),
    "bifpn_32": Spec("multiscale", bifpn),
    "act_heads_16": Spec("activation", act_heads),
    "act_heads_int16_12": Spec("activation", lambda: act_heads(12, 8, ("swish", "tanh", "sigmoid")), I16),
    "dw_multipliers_32": Spec("depthwise", dw_multipliers),
    "sepconv1d_200": Spec("depthwise", sepconv1d),
    "grouped_g16_24": Spec("grouped", grouped),
    "se_dense_relu6_20": Spec("attention", se_dense_relu6),
    "gru_unrolled_10x16": Spec("recurrent", gru_unrolled),
    "gru_unrolled_v1_8x12": Spec("recurrent", lambda: gru_unrolled(8, 12, 16, False)),
    "lstm_state_8x12": Spec("recurrent", lstm_state),
    "gru_loop_dr_6x8": Spec("recurrent", rnn_loop, FLOAT, dynamic_range=True),
    "lstm_loop_dr_6x8": Spec("recurrent", lambda: rnn_loop(cell="lstm"), FLOAT, dynamic_range=True),
    "row_1x127": Spec("odd_shape", row_1xn),
    "col_113x1": Spec("odd_shape", col_nx1),
    "one_channel_97x1": Spec("odd_shape", one_channel),
    "prime_59x7x11": Spec("odd_shape", prime_map),
    "batch3_cnn_20": Spec("batch", batch3),
    "deep_narrow_80x4": Spec("deep", deep_narrow),
    "wide_shallow_1024": Spec("wide", wide_shallow),
    "mobileone_float_24": Spec("reparam", lambda: mobileone(24, 2), FLOAT),
}


def main() -> None:
    zoo_main(MODELS, __doc__.splitlines()[0], Path("/tmp/zoo9"), Path(__file__))


if __name__ == "__main__":
    main()
