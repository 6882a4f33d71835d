"""The seventh differential set: networks unlike /work/zoo, zoo2, zoo3 and /tmp/zoo4..zoo6, weighted to
what they lack (issues 25, 26: "checked on networks you have not seen").

What is new here: stateful models with two resource variables and non-zero initial values (CALL_ONCE),
a state carried through a conv stack, two signatures in one file; recurrent layers kept as fused ops
(UNIDIRECTIONAL_SEQUENCE_LSTM, a bidirectional
LSTM, dynamic-range: TensorFlow 2.21's int8 converter segfaults on them) and a SimpleRNN loop; WHILE and IF
with NPU work before and after them; TF1-style uint8 graphs written by the compat.v1 converter
(``inference_type=tf.uint8``, fake-quant nodes, ``quantized_input_stats``); per-tensor int8 weights
through a whole CNN; float in / float out; int16x8 with the new operators; PyTorch-export shapes
(NCHW transposes around every conv, explicit PAD before VALID convs, GELU written with tanh,
LayerNorm written as mean/sub/mul/rsqrt, GroupNorm with reshapes, BATCH_MATMUL attention with many
RESHAPEs, an MLP-mixer transposing tokens and channels); operator types no earlier zoo holds
(LOCAL_RESPONSE_NORMALIZATION, FLOOR_DIV, FLOOR_MOD, SQUARE, SQRT, POW, DIV, RELU_N1_TO_1,
RELU_0_TO_1, PADV2 with a non-zero pad value, BROADCAST_TO, ADD_N, SQUEEZE, MINIMUM/MAXIMUM with
broadcasts, EQUAL/LESS_EQUAL with SELECT_V2, REDUCE_MIN over one axis, MIRROR_PAD symmetric,
RESIZE_NEAREST_NEIGHBOR with align_corners and half_pixel_centers, TRANSPOSE_CONV with a bias, SPLIT_V
with uneven parts, REVERSE_V2 on channels, ARG_MIN, CUMSUM reversed).

Runs with TensorFlow (a tool, never a dependency of npuplan), seeded by name; models under /tmp:
  /work/tfvenv/bin/python bench/zoo/zoo7_models.py [--out /tmp/zoo7] [--only NAME ...]
Writes DIR/<name>.tflite and DIR/manifest.json (family, I/O type, converter variant, operator types).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tensorflow as tf  # noqa: E402
from generate import L  # noqa: E402
from zoo5_models import FLOAT, I16, Spec, zoo_main  # noqa: E402

U8 = tf.uint8
PER_TENSOR = {"_experimental_disable_per_channel": True}


def _lambda(fn):
    return L.Lambda(fn)


# ---------------------------------------------------------------- stateful and control flow


class _TwoStates(tf.Module):
    """Two resource variables with non-zero starts (CALL_ONCE initialiser): an IIR-like smoother and
    a step counter-like bias, both read and written each call around two dense layers."""

    def __init__(self, width=16):
        rng = np.random.default_rng(7)
        self.h = tf.Variable(tf.fill((1, width), 0.5), trainable=False)
        self.bias = tf.Variable(tf.fill((1, width), -0.25), trainable=False)
        self.w1 = tf.constant(rng.normal(0, 0.3, (width, width)).astype(np.float32))
        self.w2 = tf.constant(rng.normal(0, 0.3, (width, 6)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec((1, 16), tf.float32)])
    def __call__(self, x):
        h = tf.nn.relu(tf.matmul(x, self.w1) + 0.5 * self.h + self.bias)
        self.h.assign(h)
        self.bias.assign(self.bias * 0.9)
        return tf.matmul(h, self.w2)


class _ConvState(tf.Module):
    """A feature-map state: the previous frame's conv features are added to this frame's."""

    def __init__(self, size=8, c=8):
        rng = np.random.default_rng(8)
        self.prev = tf.Variable(tf.zeros((1, size, size, c)), trainable=False)
        self.w1 = tf.constant(rng.normal(0, 0.3, (3, 3, 3, c)).astype(np.float32))
        self.w2 = tf.constant(rng.normal(0, 0.3, (3, 3, c, 4)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec((1, 8, 8, 3), tf.float32)])
    def __call__(self, x):
        f = tf.nn.relu(tf.nn.conv2d(x, self.w1, 1, "SAME"))
        mixed = f + 0.5 * self.prev
        self.prev.assign(f)
        return tf.nn.conv2d(mixed, self.w2, 2, "SAME")


class _WhileSandwich(tf.Module):
    """A conv before and after a WHILE (a fixed trip count of three dense updates)."""

    def __init__(self, size=8, c=8):
        rng = np.random.default_rng(9)
        self.w1 = tf.constant(rng.normal(0, 0.3, (3, 3, 3, c)).astype(np.float32))
        self.w = tf.constant(rng.normal(0, 0.2, (size * size * c // 4, size * size * c // 4)).astype(np.float32))
        self.w2 = tf.constant(rng.normal(0, 0.3, (3, 3, c, 4)).astype(np.float32))
        self.size, self.c = size, c

    @tf.function(input_signature=[tf.TensorSpec((1, 8, 8, 3), tf.float32)])
    def __call__(self, x):
        f = tf.nn.relu(tf.nn.conv2d(x, self.w1, 2, "SAME"))
        flat = tf.reshape(f, (1, -1))
        _, h = tf.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tf.tanh(tf.matmul(h, self.w))),
                             (tf.constant(0), flat))
        return tf.nn.conv2d(tf.reshape(h, (1, 4, 4, self.c)) + f, self.w2, 1, "SAME")


class _IfSandwich(tf.Module):
    """A conv, an IF on the feature mean (one conv branch or another), a conv after."""

    def __init__(self, c=8):
        rng = np.random.default_rng(10)
        self.w1 = tf.constant(rng.normal(0, 0.3, (3, 3, 3, c)).astype(np.float32))
        self.a = tf.constant(rng.normal(0, 0.3, (1, 1, c, c)).astype(np.float32))
        self.b = tf.constant(rng.normal(0, 0.3, (3, 3, c, c)).astype(np.float32))
        self.w2 = tf.constant(rng.normal(0, 0.3, (1, 1, c, 3)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec((1, 10, 10, 3), tf.float32)])
    def __call__(self, x):
        f = tf.nn.relu(tf.nn.conv2d(x, self.w1, 1, "SAME"))
        g = tf.cond(tf.reduce_mean(f) > 0.4, lambda: tf.nn.relu(tf.nn.conv2d(f, self.a, 1, "SAME")),
                    lambda: tf.nn.conv2d(f, self.b, 1, "SAME"))
        return tf.nn.conv2d(g, self.w2, 1, "SAME")


def fused_lstm(steps=8, features=6, units=12, bidirectional=False):
    """A Keras LSTM left as a loop (unroll=False): the converter fuses it into
    UNIDIRECTIONAL_SEQUENCE_LSTM (two and a REVERSE for the bidirectional one), a dense on each step."""
    inp = L.Input((steps, features), batch_size=1)
    layer = L.LSTM(units, return_sequences=True)
    x = L.Bidirectional(layer)(inp) if bidirectional else layer(inp)
    return tf.keras.Model(inp, L.Dense(4)(x))


def conv_lstm_head(steps=10, bins=8):
    """A 1-D conv front end, a fused LSTM, a dense on the last step (a keyword spotter)."""
    inp = L.Input((steps, bins), batch_size=1)
    x = L.Conv1D(12, 3, padding="same", activation="relu")(inp)
    x = L.LSTM(10)(x)
    return tf.keras.Model(inp, L.Dense(5, activation="softmax")(x))


def simple_rnn_loop(steps=6, features=5, units=8):
    inp = L.Input((steps, features), batch_size=1)
    x = L.SimpleRNN(units, return_sequences=True)(inp)
    return tf.keras.Model(inp, L.Dense(3)(x))


class _TwoSignatures(tf.Module):
    """Two signatures (``encode`` and ``decode``) sharing one weight: written through a SavedModel."""

    def __init__(self, width=12):
        rng = np.random.default_rng(11)
        self.w = tf.constant(rng.normal(0, 0.3, (width, width)).astype(np.float32))
        self.w2 = tf.constant(rng.normal(0, 0.3, (width, 4)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec((1, 12), tf.float32, name="x")])
    def encode(self, x):
        return {"code": tf.matmul(tf.nn.relu(tf.matmul(x, self.w)), self.w2)}

    @tf.function(input_signature=[tf.TensorSpec((1, 12), tf.float32, name="x")])
    def decode(self, x):
        return {"back": tf.nn.relu(tf.matmul(x, tf.transpose(self.w))) * 2.0}


def two_signatures() -> tuple[bytes, list]:
    module = _TwoSignatures()
    with tempfile.TemporaryDirectory() as folder:
        tf.saved_model.save(module, folder, signatures={"encode": module.encode, "decode": module.decode})
        converter = tf.lite.TFLiteConverter.from_saved_model(folder, signature_keys=["encode", "decode"])
        rng = np.random.default_rng(12)

        def data():
            for _ in range(10):
                for key in ("encode", "decode"):
                    yield key, {"x": rng.standard_normal((1, 12)).astype(np.float32)}
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = data
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = tf.int8
        converter.inference_output_type = tf.int8
        return converter.convert(), [[1, 12]]


# ---------------------------------------------------------------- TF1-style uint8 graphs


def _fq(t, lo=-6.0, hi=6.0):
    return tf.quantization.fake_quant_with_min_max_args(t, min=lo, max=hi)


def _tf1_uint8(build, shape) -> tuple[bytes, list]:
    """A tf.compat.v1 graph with fake-quant nodes converted by the old path: ``inference_type=uint8``
    and ``quantized_input_stats`` (mean 128, std 127/6 for the [-6, 6] input range)."""
    graph = tf.Graph()
    with graph.as_default():
        inp = tf.compat.v1.placeholder(tf.float32, shape, name="input")
        out = tf.identity(build(_fq(inp)), name="output")
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(tf.compat.v1.global_variables_initializer())
            converter = tf.compat.v1.lite.TFLiteConverter.from_session(session, [inp], [out])
            converter.inference_type = tf.uint8
            converter.quantized_input_stats = {"input": (128.0, 127.0 / 6.0)}
            return converter.convert(), [list(shape)]


def _w(rng, shape, scale=0.3):
    return _fq(tf.constant(rng.normal(0, scale, shape).astype(np.float32)), -1.0, 1.0)


def tf1_uint8_cnn(size=16):
    """conv, depthwise, avg pool, a residual add, a concat and a dense, every tensor fake-quantized."""
    rng = np.random.default_rng(13)

    def build(x):
        a = _fq(tf.nn.relu6(tf.nn.conv2d(x, _w(rng, (3, 3, 3, 8)), 2, "SAME") + 0.1), 0.0, 6.0)
        b = _fq(tf.nn.relu6(tf.nn.depthwise_conv2d(a, _w(rng, (3, 3, 8, 1)), (1, 1, 1, 1), "SAME")), 0.0, 6.0)
        c = _fq(a + b, 0.0, 12.0)
        d = _fq(tf.concat([c, _fq(tf.nn.avg_pool2d(a, 3, 1, "SAME"), 0.0, 6.0)], axis=3), 0.0, 12.0)
        e = _fq(tf.reduce_mean(d, axis=[1, 2]), 0.0, 12.0)
        return _fq(tf.matmul(e, _w(rng, (16, 5))), -20.0, 20.0)
    return _tf1_uint8(build, (1, size, size, 3))


def tf1_uint8_mlp(features=32):
    rng = np.random.default_rng(14)

    def build(x):
        h = _fq(tf.nn.relu(tf.matmul(x, _w(rng, (features, 24)))), 0.0, 8.0)
        h = _fq(tf.nn.sigmoid(_fq(tf.matmul(h, _w(rng, (24, 16))), -8.0, 8.0)), 0.0, 1.0)
        return _fq(tf.matmul(h, _w(rng, (16, 4))), -8.0, 8.0)
    return _tf1_uint8(build, (1, features))


# ---------------------------------------------------------------- PyTorch-export shapes


def _to_nhwc(x):
    return L.Permute((2, 3, 1))(x)


def _to_nchw(x):
    return L.Permute((3, 1, 2))(x)


def _torch_conv(x, filters, k, s=1, pad=0, groups=1):
    """NCHW in and out: TRANSPOSE, an explicit PAD, a VALID conv, TRANSPOSE back (as exporters write)."""
    y = _to_nhwc(x)
    if pad:
        y = _lambda(lambda t: tf.pad(t, ((0, 0), (pad, pad), (pad, pad), (0, 0))))(y)
    if groups > 1 and groups == y.shape[-1] == filters:
        y = L.DepthwiseConv2D(k, s, padding="valid")(y)
    else:
        y = L.Conv2D(filters, k, s, padding="valid")(y)
    return _to_nchw(y)


def _gelu_tanh(t):
    return 0.5 * t * (1.0 + tf.tanh(0.7978845608 * (t + 0.044715 * t * t * t)))


def _layer_norm_manual(t, eps=1e-5):
    mean = tf.reduce_mean(t, axis=-1, keepdims=True)
    centred = t - mean
    return centred * tf.math.rsqrt(tf.reduce_mean(centred * centred, axis=-1, keepdims=True) + eps)


def torch_convnet_pad(size=20):
    """NCHW: explicit PADs, VALID convs, a depthwise, ReLU6 clamps as MINIMUM/MAXIMUM, a flatten."""
    inp = L.Input((3, size, size))
    x = _lambda(lambda t: tf.minimum(tf.maximum(t, 0.0), 6.0))(_torch_conv(inp, 12, 3, 2, pad=1))
    x = L.ReLU()(_torch_conv(x, 12, 3, 1, pad=1, groups=12))
    x = L.ReLU()(_torch_conv(x, 16, 1))
    x = _lambda(lambda t: tf.reshape(t, (-1, 16 * (size // 2) * (size // 2))))(x)
    return tf.keras.Model(inp, L.Dense(6)(x))


def torch_vit_block(tokens=16, dim=24, heads=2):
    """A PyTorch ViT encoder block: patch embed conv on NCHW, reshapes to (heads, tokens, d),
    BATCH_MATMUL attention, LayerNorm as mean/sub/mul/rsqrt, tanh GELU written out."""
    side = int(np.sqrt(tokens))
    d = dim // heads
    inp = L.Input((3, side * 4, side * 4))
    x = _torch_conv(inp, dim, 4, 4)
    x = _lambda(lambda t: tf.transpose(tf.reshape(t, (-1, dim, tokens)), (0, 2, 1)))(x)
    h = _lambda(_layer_norm_manual)(x)
    q, k, v = (L.Dense(dim)(h) for _ in range(3))

    def heads_of(t):
        return tf.transpose(tf.reshape(t, (-1, tokens, heads, d)), (0, 2, 1, 3))

    att = _lambda(lambda qk: tf.matmul(heads_of(qk[0]), heads_of(qk[1]), transpose_b=True) * d ** -0.5)([q, k])
    att = L.Softmax()(att)
    o = _lambda(lambda av: tf.reshape(tf.transpose(tf.matmul(av[0], heads_of(av[1])), (0, 2, 1, 3)),
                                      (-1, tokens, dim)))([att, v])
    x = L.Add()([x, L.Dense(dim)(o)])
    y = L.Dense(dim)(_lambda(_gelu_tanh)(L.Dense(2 * dim)(_lambda(_layer_norm_manual)(x))))
    x = L.Add()([x, y])
    return tf.keras.Model(inp, L.Dense(5)(_lambda(lambda t: tf.reduce_mean(t, axis=1))(x)))


def torch_groupnorm(size=12, c=16, groups=4):
    """GroupNorm as exported: reshape to (N, G, C/G * H * W), mean, variance, rsqrt, reshape back."""
    inp = L.Input((c, size, size))
    x = _torch_conv(inp, c, 3, pad=1)

    def group_norm(t):
        g = tf.reshape(t, (-1, groups, (c // groups) * size * size))
        mean = tf.reduce_mean(g, axis=-1, keepdims=True)
        var = tf.reduce_mean(tf.math.squared_difference(g, mean), axis=-1, keepdims=True)
        return tf.reshape((g - mean) * tf.math.rsqrt(var + 1e-5), (-1, c, size, size))
    x = L.ReLU()(_lambda(group_norm)(x))
    return tf.keras.Model(inp, _torch_conv(x, 8, 1))


def torch_mlp_mixer(tokens=16, dim=20):
    """MLP-mixer: token mixing as a dense on the transposed (dim, tokens) map, channel mixing after."""
    inp = L.Input((tokens, dim))
    x = inp
    for _ in range(2):
        y = L.Permute((2, 1))(_lambda(_layer_norm_manual)(x))
        y = L.Dense(tokens)(_lambda(_gelu_tanh)(L.Dense(2 * tokens)(y)))
        x = L.Add()([x, L.Permute((2, 1))(y)])
        y = L.Dense(dim)(_lambda(_gelu_tanh)(L.Dense(2 * dim)(_lambda(_layer_norm_manual)(x))))
        x = L.Add()([x, y])
    return tf.keras.Model(inp, L.Dense(4)(L.GlobalAveragePooling1D()(x)))


def torch_conv1d_many_reshapes(c=6, length=48):
    """PyTorch Conv1d exported as unsqueeze / conv / squeeze on (N, C, W) with view() reshapes."""
    inp = L.Input((c, length))
    x = _lambda(lambda t: tf.expand_dims(t, 2))(inp)          # (N, C, 1, W)
    x = _torch_conv(x, 12, (1, 5), 1)
    x = _lambda(lambda t: tf.squeeze(t, 2))(x)                # (N, 12, W-4)
    x = L.ReLU()(x)
    x = _lambda(lambda t: tf.reshape(t, (-1, 12, 1, length - 4)))(x)
    x = _torch_conv(x, 8, (1, 3), (1, 2))
    x = _lambda(lambda t: tf.reshape(t, (-1, 8 * ((length - 4 - 3) // 2 + 1))))(x)
    return tf.keras.Model(inp, L.Dense(3)(x))


# ---------------------------------------------------------------- operator types no zoo holds


def lrn_alexnet(size=24):
    """AlexNet-style LOCAL_RESPONSE_NORMALIZATION after the first two convs (float in the file)."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(16, 5, strides=2, padding="same", activation="relu")(inp)
    x = _lambda(lambda t: tf.nn.local_response_normalization(t, 2, 1.0, 1e-4, 0.75))(x)
    x = L.MaxPooling2D(3, 2, padding="same")(x)
    x = L.Conv2D(16, 3, padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Dense(4)(L.GlobalAveragePooling2D()(x)))


