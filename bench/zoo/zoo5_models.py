"""The fifth differential set: networks unlike /work/zoo, zoo2, zoo3 and /tmp/zoo4, written the ways
other toolchains write them (issues 25, 26: "checked on networks you have not seen").

What is new here: causal and multi-query attention written as BATCH_MATMULs with a mask add and
SOFTMAX; stateful models with resource variables (a streaming KWS ring buffer, an accumulator
updated three times in one call, a Keras stateful GRU) and recurrent layers left as loops (WHILE
subgraphs, a fused UNIDIRECTIONAL_SEQUENCE_LSTM); a data-dependent IF; PyTorch-style NCHW graphs
with a TRANSPOSE around every conv, BatchNorm and max pool; embeddings (GATHER on int32 token ids);
HARD_SWISH, exact and tanh GELU, LayerNorm; depthwise multipliers 3 and 5; strided and dilated 1-D
convs and Conv1DTranspose; transposed convs with kernel 4 stride 2 and stride 3; a 1x1x211 map,
prime depths, a fixed batch of 2 and 3; SPLIT_V / UNPACK / PACK / STRIDED_SLICE / REVERSE mixes;
operators the NPU does not run (REDUCE_MAX, SQUARED_DIFFERENCE, L2_NORMALIZATION, ARG_MAX, CUMSUM,
TOPK) between NPU layers. Converter variants other toolchains produce: the old calibrating
quantizer (``experimental_new_quantizer=False``), buffers stored after the flatbuffer
(``_experimental_use_buffer_offset``), per-tensor dense weights, int32 biases in 16x8.
Most are int8; some int16x8 and some float in / float out (QUANTIZE / DEQUANTIZE at the border);
the loops are dynamic-range (int8 weights, float activations: the calibrating quantizer crashes on
WHILE), so npuplan must leave them whole on the CPU.

Runs with TensorFlow (a tool, never a dependency of npuplan), seeded by name; models under /tmp:
  /work/tfvenv/bin/python bench/zoo/zoo5_models.py [--out /tmp/zoo5] [--only NAME ...]
Writes DIR/<name>.tflite and DIR/manifest.json (family, I/O type, converter variant, operator types).
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tensorflow as tf  # noqa: E402
from generate import L, op_types, zoo_arguments  # noqa: E402

FLOAT, I8, I16 = tf.float32, tf.int8, tf.int16


@dataclass(frozen=True)
class Spec:
    family: str
    build: Callable
    io: object = I8
    variant: dict = field(default_factory=dict)  # converter attributes set before convert()
    int_input_max: int = 0  # >0: the first input holds int32 ids below this
    dynamic_range: bool = False  # int8 weights, float activations (no calibration: it crashes on WHILE)


# ---------------------------------------------------------------- blocks


def _nchw(layer):
    """A PyTorch export's NCHW layer: TRANSPOSE to NHWC, the layer, TRANSPOSE back."""
    def apply(x):
        return L.Permute((3, 1, 2))(layer(L.Permute((2, 3, 1))(x)))
    return apply


def _hard_swish(x):
    return L.Lambda(lambda t: t * tf.nn.relu6(t + 3.0) / 6.0)(x)


def _gelu(x, approximate=False):
    return L.Lambda(lambda t: tf.nn.gelu(t, approximate=approximate))(x)


# ---------------------------------------------------------------- attention


