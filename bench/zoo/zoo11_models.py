"""The eleventh differential set: networks no earlier zoo holds (issue 25, "networks you have not
seen will be checked the same way"), meant for hardware configs and budgets the other zoos leave
out (bench/scenarios.py ZOO11: ethos-u55-32, ethos-u65-512 in Sram_Only and Dedicated_Sram, arenas
of 16 KiB and of 4 and 8 MiB, Size mode at each).

What the earlier zoos cover (their docstrings): hand-written blocks of most families (zoo, zoo2,
zoo3, /tmp/zoo4..zoo9), PyTorch exports and other writers' quirks (zoo10, zoo10q), NASNet-mobile
and DenseNet-121 from keras.applications for the speed bench only (big_models.py), DS-CNN-L,
the person-detection MobileNet-v1, the anomaly autoencoder and ResNet-8 (zoo8). None holds the
real Keras application code, TFLite Micro's other examples, an attention KWS, or a whole
application network in int16x8.

What is new here:
- keras.applications as Keras writes them, random weights, small inputs: MobileNetV3Small and
  MobileNetV3Large (hard-swish, the real squeeze-excite with its hard-sigmoid, the Rescaling
  preprocessing), MobileNetV3Small minimalistic, EfficientNetB0 and EfficientNetV2B0 (swish SE,
  fused MBConv), and the library's own ConvNeXt, DenseNet and ResNetV2 builders at reduced depths
  (ConvNeXt-Tiny's 28 M and Xception's 21 M weights would take the session; RegNet is not in
  Keras 3);
- TFLite Micro's examples re-created: micro_speech's tiny_conv (49x40 spectrogram, one 10x8
  stride-2 conv, a dense) and magic_wand (128x3 accelerometer, 4x3 and 4x1 convs, max pools);
- keyword spotting: a CRNN (10x4 conv, two unrolled GRUs) and an attention RNN (convs along
  time, an unrolled bidirectional LSTM, a dot-product attention over the frames) and that
  attention head alone (dot_attention_8x6, kept in tests/data/zoo11);
- a whole application network in int16x8 (MobileNetV3Small minimalistic: TensorFlow 2.21 cannot
  quantize HARD_SWISH to 16x8);
- odd shapes: 1x1 spatial maps with 1000+ channels, a 1001-class head on 7x7, width 1 with
  channels 1/3/5, a 1x1x3 input;
- per-tensor quantization with odd zero points: an affine first layer (zero point near -128) and
  a negated ReLU (zero point 127) through per-tensor weights.

Runs with TensorFlow (a tool, never a dependency of npuplan), seeded by name; models under /tmp:
  /work/tfvenv/bin/python bench/zoo/zoo11_models.py [--out /tmp/zoo11] [--only NAME ...]
Writes DIR/<name>.tflite and DIR/manifest.json (family, I/O type, converter variant, operator types).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tensorflow as tf  # noqa: E402
from generate import L  # noqa: E402
from keras.src.applications import convnext, densenet, resnet  # noqa: E402
from zoo5_models import I16, Spec, zoo_main  # noqa: E402

APPS = tf.keras.applications
PER_TENSOR = {"_experimental_disable_per_channel": True}


# ---------------------------------------------------------------- keras.applications


def mnv3_small(size=64, alpha=0.75, minimalistic=False):
    return APPS.MobileNetV3Small(input_shape=(size, size, 3), alpha=alpha, minimalistic=minimalistic, weights=None,
                                 classes=10)


def mnv3_large(size=48, alpha=0.75):
    return APPS.MobileNetV3Large(input_shape=(size, size, 3), alpha=alpha, weights=None, classes=10)


def efficientnet_b0(size=32):
    return APPS.EfficientNetB0(input_shape=(size, size, 3), weights=None, classes=10)


def efficientnet_v2_b0(size=32):
    return APPS.EfficientNetV2B0(input_shape=(size, size, 3), weights=None, classes=10)


def convnext_small(size=32):
    """Keras's ConvNeXt builder (7x7 depthwise, LayerNorm, 4x expand, GELU, layer scale) at depths
    1-1-2-1 and widths 24..192."""
    return convnext.ConvNeXt(depths=[1, 1, 2, 1], projection_dims=[24, 48, 96, 192], input_shape=(size, size, 3),
                             weights=None, classes=10, name="convnext_small")


def densenet_small(size=32):
    """Keras's DenseNet builder with four dense blocks of 1, 2, 2 and 1 layers (growth 32, transitions)."""
    return densenet.DenseNet([1, 2, 2, 1], input_shape=(size, size, 3), weights=None, classes=10, name="densenet_small")