def floor_ops(size=10, c=8):
    """FLOOR_DIV and FLOOR_MOD on a quantized map between convs (a pixel-bucketing step)."""
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 3, padding="same", activation="relu")(inp)
    x = _lambda(lambda t: tf.math.floordiv(t, 0.75) + tf.math.floormod(t, 0.75))(x)
    return tf.keras.Model(inp, L.Conv2D(4, 1)(x))


def power_ops(size=10, c=8):
    """SQUARE, SQRT, POW and DIV as a hand-written normalisation (x / sqrt(mean(x^2)))."""
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 3, padding="same")(inp)
    x = _lambda(lambda t: t / tf.sqrt(tf.reduce_mean(tf.square(t), axis=-1, keepdims=True) + 1e-3))(x)
    x = _lambda(lambda t: tf.pow(tf.abs(t) + 0.1, 1.5))(x)
    return tf.keras.Model(inp, L.Conv2D(4, 1)(x))


def clamp_activations(size=12, c=8):
    """RELU_N1_TO_1 and RELU_0_TO_1 (clip by value), MINIMUM/MAXIMUM with per-channel broadcasts."""
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 3, padding="same")(inp)
    a = _lambda(lambda t: tf.clip_by_value(t, -1.0, 1.0))(x)
    b = _lambda(lambda t: tf.clip_by_value(t, 0.0, 1.0))(L.Conv2D(c, 1)(x))
    lim = tf.constant(np.linspace(0.2, 0.8, c).astype(np.float32))
    cc = _lambda(lambda t: tf.maximum(tf.minimum(t, lim), -lim))(x)
    y = L.Concatenate()([a, b, cc])
    return tf.keras.Model(inp, L.Conv2D(6, 1)(y))