def causal_attention(tokens=10, dim=24, heads=2, norm=True):
    """Multi-head self-attention with a causal mask added before the softmax (decoder style);
    without LayerNorm for 16x8, whose quantizer has no NEG."""
    inp = L.Input((tokens, dim))
    d = dim // heads
    mask = tf.constant(np.triu(np.full((tokens, tokens), -1e4, np.float32), 1))

    def split(t):
        return tf.transpose(tf.reshape(t, (-1, tokens, heads, d)), (0, 2, 1, 3))

    x = L.LayerNormalization()(inp) if norm else inp
    q, k, v = (L.Lambda(split)(L.Dense(dim)(x)) for _ in range(3))
    s = L.Lambda(lambda qk: tf.matmul(qk[0], qk[1], transpose_b=True) / np.sqrt(d) + mask)([q, k])
    o = L.Lambda(lambda av: tf.matmul(av[0], av[1]))([L.Softmax(axis=-1)(s), v])
    o = L.Lambda(lambda t: tf.reshape(tf.transpose(t, (0, 2, 1, 3)), (-1, tokens, dim)))(o)
    x = L.Add()([inp, L.Dense(dim)(o)])
    y = L.Dense(dim)(_gelu(L.Dense(2 * dim)(L.LayerNormalization()(x) if norm else x)))
    return tf.keras.Model(inp, L.Add()([x, y]))


def multi_query_attention(tokens=16, dim=32, heads=4):
    """One shared key/value head, ``heads`` query heads (rank-3 BATCH_MATMUL over heads*tokens)."""
    inp = L.Input((tokens, dim))
    d = dim // heads
    q = L.Lambda(lambda t: tf.reshape(t, (-1, tokens * heads, d)))(L.Dense(dim)(inp))
    k, v = L.Dense(d)(inp), L.Dense(d)(inp)
    a = L.Softmax()(L.Lambda(lambda qk: tf.matmul(qk[0], qk[1], transpose_b=True) * (d ** -0.5))([q, k]))
    o = L.Lambda(lambda t: tf.reshape(t, (-1, tokens, dim)))(L.Lambda(lambda av: tf.matmul(av[0], av[1]))([a, v]))
    return tf.keras.Model(inp, L.Dense(8)(L.GlobalAveragePooling1D()(o)))


def cross_attention(queries=4, keys=20, dim=16):
    """Two inputs: a few learned-style queries attend over a longer context."""
    qi, ci = L.Input((queries, dim)), L.Input((keys, dim))
    q, k, v = L.Dense(dim)(qi), L.Dense(dim)(ci), L.Dense(dim)(ci)
    a = L.Softmax()(L.Lambda(lambda qk: tf.matmul(qk[0], qk[1], transpose_b=True) * (dim ** -0.5))([q, k]))
    att = L.Lambda(lambda av: tf.matmul(av[0], av[1]))([a, v])
    return tf.keras.Model([qi, ci], L.Dense(5)(L.Add()([qi, att])))


# ---------------------------------------------------------------- stateful and control flow


class _RingKws(tf.Module):
    """Streaming keyword spotting: a resource variable holds the last frames; each call appends one
    frame, runs a conv over the window, keeps the newest frames (READ/ASSIGN_VARIABLE)."""

    def __init__(self, frames=8, bins=10, width=12):
        rng = np.random.default_rng(5)
        self.frames, self.bins = frames, bins
        self.buf = tf.Variable(tf.zeros((1, frames - 1, bins, 1)), trainable=False)
        self.w1 = tf.constant(rng.normal(0, 0.3, (3, 3, 1, width)).astype(np.float32))
        self.w2 = tf.constant(rng.normal(0, 0.2, (width, 4)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec((1, 1, 10, 1), tf.float32)])
    def __call__(self, frame):
        window = tf.concat([self.buf, frame], axis=1)
        self.buf.assign(window[:, 1:])
        h = tf.nn.relu(tf.nn.conv2d(window, self.w1, 1, "SAME"))
        return tf.matmul(tf.reduce_mean(h, axis=[1, 2]), self.w2)


class _Accumulate3(tf.Module):
    """A state updated three times in one call (an unrolled recurrence through a variable)."""

    def __init__(self, width=12):
        self.state = tf.Variable(tf.fill((1, width), 0.25), trainable=False)
        self.w = tf.constant(np.random.default_rng(2).normal(0, 0.3, (width, width)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec((1, 12), tf.float32)])
    def __call__(self, x):
        for _ in range(3):
            self.state.assign(tf.tanh(tf.matmul(x + self.state, self.w)))
        return self.state.read_value() * 2.0