def resnet_v2_small(size=32):
    """Keras's ResNetV2 builder (pre-activation, its 7x7 stride-2 stem and max pool) with two
    stacks of two blocks."""
    def stacks(x):
        x = resnet.stack_residual_blocks_v2(x, 16, 2, name="conv2")
        return resnet.stack_residual_blocks_v2(x, 32, 2, stride1=1, name="conv3")
    return resnet.ResNet(stacks, True, True, name="resnet_v2_small", input_shape=(size, size, 3), weights=None,
                         classes=10)


# ---------------------------------------------------------------- TFLite Micro examples, keyword spotting


def micro_speech():
    """tiny_conv: 49x40x1 -> Conv(8, 10x8, stride 2, relu) -> dense 4 -> softmax."""
    inp = L.Input((49, 40, 1))
    x = L.Conv2D(8, (10, 8), strides=2, padding="same", activation="relu")(inp)
    return tf.keras.Model(inp, L.Softmax()(L.Dense(4)(L.Flatten()(x))))


def magic_wand():
    """128 steps x 3 axes: Conv(8, 4x3) max pool 3, Conv(16, 4x1) max pool (3, 1), dense 16, 4."""
    inp = L.Input((128, 3, 1))
    x = L.MaxPooling2D(3)(L.Conv2D(8, (4, 3), padding="same", activation="relu")(inp))
    x = L.MaxPooling2D((3, 1), padding="same")(L.Conv2D(16, (4, 1), padding="same", activation="relu")(x))
    x = L.Dense(16, activation="relu")(L.Flatten()(x))
    return tf.keras.Model(inp, L.Softmax()(L.Dense(4)(x)))


def kws_crnn(frames=49, mfcc=10):
    """CRNN: Conv(16, 10x4, stride 2x1), frames as a sequence, two unrolled GRUs, dense 12."""
    inp = L.Input((frames, mfcc, 1))
    x = L.Conv2D(16, (10, 4), strides=(2, 1), padding="same", activation="relu")(inp)
    x = L.Reshape((x.shape[1], x.shape[2] * x.shape[3]))(x)
    x = L.GRU(24, return_sequences=True, unroll=True)(x)
    x = L.GRU(24, unroll=True)(x)
    return tf.keras.Model(inp, L.Softmax()(L.Dense(12)(x)))