def padv2_value(size=12, c=6):
    """PADV2 with a non-zero constant (a max pool input padded with -1, as some exporters write)."""
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 3, padding="same", activation="relu")(inp)
    x = _lambda(lambda t: tf.pad(t, ((0, 0), (1, 2), (2, 1), (0, 0)), constant_values=-1.0))(x)
    x = L.MaxPooling2D(3, 2)(x)
    return tf.keras.Model(inp, L.Conv2D(4, 1)(x))


def broadcast_addn(size=8, c=8):
    """BROADCAST_TO of a per-channel vector and ADD_N of three maps."""
    inp = L.Input((size, size, c))
    a = L.Conv2D(c, 3, padding="same")(inp)
    b = L.Conv2D(c, 1)(inp)
    bias = tf.constant(np.linspace(-1, 1, c).astype(np.float32))
    s = _lambda(lambda ab: tf.add_n([ab[0], ab[1], tf.broadcast_to(bias, (1, size, size, c))]))([a, b])
    return tf.keras.Model(inp, L.Conv2D(4, 1, activation="relu")(s))


def select_compare(size=10, c=8):
    """EQUAL-free masks: LESS_EQUAL and GREATER_EQUAL feeding SELECT_V2 between convs."""
    inp = L.Input((size, size, c))
    a = L.Conv2D(c, 3, padding="same")(inp)
    b = L.Conv2D(c, 1)(inp)
    x = _lambda(lambda ab: tf.where(ab[0] <= ab[1], ab[0], ab[1] * 0.5))([a, b])
    return tf.keras.Model(inp, L.Conv2D(4, 1)(x))