class _WhileLoop(tf.Module):
    """A tf.while_loop with a fixed trip count: h <- relu(h W + x), four times (WHILE subgraphs)."""

    def __init__(self, width=16):
        self.w = tf.constant(np.random.default_rng(3).normal(0, 0.25, (width, width)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec((1, 16), tf.float32)])
    def __call__(self, x):
        _, h = tf.while_loop(lambda i, h: i < 4, lambda i, h: (i + 1, tf.nn.relu(tf.matmul(h, self.w) + x)),
                             (tf.constant(0), x))
        return h


class _DataIf(tf.Module):
    """A data-dependent IF: one dense branch or the other, chosen by the input's mean."""

    def __init__(self, width=16):
        rng = np.random.default_rng(4)
        self.a = tf.constant(rng.normal(0, 0.3, (width, width)).astype(np.float32))
        self.b = tf.constant(rng.normal(0, 0.3, (width, width)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec((1, 16), tf.float32)])
    def __call__(self, x):
        return tf.cond(tf.reduce_mean(x) > 0.0, lambda: tf.nn.relu(tf.matmul(x, self.a)),
                       lambda: tf.tanh(tf.matmul(x, self.b)))


def stateful_gru(steps=5, features=6, units=10):
    inp = L.Input((steps, features), batch_size=1)
    x = L.GRU(units, stateful=True, unroll=True, return_sequences=True)(inp)
    return tf.keras.Model(inp, L.Dense(3)(x))


def rnn_loop(kind="GRU", steps=6, features=5, units=8):
    """A recurrent layer left as a loop (unroll=False): WHILE, or the fused sequence LSTM."""
    inp = L.Input((steps, features), batch_size=1)
    x = getattr(L, kind)(units, return_sequences=True)(inp)
    return tf.keras.Model(inp, L.Dense(4)(x))