def kws_attention(frames=16, mfcc=10):
    """Attention RNN: Conv(10, 5x1), Conv(1, 5x1), an unrolled bidirectional LSTM over the frames,
    the middle frame's projection as the query, softmax over frames, the weighted sum, dense 12."""
    inp = L.Input((frames, mfcc, 1))
    x = L.ReLU()(L.BatchNormalization()(L.Conv2D(10, (5, 1), padding="same")(inp)))
    x = L.ReLU()(L.BatchNormalization()(L.Conv2D(1, (5, 1), padding="same")(x)))
    x = L.Reshape((frames, mfcc))(x)
    seq = L.Bidirectional(L.LSTM(16, return_sequences=True, unroll=True))(x)
    query = L.Dense(32)(L.Lambda(lambda t: t[:, frames // 2])(seq))
    scores = L.Softmax()(L.Dot(axes=(2, 1))([seq, query]))
    context = L.Dot(axes=(1, 1))([scores, seq])
    return tf.keras.Model(inp, L.Softmax()(L.Dense(12)(L.Dense(32, activation="relu")(context))))


def dot_attention(frames=8, feats=6):
    """The attention head of ``kws_attention`` alone (tests/data/zoo11): a dense over the frames,
    the middle frame as the query, Keras's Dot layers around a softmax over the frames."""
    inp = L.Input((frames, feats))
    seq = L.Dense(feats, activation="tanh")(inp)
    query = L.Lambda(lambda t: t[:, frames // 2])(seq)
    scores = L.Softmax()(L.Dot(axes=(2, 1))([seq, query]))
    return tf.keras.Model(inp, L.Dense(3)(L.Dot(axes=(1, 1))([scores, seq])))


# ---------------------------------------------------------------- odd shapes and zero points


def spatial_1x1(c=1000):
    """A 1x1x64 map: 1x1 convs to 1000 and 1280 channels, a dense to 1000, softmax."""
    inp = L.Input((1, 1, 64))
    x = L.Conv2D(c, 1, activation="relu")(inp)
    x = L.Conv2D(1280, 1, activation="relu")(x)
    return tf.keras.Model(inp, L.Softmax()(L.Dense(c)(L.Flatten()(x))))


def head_1001(size=7, c=96):
    """A classifier head on 7x7x96: 1x1 conv to 1001, global average pool, reshape, softmax."""
    inp = L.Input((size, size, c))
    x = L.GlobalAveragePooling2D(keepdims=True)(L.Conv2D(1001, 1)(inp))
    return tf.keras.Model(inp, L.Softmax()(L.Reshape((1001,))(x)))


def width1(height=40):
    """Width 1: (3, 1) convs on 5 channels, then 1, then 3, a residual, a (2, 1) max pool."""
    inp = L.Input((height, 1, 5))
    x = L.Conv2D(5, (3, 1), padding="same", activation="relu")(inp)
    y = L.Conv2D(1, (5, 1), padding="same", activation="relu")(x)
    y = L.Conv2D(5, (3, 1), padding="same")(L.Conv2D(3, (3, 1), padding="same", activation="relu")(y))
    x = L.MaxPooling2D((2, 1))(L.Add()([x, y]))
    return tf.keras.Model(inp, L.Dense(3)(L.Flatten()(x)))


def pixel_input():
    """A 1x1x3 input (one pixel): dense 1024 -> 5 through 1x1 convs."""
    inp = L.Input((1, 1, 3))
    x = L.Conv2D(1024, 1, activation="relu")(inp)
    return tf.keras.Model(inp, L.Conv2D(5, 1)(x))


def odd_zero_points(size=24):
    """Per-tensor weights; an affine first layer ([-0.2, 7] after it: zero point near -124), a
    negated ReLU (all <= 0: zero point 127), a depthwise and a residual add across the two."""
    inp = L.Input((size, size, 3))
    x = L.Lambda(lambda t: tf.sigmoid(t) * 7.2 - 0.2)(inp)
    x = L.Conv2D(12, 3, padding="same", activation="relu6")(x)
    neg = L.Lambda(lambda t: -tf.nn.relu(t))(L.Conv2D(12, 3, strides=2, padding="same")(x))
    y = L.DepthwiseConv2D(3, padding="same")(neg)
    x = L.Add()([y, L.Conv2D(12, 1, strides=2)(x)])
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(x)))


MODELS: dict[str, Spec] = {
    "k_mnv3_small_64": Spec("keras_app", mnv3_small),
    "k_mnv3_small_min_64": Spec("keras_app", lambda: mnv3_small(minimalistic=True)),
    "k_mnv3_large_48": Spec("keras_app", mnv3_large),
    "k_efficientnet_b0_32": Spec("keras_app", efficientnet_b0),
    "k_efficientnet_v2_b0_32": Spec("keras_app", efficientnet_v2_b0),
    "k_convnext_small_32": Spec("keras_app", convnext_small),
    "k_densenet_small_32": Spec("keras_app", densenet_small),
    "k_resnet_v2_small_32": Spec("keras_app", resnet_v2_small),
    "k_mnv3_small_min_int16_32": Spec("keras_app", lambda: mnv3_small(32, minimalistic=True), I16),
    "tflm_micro_speech_49x40": Spec("tflm", micro_speech),
    "tflm_magic_wand_128x3": Spec("tflm", magic_wand),
    "kws_crnn_49x10": Spec("kws", kws_crnn),
    "kws_attention_16x10": Spec("kws", kws_attention),
    "dot_attention_8x6": Spec("kws", dot_attention),
    "spatial_1x1_1000": Spec("odd_shape", spatial_1x1),
    "head_1001_7x7": Spec("odd_shape", head_1001),
    "width1_40x1x5": Spec("odd_shape", width1),
    "pixel_1x1x3": Spec("odd_shape", pixel_input),
    "odd_zero_points_24": Spec("quant", odd_zero_points, variant=PER_TENSOR),
}


def main() -> None:
    zoo_main(MODELS, __doc__.splitlines()[0], Path("/tmp/zoo11"), Path(__file__))


if __name__ == "__main__":
    main()