def reduce_min_axis(size=10, c=12):
    """REDUCE_MIN over the width only (keepdims), then SQUEEZE and a dense."""
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 3, padding="same", activation="relu")(inp)
    x = _lambda(lambda t: tf.squeeze(tf.reduce_min(t, axis=2, keepdims=True), 2))(x)
    return tf.keras.Model(inp, L.Dense(3)(L.Flatten()(x)))


def mirror_symmetric(size=14, c=6):
    """MIRROR_PAD in SYMMETRIC mode (zoos so far only REFLECT), then VALID convs."""
    inp = L.Input((size, size, 3))
    x = _lambda(lambda t: tf.pad(t, ((0, 0), (2, 2), (2, 2), (0, 0)), mode="SYMMETRIC"))(inp)
    x = L.Conv2D(c, 5, activation="relu")(x)
    x = _lambda(lambda t: tf.pad(t, ((0, 0), (1, 1), (1, 1), (0, 0)), mode="REFLECT"))(x)
    return tf.keras.Model(inp, L.Conv2D(4, 3)(x))


def resize_nearest_modes(size=7, c=6):
    """RESIZE_NEAREST_NEIGHBOR x2 with align_corners, with half_pixel_centers, and to 15x15."""
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 3, padding="same", activation="relu")(inp)
    a = _lambda(lambda t: tf.compat.v1.image.resize_nearest_neighbor(t, (2 * size, 2 * size), align_corners=True))(x)
    b = _lambda(lambda t: tf.compat.v1.image.resize_nearest_neighbor(t, (2 * size, 2 * size),
                                                                      half_pixel_centers=True))(x)
    y = L.Conv2D(4, 3, padding="same")(L.Concatenate()([a, b]))
    z = _lambda(lambda t: tf.image.resize(t, (15, 15), method="nearest"))(y)
    return tf.keras.Model(inp, z)