def lstm_stack_seq(steps=8, features=6, units=12):
    """Two unrolled LSTMs, both returning their whole sequence, a dense head on every step."""
    inp = L.Input((steps, features))
    x = L.LSTM(units, unroll=True, return_sequences=True)(inp)
    x = L.LSTM(units // 2, unroll=True, return_sequences=True)(x)
    return tf.keras.Model(inp, L.Dense(3)(x))


# ---------------------------------------------------------------- PyTorch-style exports


def torch_resnet_nchw(c=3, size=24, width=12):
    """NCHW in and out, TRANSPOSE around every conv, BatchNorm after each, max pool, a residual."""
    inp = L.Input((c, size, size))
    x = _nchw(L.Conv2D(width, 3, strides=2, padding="same", use_bias=False))(inp)
    x = L.ReLU()(_nchw(L.BatchNormalization())(x))
    x = _nchw(L.MaxPooling2D(2))(x)
    y = L.ReLU()(_nchw(L.Conv2D(width, 3, padding="same"))(x))
    y = _nchw(L.Conv2D(width, 3, padding="same"))(y)
    x = L.ReLU()(L.Add()([x, y]))
    x = L.Lambda(lambda t: tf.reduce_mean(t, axis=[2, 3]))(x)
    return tf.keras.Model(inp, L.Dense(10)(x))


def torch_conv1d_ncw(c=8, length=64):
    """PyTorch Conv1d on (N, C, W): TRANSPOSE, 1-D convs (stride 2, dilation 2), TRANSPOSE back."""
    inp = L.Input((c, length))
    x = L.Permute((2, 1))(inp)
    x = L.Conv1D(16, 5, strides=2, padding="same", activation="relu")(x)
    x = L.Conv1D(16, 3, dilation_rate=2, padding="causal", activation="relu")(x)
    x = L.Permute((2, 1))(x)
    return tf.keras.Model(inp, L.Dense(4)(L.Flatten()(x)))


def torch_hswish_nchw(c=4, size=20):
    inp = L.Input((c, size, size))
    x = _hard_swish(_nchw(L.Conv2D(16, 3, padding="same"))(inp))
    x = _hard_swish(_nchw(L.DepthwiseConv2D(3, strides=2, padding="same"))(x))
    return tf.keras.Model(inp, _nchw(L.Conv2D(8, 1))(x))


# ---------------------------------------------------------------- embeddings and tokens


def embedding_mlp(vocab=50, tokens=12, dim=16):
    inp = L.Input((tokens,), dtype=tf.int32)
    x = L.Embedding(vocab, dim)(inp)
    x = L.LayerNormalization()(x)
    x = L.Dense(dim, activation="gelu")(x)
    return tf.keras.Model(inp, L.Dense(3)(L.GlobalAveragePooling1D()(x)))


def embedding_conv1d(vocab=80, tokens=20, dim=12):
    inp = L.Input((tokens,), dtype=tf.int32)
    x = L.Embedding(vocab, dim)(inp)
    x = L.Conv1D(16, 3, padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Dense(2)(L.GlobalMaxPooling1D()(x)))


def gelu_ln_block(tokens=8, dim=20, approximate=False, norm=True):
    """A transformer MLP block; without LayerNorm for 16x8 (its quantizer has no NEG)."""
    inp = L.Input((tokens, dim))
    x = L.LayerNormalization(epsilon=1e-5)(inp) if norm else inp
    x = _gelu(L.Dense(3 * dim)(x), approximate)
    x = L.Add()([inp, L.Dense(dim)(x)])
    return tf.keras.Model(inp, L.LayerNormalization(epsilon=1e-5)(x) if norm else L.Dense(dim)(x))


# ---------------------------------------------------------------- convolutions


def dw_multiplier(size=18, c=7, mult=3, s=2):
    inp = L.Input((size, size, c))
    x = L.DepthwiseConv2D(3, strides=s, padding="same", depth_multiplier=mult, activation="relu")(inp)
    x = L.DepthwiseConv2D(3, padding="same", depth_multiplier=5 if mult == 1 else 1)(x)
    return tf.keras.Model(inp, L.Conv2D(5, 1)(x))


def conv1d_transpose(length=40, c=6):
    inp = L.Input((length, c))
    x = L.Conv1D(12, 4, strides=3, padding="valid", activation="relu")(inp)
    x = L.Conv1DTranspose(8, 4, strides=2, padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Conv1D(3, 1)(x))


def tconv_decoder(size=6, c=16, k=4, s=2, padding="same"):
    inp = L.Input((size, size, c))
    x = L.Conv2DTranspose(c // 2, k, strides=s, padding=padding, activation="relu")(inp)
    x = L.Conv2DTranspose(4, 3, strides=s + 1, padding="same")(x)
    return tf.keras.Model(inp, L.Conv2D(3, 3, padding="same", activation="sigmoid")(x))


def factorised(size=21, c=13):
    """Inception-style 1x7 / 7x1 pairs with a dilated depthwise branch, prime depths."""
    inp = L.Input((size, size, c))
    a = L.Conv2D(29, (7, 1), padding="same", activation="relu")(L.Conv2D(17, (1, 7), padding="same")(inp))
    b = L.DepthwiseConv2D(3, dilation_rate=3, padding="same")(inp)
    return tf.keras.Model(inp, L.Conv2D(11, 1)(L.Concatenate()([a, b])))


# ---------------------------------------------------------------- odd shapes


def one_by_one_deep(c=211):
    inp = L.Input((1, 1, c))
    x = L.Conv2D(97, 1, activation="relu")(inp)
    x = L.Conv2D(c, 1)(x)
    return tf.keras.Model(inp, L.Add()([inp, x]))


def batched_cnn(batch=2, size=12, c=5):
    inp = L.Input((size, size, c), batch_size=batch)
    x = L.Conv2D(8, 3, padding="same", activation="relu")(inp)
    x = L.AveragePooling2D(2)(x)
    return tf.keras.Model(inp, L.Dense(3)(L.Flatten()(x)))


def batched_dense(batch=3, features=31):
    inp = L.Input((features,), batch_size=batch)
    x = L.Dense(23, activation="relu")(inp)
    return tf.keras.Model(inp, L.Softmax()(L.Dense(5)(x)))


# ---------------------------------------------------------------- shape operators


def split_unpack_mix(size=10, c=15):
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 1)(inp)
    a, b, d = L.Lambda(lambda t: tf.split(t, [3, 5, 7], axis=-1))(x)
    rows = L.Lambda(lambda t: tf.unstack(t, axis=1))(b)
    b = L.Lambda(lambda rs: tf.stack(rs[::2], axis=1))(rows)
    a = L.Lambda(lambda t: t[:, ::2, ::-1, :])(a)
    d = L.Lambda(lambda t: t[:, 1::2, :, 1:6:2])(d)
    return tf.keras.Model(inp, L.Conv2D(4, 1)(L.Concatenate()([a, b, d])))


def reverse_tile(size=8, c=6):
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 3, padding="same")(inp)
    r = L.Lambda(lambda t: tf.reverse(t, axis=[2]))(x)
    t = L.Lambda(lambda v: tf.tile(v[:, :, :1, :], [1, 1, size, 1]))(x)
    return tf.keras.Model(inp, L.Conv2D(4, 1)(L.Add()([r, t])))