def tconv_bias(size=6, c=12):
    """TRANSPOSE_CONV with a bias (kernel 3 stride 2 same, kernel 2 stride 2 valid), ReLU fused after."""
    inp = L.Input((size, size, c))
    x = L.Conv2DTranspose(8, 3, 2, padding="same", use_bias=True, activation="relu")(inp)
    x = L.Conv2DTranspose(4, 2, 2, padding="valid", use_bias=True)(x)
    return tf.keras.Model(inp, x)


def split_reverse(size=10, c=10):
    """SPLIT_V in uneven parts (3, 5, 2), REVERSE_V2 on channels, concat in another order."""
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 3, padding="same", activation="relu")(inp)
    parts = _lambda(lambda t: tf.split(t, [3, 5, 2], axis=3))(x)
    r = _lambda(lambda t: tf.reverse(t, [3]))(parts[1])
    y = L.Concatenate()([parts[2], r, parts[0]])
    return tf.keras.Model(inp, L.Conv2D(6, 1)(y))


def argmin_cumsum(size=8, c=6):
    """ARG_MIN over channels and a reversed exclusive CUMSUM, both between NPU convs."""
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 3, padding="same")(inp)
    cs = _lambda(lambda t: tf.cumsum(t, axis=2, exclusive=True, reverse=True))(x)
    y = L.Conv2D(4, 1)(cs)
    idx = _lambda(lambda t: tf.cast(tf.argmin(t, axis=-1), tf.float32))(x)
    return tf.keras.Model(inp, [y, idx])


def l2norm_embed(features=24):
    """A face-embedding head: dense, L2_NORMALIZATION, dense (a cosine-similarity classifier)."""
    inp = L.Input((features,))
    x = L.Dense(32, activation="relu")(inp)
    x = _lambda(lambda t: tf.math.l2_normalize(t, axis=-1))(L.Dense(16)(x))
    return tf.keras.Model(inp, L.Dense(5)(x))


def space_depth_unet(size=16, c=8):
    """SPACE_TO_DEPTH down, DEPTH_TO_SPACE up, a skip concat, odd channel counts."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(c, 3, padding="same", activation="relu")(inp)
    d = _lambda(lambda t: tf.nn.space_to_depth(t, 2))(x)
    d = L.Conv2D(4 * 5, 3, padding="same", activation="relu")(d)
    u = _lambda(lambda t: tf.nn.depth_to_space(t, 2))(d)
    return tf.keras.Model(inp, L.Conv2D(3, 3, padding="same")(L.Concatenate()([x, u])))


def leaky_elu_mix(size=12, c=10):
    """LEAKY_RELU (alpha 0.2), ELU and a PRELU on a depthwise, as ported GANs have them."""
    inp = L.Input((size, size, 3))
    x = L.LeakyReLU(0.2)(L.Conv2D(c, 3, strides=2, padding="same")(inp))
    x = L.ELU()(L.DepthwiseConv2D(3, padding="same")(x))
    x = L.PReLU(shared_axes=[1, 2])(L.Conv2D(c, 1)(x))
    return tf.keras.Model(inp, L.Conv2D(1, 3, padding="same", activation="tanh")(x))


def dilated_head(size=20, c=8):
    """Atrous convs at rates 2, 3 and 5 (rate 3 and 5 are new), a strided depthwise, avg pool 5x5."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(c, 3, padding="same", activation="relu")(inp)
    branches = [L.Conv2D(c, 3, dilation_rate=r, padding="same", activation="relu")(x) for r in (2, 3, 5)]
    y = L.Concatenate()(branches)
    y = L.DepthwiseConv2D(3, 2, padding="same")(y)
    return tf.keras.Model(inp, L.Conv2D(5, 1)(L.AveragePooling2D(5, 1, padding="same")(y)))