# ---------------------------------------------------------------- CPU operators between NPU layers


def cpu_between(size=12, c=8):
    """REDUCE_MAX, SQUARED_DIFFERENCE and L2_NORMALIZATION between convs."""
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 3, padding="same", activation="relu")(inp)
    m = L.Lambda(lambda t: tf.reduce_max(t, axis=-1, keepdims=True))(x)
    d = L.Lambda(lambda tm: tf.math.squared_difference(tm[0], tm[1]))([x, m])
    n = L.Lambda(lambda t: tf.math.l2_normalize(t, axis=-1))(L.Conv2D(c, 1)(d))
    return tf.keras.Model(inp, L.Conv2D(4, 3, padding="same")(n))


def argmax_head(size=10, c=6):
    inp = L.Input((size, size, c))
    x = L.Conv2D(5, 3, padding="same")(inp)
    idx = L.Lambda(lambda t: tf.argmax(t, axis=-1, output_type=tf.int32))(x)
    return tf.keras.Model(inp, [x, idx])


def topk_head(features=40):
    inp = L.Input((features,))
    x = L.Dense(32, activation="relu")(inp)
    v = L.Lambda(lambda t: tf.math.top_k(t, 5).values)(x)
    return tf.keras.Model(inp, L.Dense(3)(v))


def cumsum_mid(size=8, c=6):
    inp = L.Input((size, size, c))
    x = L.Conv2D(c, 3, padding="same")(inp)
    x = L.Lambda(lambda t: tf.math.cumsum(t, axis=2))(x)
    return tf.keras.Model(inp, L.Conv2D(3, 1)(x))