def odd_pools(size=23, c=7):
    """Max pool 3x3 stride 2 VALID on odd maps, avg pool 2x3 stride (1, 2), global max."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(c, 3, padding="same", activation="relu")(inp)
    x = L.MaxPooling2D(3, 2, padding="valid")(x)
    x = L.AveragePooling2D((2, 3), (1, 2), padding="same")(x)
    return tf.keras.Model(inp, L.Dense(4)(L.GlobalMaxPooling2D()(x)))


def tall_thin(height=96, width=3, c=12):
    """A 96x3 map (a spectrogram strip) through 5x1 and 1x3 kernels with strides (2, 1)."""
    inp = L.Input((height, width, 1))
    x = L.Conv2D(c, (5, 1), strides=(2, 1), padding="same", activation="relu")(inp)
    x = L.Conv2D(c, (1, 3), padding="same", activation="relu")(x)
    x = L.Conv2D(c, (5, 1), strides=(2, 1), padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Dense(4)(L.Flatten()(x)))


def wide_dense(features=300, hidden=600):
    """A 300 -> 600 -> 600 -> 10 MLP: weights larger than a small SRAM budget."""
    inp = L.Input((features,))
    x = L.Dense(hidden, activation="relu")(inp)
    x = L.Dense(hidden, activation="relu")(x)
    return tf.keras.Model(inp, L.Dense(10)(x))


# ---------------------------------------------------------------- the set


def _raw(make):
    """A Spec build that converts by itself (a SavedModel or a TF1 session): returns bytes and shapes."""
    return lambda: make


MODELS: dict[str, Spec] = {
    "two_states_stateful": Spec("stateful", _TwoStates),
    "conv_state_stateful_8": Spec("stateful", _ConvState),
    "two_signatures_12": Spec("stateful", _raw(two_signatures)),
    # the full-integer converter of TensorFlow 2.21 segfaults on a fused LSTM: int8 weights, float activations
    "lstm_fused_8x6": Spec("recurrent", fused_lstm, FLOAT, dynamic_range=True),
    "bilstm_fused_6x5": Spec("recurrent", lambda: fused_lstm(6, 5, 8, True), FLOAT, dynamic_range=True),
    "conv_lstm_kws_10x8": Spec("recurrent", conv_lstm_head, FLOAT, dynamic_range=True),
    "simplernn_loop_6x5": Spec("control_flow", simple_rnn_loop, FLOAT, dynamic_range=True),
    "while_sandwich_8": Spec("control_flow", _WhileSandwich, FLOAT, dynamic_range=True),
    "if_sandwich_10": Spec("control_flow", _IfSandwich),
    "tf1_uint8_cnn_16": Spec("converter", _raw(tf1_uint8_cnn), U8),
    "tf1_uint8_mlp_32": Spec("converter", _raw(tf1_uint8_mlp), U8),
    "per_tensor_cnn_20": Spec("converter", lambda: dilated_head(20, 8), variant=PER_TENSOR),
    "per_tensor_vit_16": Spec("converter", torch_vit_block, variant=PER_TENSOR),
    "float_io_mixer_16": Spec("converter", torch_mlp_mixer, FLOAT),
    "float_io_unet_16": Spec("converter", space_depth_unet, FLOAT),
    "int16_resize_nearest_7": Spec("converter", resize_nearest_modes, I16),  # 16x8 has no RELU_N1_TO_1
    "int16_split_reverse_10": Spec("converter", split_reverse, I16),
    "torch_convnet_pad_20": Spec("pytorch", torch_convnet_pad),
    "torch_vit_block_16": Spec("pytorch", torch_vit_block),
    "torch_groupnorm_12": Spec("pytorch", torch_groupnorm),
    "torch_mlp_mixer_16": Spec("pytorch", torch_mlp_mixer),
    "torch_conv1d_reshapes_48": Spec("pytorch", torch_conv1d_many_reshapes),
    "torch_vit_int16_16": Spec("pytorch", lambda: torch_vit_block(16, 16, 2), I16),
    "lrn_alexnet_24": Spec("new_ops", lrn_alexnet),
    "floor_ops_10": Spec("new_ops", floor_ops),
    "power_ops_10": Spec("new_ops", power_ops),
    "clamp_activations_12": Spec("new_ops", clamp_activations),
    "padv2_value_12": Spec("new_ops", padv2_value),
    "broadcast_addn_8": Spec("new_ops", broadcast_addn),
    "select_compare_10": Spec("new_ops", select_compare),
    "reduce_min_axis_10": Spec("new_ops", reduce_min_axis),
    "mirror_symmetric_14": Spec("new_ops", mirror_symmetric),
    "resize_nearest_modes_7": Spec("new_ops", resize_nearest_modes),
    "tconv_bias_6": Spec("new_ops", tconv_bias),
    "split_reverse_10": Spec("new_ops", split_reverse),
    "argmin_cumsum_8": Spec("new_ops", argmin_cumsum),
    "l2norm_embed_24": Spec("new_ops", l2norm_embed),
    "space_depth_unet_16": Spec("shapes", space_depth_unet),
    "leaky_elu_mix_12": Spec("activations", leaky_elu_mix),
    "dilated_head_20": Spec("shapes", dilated_head),
    "odd_pools_23": Spec("shapes", odd_pools),
    "tall_thin_96x3": Spec("shapes", tall_thin),
    "wide_dense_300": Spec("streaming", wide_dense),
}


def main() -> None:
    zoo_main(MODELS, __doc__.splitlines()[0], Path("/tmp/zoo7"), Path(__file__))


if __name__ == "__main__":
    main()