def hswish_mbconv(size=24, c=16):
    """MobileNetV3-style with Keras' own hard_swish activation (HARD_SWISH in the file)."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(c, 3, strides=2, padding="same", activation="hard_swish")(inp)
    y = L.Conv2D(3 * c, 1, activation="hard_swish")(x)
    y = L.DepthwiseConv2D(5, padding="same", activation="hard_swish")(y)
    x = L.Add()([x, L.Conv2D(c, 1)(y)])
    return tf.keras.Model(inp, L.Dense(6)(L.GlobalAveragePooling2D()(x)))


def small_cnn(size=20, c=10):
    inp = L.Input((size, size, 3))
    x = L.Conv2D(c, 3, strides=2, padding="same", activation="relu")(inp)
    x = L.Conv2D(2 * c, 3, padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Dense(4, activation="softmax")(L.Flatten()(L.MaxPooling2D(2)(x))))


OLD_QUANTIZER = {"experimental_new_quantizer": False}
BUFFER_OFFSET = {"_experimental_use_buffer_offset": True}
MODULES = {"ring_kws_stateful": _RingKws, "accumulate3_stateful": _Accumulate3, "while_loop_16": _WhileLoop,
           "if_data_16": _DataIf}

MODELS: dict[str, Spec] = {
    "causal_attn_10x24": Spec("attention", causal_attention),
    "causal_attn_int16_6x16": Spec("attention", lambda: causal_attention(6, 16, norm=False), I16),
    "causal_attn_float_8x16": Spec("attention", lambda: causal_attention(8, 16), FLOAT),
    "mqa_16x32": Spec("attention", multi_query_attention),
    "cross_attn_4x20": Spec("attention", lambda: cross_attention(4, 4)),
    "ring_kws_stateful": Spec("stateful", _RingKws),
    "accumulate3_stateful": Spec("stateful", _Accumulate3),
    "gru_stateful_seq_5x6": Spec("stateful", stateful_gru),
    "gru_loop_6x5": Spec("control_flow", rnn_loop, FLOAT, dynamic_range=True),
    "lstm_fused_6x5": Spec("control_flow", lambda: rnn_loop("LSTM"), FLOAT, dynamic_range=True),
    "while_loop_16": Spec("control_flow", _WhileLoop, FLOAT, dynamic_range=True),
    "if_data_16": Spec("control_flow", _DataIf),
    "lstm_stack_seq_8x6": Spec("recurrent", lstm_stack_seq),
    "lstm_stack_seq_int16_5x4": Spec("recurrent", lambda: lstm_stack_seq(5, 4, 8), I16),
    "torch_resnet_nchw_24": Spec("pytorch", torch_resnet_nchw),
    "torch_resnet_nchw_float_17": Spec("pytorch", lambda: torch_resnet_nchw(3, 17, 8), FLOAT),
    "torch_conv1d_ncw_64": Spec("pytorch", torch_conv1d_ncw),
    "torch_hswish_nchw_20": Spec("pytorch", torch_hswish_nchw),
    "embedding_mlp_12": Spec("embedding", embedding_mlp, int_input_max=50),
    "embedding_conv1d_20": Spec("embedding", embedding_conv1d, int_input_max=80),
    "gelu_erf_ln_8x20": Spec("transformer", gelu_ln_block),
    "gelu_tanh_ln_int16_8x20": Spec("transformer", lambda: gelu_ln_block(8, 20, True, False), I16),
    "hswish_mbconv_24": Spec("activations", hswish_mbconv),
    "dw_mult3_s2_18x7": Spec("depthwise", dw_multiplier),
    "dw_mult5_13x3": Spec("depthwise", lambda: dw_multiplier(13, 3, 1, 1)),
    "conv1d_tconv_40": Spec("conv1d", conv1d_transpose),
    "tconv_k4s2_6": Spec("tconv", tconv_decoder),
    "tconv_k3s3_valid_int16_5": Spec("tconv", lambda: tconv_decoder(5, 8, 3, 3, "valid"), I16),
    "factorised_21x13": Spec("odd_shape", factorised),
    "one_by_one_211": Spec("odd_shape", one_by_one_deep),
    "batch2_cnn_12": Spec("batch", batched_cnn),
    "batch3_dense_float_31": Spec("batch", batched_dense, FLOAT),
    "split_unpack_mix_10": Spec("shape_ops", split_unpack_mix),
    "reverse_tile_8": Spec("shape_ops", reverse_tile),
    "cpu_between_12": Spec("cpu_ops", cpu_between),
    "argmax_head_10": Spec("cpu_ops", argmax_head),
    "topk_head_40": Spec("cpu_ops", topk_head),
    "cumsum_mid_8": Spec("cpu_ops", cumsum_mid),
    "old_quantizer_cnn_20": Spec("converter", small_cnn, variant=OLD_QUANTIZER),
    "old_quantizer_mbconv_24": Spec("converter", hswish_mbconv, variant=OLD_QUANTIZER),
    "buffer_offset_cnn_20": Spec("converter", small_cnn, variant=BUFFER_OFFSET),
    "per_tensor_dense_float_31": Spec("converter", lambda: batched_dense(1, 31), FLOAT,
                                      {"_experimental_disable_per_channel_quantization_for_dense_layers": True}),
    "int16_bias32_cnn_20": Spec("converter", small_cnn, I16,
                                {"_experimental_full_integer_quantization_bias_type": tf.int32}),
}


# ---------------------------------------------------------------- conversion


def _input_specs(model) -> list[tuple[tuple[int, ...], object]]:
    if isinstance(model, tf.Module) and not isinstance(model, tf.keras.Model):
        spec = model.__call__.input_signature
        return [(tuple(s.shape), s.dtype) for s in spec]
    return [(tuple(d or 1 for d in inp.shape), inp.dtype) for inp in model.inputs]


def _representative(specs, rng, int_input_max):
    def data():
        for _ in range(10):
            yield [rng.integers(0, int_input_max, shape).astype(np.int32) if dtype == tf.int32
                   else rng.standard_normal(shape).astype(np.float32) for shape, dtype in specs]
    return data


def convert(name: str, spec: Spec, rng) -> tuple[bytes, list]:
    model = spec.build()
    if inspect.isfunction(model):  # a converter of its own (a SavedModel, a TF1 session)
        return model()
    if isinstance(model, tf.keras.Model):
        converter = tf.lite.TFLiteConverter.from_keras_model(model)
    else:
        converter = tf.lite.TFLiteConverter.from_concrete_functions([model.__call__.get_concrete_function()], model)
    specs = _input_specs(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    if spec.dynamic_range:
        return converter.convert(), [list(s) for s, _ in specs]
    converter.representative_dataset = _representative(specs, rng, spec.int_input_max)
    converter.target_spec.supported_ops = [
        tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8 if spec.io == I16
        else tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = spec.io
    converter.inference_output_type = spec.io
    for key, value in spec.variant.items():
        setattr(converter, key, value)
    return converter.convert(), [list(s) for s, _ in specs]


def main() -> None:
    zoo_main(MODELS, __doc__.splitlines()[0], Path("/tmp/zoo5"), Path(__file__))


def zoo_main(models: dict[str, Spec], description: str, default_out: Path, script: Path) -> None:
    """A zoo generator's program: every network of ``models`` (or ``--only``) each in its own
    process, or the one named converted here."""
    args, manifest_path, manifest = zoo_arguments(description, default_out)
    names = args.only or list(models)
    if len(names) > 1:
        each_in_own_process(names, script, args.out)
        return
    write_models({name: models[name] for name in names}, args.out, manifest_path, manifest)


def each_in_own_process(names: list[str], script: Path, out: Path) -> None:
    """Run SCRIPT once per network (TensorFlow's converter can crash on a loop: a segfault), printing
    each network's line or a FAILED line."""
    for name in names:
        run = subprocess.run([sys.executable, str(script), "--out", str(out), "--only", name], check=False,
                             capture_output=True, text=True)
        lines = [line for line in (run.stdout + run.stderr).splitlines() if line.startswith(name)]
        print("\n".join(lines) or f"{name}: FAILED exit status {run.returncode}", flush=True)


def write_models(models: dict[str, Spec], out: Path, manifest_path: Path, manifest: dict) -> None:
    """Convert each of ``models`` (seeded by its name) to OUT/<name>.tflite and record it in the
    manifest; a network the converter refuses is a FAILED line and the rest go on."""
    for name, spec in models.items():
        tf.keras.utils.set_random_seed(zlib.crc32(name.encode()))
        try:
            data, shapes = convert(name, spec, np.random.default_rng(len(name)))
        except Exception as error:  # noqa: BLE001 - report and go on with the rest of the set
            print(f"{name}: FAILED {type(error).__name__}: {str(error).splitlines()[0][:200]}", file=sys.stderr)
            continue
        (out / f"{name}.tflite").write_bytes(data)
        manifest[name] = {"family": spec.family, "io": str(getattr(spec.io, "name", spec.io)),
                          "variant": sorted(spec.variant), "input": shapes, "ops": op_types(data)}
        print(name, len(data), manifest[name]["ops"], flush=True)
        manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
