"""The third differential set (``generate.py --set unseen``): architectures and operator patterns
neither the first zoo (FAMILIES) nor the hold-out set (HOLDOUT) holds, for judging npuplan on
networks it was never tuned on. Written to its own directory (e.g. /work/zoo3).

What is new here: MobileNetV3 blocks (hard-swish, hard-sigmoid squeeze-excite), GhostNet modules
(cheap depthwise + concat), SPP (max pools 5/9/13 same-padded + concat), FPN / PAN necks, ASPP with
dilated branches and a bilinear resize back to the input size, depthwise kernels of 7 and 9 and
non-square ones, CRNN and keyword-spotting front ends (1-channel spectrograms, 10x4 kernels with
stride 2x1), a ViT patch embedding with a class token and explicit q.k^T attention, YOLOv5's focus
(SPACE_TO_DEPTH) and ESPCN's pixel shuffle (DEPTH_TO_SPACE), reflect-padded residual blocks, a
per-tensor quantized network, a siamese network with two inputs and three outputs, 1x1 maps and a
tall map. Imported by generate.py only when this set is asked for.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from generate import L, _conv_bn, single

# ---------------------------------------------------------------- blocks


def _hswish(x):
    return L.Multiply()([x, L.Lambda(lambda t: tf.nn.relu6(t + 3.0) / 6.0)(x)])


def _hsigmoid_se(x, ratio=4):
    c = x.shape[-1]
    s = L.GlobalAveragePooling2D(keepdims=True)(x)
    s = L.Conv2D(max(c // ratio, 8), 1, activation="relu")(s)
    s = L.Lambda(lambda t: tf.nn.relu6(t + 3.0) / 6.0)(L.Conv2D(c, 1)(s))
    return L.Multiply()([x, s])


def _bneck(x, expand, out, k=3, s=1, se=False, hs=False):
    """MobileNetV3 bottleneck: expand 1x1, depthwise k x k, optional SE, project 1x1."""
    inp, c = x, x.shape[-1]
    act = _hswish if hs else (lambda t: L.ReLU()(t))
    y = act(L.BatchNormalization()(L.Conv2D(expand, 1, use_bias=False)(x)))
    y = act(L.BatchNormalization()(L.DepthwiseConv2D(k, s, padding="same", use_bias=False)(y)))
    if se:
        y = _hsigmoid_se(y)
    y = L.BatchNormalization()(L.Conv2D(out, 1, use_bias=False)(y))
    return L.Add()([inp, y]) if s == 1 and c == out else y


def _ghost(x, out, relu=True):
    """Ghost module: a 1x1 conv makes half the channels, a cheap 3x3 depthwise the other half."""
    primary = L.Conv2D(out // 2, 1, activation="relu" if relu else None)(x)
    cheap = L.DepthwiseConv2D(3, padding="same", activation="relu" if relu else None)(primary)
    return L.Concatenate()([primary, cheap])


# ---------------------------------------------------------------- families


def mobilenet_v3(size=64, width=16, blocks=((64, 24, 3, 2, False, False), (72, 24, 3, 1, False, False),
                                             (96, 40, 5, 2, True, True), (120, 40, 5, 1, True, True))):
    inp = L.Input((size, size, 3))
    x = _hswish(L.Conv2D(width, 3, strides=2, padding="same")(inp))
    for expand, out, k, s, se, hs in blocks:
        x = _bneck(x, expand, out, k, s, se, hs)
    x = _hswish(L.Conv2D(blocks[-1][0], 1)(x))
    x = L.GlobalAveragePooling2D(keepdims=True)(x)
    x = _hswish(L.Conv2D(64, 1)(x))
    return tf.keras.Model(inp, L.Flatten()(L.Conv2D(10, 1)(x)))


def ghostnet(size=48, width=16, stages=(24, 40)):
    inp = L.Input((size, size, 3))
    x = L.Conv2D(width, 3, strides=2, padding="same", activation="relu")(inp)
    for out in stages:
        y = _ghost(x, out * 2)
        y = L.DepthwiseConv2D(3, strides=2, padding="same")(y)
        y = _ghost(y, out, relu=False)
        shortcut = L.Conv2D(out, 1)(L.DepthwiseConv2D(3, strides=2, padding="same")(x))
        x = L.Add()([y, shortcut])
    return tf.keras.Model(inp, L.Dense(10)(L.GlobalAveragePooling2D()(x)))


def yolo_spp(size=32, width=32, pools=(5, 9, 13)):
    inp = L.Input((size, size, 3))
    x = _conv_bn(inp, width // 2, 3, 2, act="leaky")
    x = _conv_bn(x, width, 3, 2, act="leaky")
    x = _conv_bn(x, width // 2, 1, act="leaky")
    x = L.Concatenate()([x] + [L.MaxPooling2D(p, 1, padding="same")(x) for p in pools])
    x = _conv_bn(x, width, 1, act="leaky")
    return tf.keras.Model(inp, L.Conv2D(3 * 7, 1)(x))


def fpn(size=64, width=16, merge="add", pan=False):
    """A backbone at strides 4/8/16, a top-down path (nearest upsample + add or concat), and for PAN
    a bottom-up path (stride-2 convs) back; one head per scale."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(width, 3, strides=2, padding="same", activation="relu")(inp)
    feats = []
    for i in range(3):
        x = L.Conv2D(width * 2 ** i, 3, strides=2, padding="same", activation="relu")(x)
        feats.append(L.Conv2D(width, 1)(x))
    top = [feats[-1]]
    for f in reversed(feats[:-1]):
        up = L.UpSampling2D(2)(top[-1])
        y = L.Add()([f, up]) if merge == "add" else L.Conv2D(width, 1)(L.Concatenate()([f, up]))
        top.append(L.Conv2D(width, 3, padding="same", activation="relu")(y))
    outs = top[::-1]
    if pan:
        down = [outs[0]]
        for f in outs[1:]:
            d = L.Conv2D(width, 3, strides=2, padding="same", activation="relu")(down[-1])
            down.append(L.Add()([f, d]))
        outs = down
    return tf.keras.Model(inp, [L.Conv2D(6, 1)(o) for o in outs])


def aspp(size=32, width=16, rates=(2, 4, 6)):
    """DeepLab-ish: a stride-8 backbone, dilated 3x3 branches, an image-pooling branch broadcast
    back, concat, 1x1, bilinear resize to the input size."""
    inp = L.Input((size, size, 3))
    x = inp
    for i in range(3):
        x = L.Conv2D(width, 3, strides=2, padding="same", activation="relu")(x)
    s = x.shape[1]
    branches = [L.Conv2D(width, 1, activation="relu")(x)]
    branches += [L.Conv2D(width, 3, padding="same", dilation_rate=r, activation="relu")(x) for r in rates]
    pooled = L.Conv2D(width, 1, activation="relu")(L.GlobalAveragePooling2D(keepdims=True)(x))
    branches.append(L.UpSampling2D(s)(pooled))
    x = L.Conv2D(width, 1, activation="relu")(L.Concatenate()(branches))
    x = L.Conv2D(4, 1)(x)
    return tf.keras.Model(inp, L.Resizing(size, size, "bilinear")(x))


def large_dw(size=33, channels=16, k=7, s=2, padding="same"):
    inp = L.Input((size, size, 3))
    x = L.Conv2D(channels, 3, padding="same", activation="relu6")(inp)
    x = L.DepthwiseConv2D(k, strides=s, padding=padding, activation="relu6")(x)
    x = L.Conv2D(channels * 2, 1, activation="relu6")(x)
    x = L.DepthwiseConv2D(k, padding="same")(x)
    return tf.keras.Model(inp, L.Conv2D(5, 1)(x))


def crnn(frames=49, bins=40, width=16, units=32):
    """Audio CRNN without the recurrence: conv on a 1-channel spectrogram, the map reshaped to
    (time, features), dense layers over time, a pooled classifier."""
    inp = L.Input((frames, bins, 1))
    x = L.Conv2D(width, (3, 3), padding="same", activation="relu")(inp)
    x = L.MaxPooling2D((1, 2))(x)
    x = L.Conv2D(width * 2, (3, 3), strides=(1, 2), padding="same", activation="relu")(x)
    t, f, c = x.shape[1:]
    x = L.Reshape((t, f * c))(x)
    x = L.Dense(units, activation="tanh")(x)
    x = L.Dense(units, activation="relu")(x)
    return tf.keras.Model(inp, L.Dense(12, activation="softmax")(L.GlobalAveragePooling1D()(x)))


def kws_cnn(frames=49, bins=10, width=28, kernel=(10, 4), strides=(2, 1), ds=False):
    """Keyword spotting: a 10x4 kernel with stride 2x1 on a 1-channel MFCC map, then either plain
    convs or depthwise-separable blocks (DS-CNN)."""
    inp = L.Input((frames, bins, 1))
    x = L.Conv2D(width, kernel, strides=strides, padding="same", activation="relu")(inp)
    for _ in range(2):
        if ds:
            x = L.DepthwiseConv2D(3, padding="same", activation="relu")(x)
            x = L.Conv2D(width, 1, activation="relu")(x)
        else:
            x = L.Conv2D(width, (5, 3), padding="valid", activation="relu")(x)
    x = L.AveragePooling2D(x.shape[1:3])(x)
    return tf.keras.Model(inp, L.Dense(12)(L.Flatten()(x)))


def act_mix(size=24, width=12):
    """Activations the other sets do not chain: ELU, tanh-approximated GELU, ReLU_N1_to_1, ReLU6."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(width, 3, padding="same", activation="elu")(inp)
    x = L.Conv2D(width, 3, padding="same")(x)
    x = L.Lambda(lambda t: tf.nn.gelu(t, approximate=True))(x)
    x = L.Lambda(lambda t: tf.clip_by_value(t, -1.0, 1.0))(L.Conv2D(width, 1)(x))
    x = L.Conv2D(width, 3, padding="same", activation="relu6")(x)
    return tf.keras.Model(inp, L.Conv2D(3, 1, activation="tanh")(x))


def vit(size=32, patch=8, dim=32, tokens_mlp=2):
    """ViT: patch embedding, class token concatenated along tokens, layer norm, single-head
    attention written as batch matmuls, softmax on the last axis, MLP, the class token out."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(dim, patch, strides=patch)(inp)
    n = (size // patch) ** 2
    x = L.Reshape((n, dim))(x)
    cls = L.Lambda(lambda t: tf.reduce_mean(t, axis=1, keepdims=True))(x)
    x = L.Concatenate(axis=1)([cls, x])
    y = L.LayerNormalization()(x)
    q, k, v = L.Dense(dim)(y), L.Dense(dim)(y), L.Dense(dim)(y)
    a = L.Lambda(lambda qk: tf.matmul(qk[0], qk[1], transpose_b=True) / np.sqrt(dim))([q, k])
    a = L.Softmax(axis=-1)(a)
    x = L.Add()([x, L.Lambda(lambda av: tf.matmul(av[0], av[1]))([a, v])])
    y = L.Dense(dim * tokens_mlp, activation="gelu")(L.LayerNormalization()(x))
    x = L.Add()([x, L.Dense(dim)(y)])
    return tf.keras.Model(inp, L.Dense(10)(L.Lambda(lambda t: t[:, 0, :])(x)))


def fc_3d(shape=(4, 6, 10), units=(24, 7)):
    """Dense layers on a 3-D (rank-4 with batch) input: FULLY_CONNECTED over the last axis."""
    inp = L.Input(shape)
    x = inp
    for u in units:
        x = L.Dense(u, activation="relu")(x)
    return tf.keras.Model(inp, x)


def odd_channels(size=20, widths=(5, 7, 20, 33)):
    """Channel counts off the 8/16 grid in residual and depthwise blocks on a 3-channel input."""
    inp = L.Input((size, size, 3))
    x = inp
    for w in widths:
        y = L.Conv2D(w, 3, padding="same", activation="relu")(x)
        y = L.DepthwiseConv2D(3, padding="same")(y)
        x = L.Add()([y, L.Conv2D(w, 1)(x)])
    return tf.keras.Model(inp, L.Conv2D(3, 1)(x))


def valid_s2_chain(size=45, width=12, steps=3):
    """Stride-2 VALID convs and pools on odd sizes (45 -> 22 -> 10 ...)."""
    inp = L.Input((size, size, 3))
    x = inp
    for i in range(steps):
        x = L.Conv2D(width + 4 * i, 3, strides=2, padding="valid", activation="relu")(x)
        x = L.DepthwiseConv2D(3, padding="valid")(x) if i == 1 else x
    x = L.MaxPooling2D(3, 2, padding="valid")(x)
    return tf.keras.Model(inp, L.Conv2D(4, 1)(x))


def reflect_resnet(size=32, width=16, blocks=2):
    """Style-transfer residual blocks: REFLECT padding then VALID 3x3 convs."""
    inp = L.Input((size, size, 3))
    pad = L.Lambda(lambda t: tf.pad(t, [[0, 0], [1, 1], [1, 1], [0, 0]], "REFLECT"))
    x = L.Conv2D(width, 3, strides=2, padding="same", activation="relu")(inp)
    for _ in range(blocks):
        y = L.Conv2D(width, 3, activation="relu")(pad(x))
        y = L.Conv2D(width, 3)(pad(y))
        x = L.Add()([x, y])
    return tf.keras.Model(inp, L.Conv2D(3, 1, activation="tanh")(x))


def focus(size=64, width=16):
    """YOLOv5 focus: SPACE_TO_DEPTH on the input, then convs."""
    inp = L.Input((size, size, 3))
    x = L.Lambda(lambda t: tf.nn.space_to_depth(t, 2))(inp)
    x = L.Conv2D(width, 3, padding="same", activation="relu")(x)
    x = L.Conv2D(width * 2, 3, strides=2, padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Conv2D(8, 1)(x))


def espcn(size=24, width=16, scale=2, channels=1):
    """ESPCN super-resolution: convs then pixel shuffle (DEPTH_TO_SPACE)."""
    inp = L.Input((size, size, channels))
    x = L.Conv2D(width * 2, 5, padding="same", activation="tanh")(inp)
    x = L.Conv2D(width, 3, padding="same", activation="tanh")(x)
    x = L.Conv2D(channels * scale * scale, 3, padding="same")(x)
    return tf.keras.Model(inp, L.Lambda(lambda t: tf.nn.depth_to_space(t, scale))(x))


def siamese(size=16, channels=3, width=12):
    """Two inputs through shared weights; three outputs (difference map, concat head, pooled)."""
    a, b = L.Input((size, size, channels)), L.Input((size, size, channels))
    c1 = L.Conv2D(width, 3, padding="same", activation="relu")
    c2 = L.Conv2D(width, 3, strides=2, padding="same", activation="relu")
    fa, fb = c2(c1(a)), c2(c1(b))
    diff = L.Subtract()([fa, fb])
    cat = L.Conv2D(4, 1)(L.Concatenate()([fa, fb]))
    pooled = L.GlobalMaxPooling2D()(L.Multiply()([fa, fb]))
    return tf.keras.Model([a, b], [diff, cat, pooled])


def pointwise_1x1(channels=64, hidden=(96, 48)):
    """A 1x1 map: 1x1 convs with an SE gate, then a depthwise on the single pixel."""
    inp = L.Input((1, 1, channels))
    x = inp
    for h in hidden:
        x = _hswish(L.Conv2D(h, 1)(x))
    x = _hsigmoid_se(x)
    x = L.DepthwiseConv2D(3, padding="same")(x)
    return tf.keras.Model(inp, L.Conv2D(10, 1)(x))


def tall(h=256, w=6, width=12):
    inp = L.Input((h, w, 2))
    x = L.Conv2D(width, (5, 3), strides=(2, 1), padding="same", activation="relu")(inp)
    x = L.DepthwiseConv2D((7, 1), strides=(2, 1), padding="same", activation="relu")(x)
    x = L.Conv2D(width * 2, 3, padding="same", activation="relu")(x)
    x = L.MaxPooling2D((4, 1))(x)
    return tf.keras.Model(inp, L.Conv2D(4, 1)(x))


def hourglass(size=48, width=12, depth=2):
    """Encoder-decoder with residual adds (not concats) at each scale and bilinear upsampling."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(width, 3, padding="same", activation="relu")(inp)
    skips = []
    for _ in range(depth):
        skips.append(L.Conv2D(width, 1, activation="relu")(x))
        x = L.Conv2D(width, 3, strides=2, padding="same", activation="relu")(x)
    for skip in reversed(skips):
        x = L.Add()([skip, L.UpSampling2D(2, interpolation="bilinear")(x)])
        x = L.Conv2D(width, 3, padding="same", activation="relu")(x)
    return tf.keras.Model(inp, L.Conv2D(4, 1, activation="sigmoid")(x))


def pad_pool(size=28, width=16):
    """Explicit PAD before VALID pools and convs (Keras ZeroPadding2D of 2 and 3)."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(width, 3, padding="same", activation="relu")(inp)
    x = L.MaxPooling2D(3, 2)(L.ZeroPadding2D(1)(x))
    x = L.Conv2D(width, 5, activation="relu")(L.ZeroPadding2D(((2, 3), (3, 2)))(x))
    x = L.AveragePooling2D(2)(x)
    return tf.keras.Model(inp, L.Conv2D(4, 1)(x))


def multi_head_bmm(tokens=16, dim=32, heads=2):
    """Attention with the head axis kept in rank-4 batch matmuls (reshape + transpose per head)."""
    inp = L.Input((tokens, dim))
    d = dim // heads

    def split(t):
        return tf.transpose(tf.reshape(t, (-1, tokens, heads, d)), (0, 2, 1, 3))

    q, k, v = (L.Lambda(split)(L.Dense(dim)(inp)) for _ in range(3))
    a = L.Softmax(axis=-1)(L.Lambda(lambda qk: tf.matmul(qk[0], qk[1], transpose_b=True) / np.sqrt(d))([q, k]))
    o = L.Lambda(lambda av: tf.matmul(av[0], av[1]))([a, v])
    o = L.Lambda(lambda t: tf.reshape(tf.transpose(t, (0, 2, 1, 3)), (-1, tokens, dim)))(o)
    return tf.keras.Model(inp, L.Dense(dim)(o))


def _concat_uneven_h(x):
    return tf.concat([x[:, :3], x, x[:, 5:]], axis=1)


UNSEEN = {
    "mnv3_64": ("mobilenet_v3", lambda: mobilenet_v3(64, 16)),
    "mnv3_96_small": ("mobilenet_v3", lambda: mobilenet_v3(96, 8, ((16, 16, 3, 2, True, False), (72, 24, 3, 2, False, False),
                                                                  (88, 24, 3, 1, False, False), (96, 40, 5, 2, True, True)))),
    "mnv3_40_wide": ("mobilenet_v3", lambda: mobilenet_v3(40, 32, ((128, 48, 3, 1, True, True), (144, 48, 5, 1, True, True)))),
    "ghost_48": ("ghostnet", lambda: ghostnet(48, 16, (24, 40))),
    "ghost_64w24": ("ghostnet", lambda: ghostnet(64, 24, (32, 48))),
    "yolo_spp_64": ("yolo_spp", lambda: yolo_spp(64, 32)),
    "yolo_spp_80": ("yolo_spp", lambda: yolo_spp(80, 24, (3, 5, 7))),
    "fpn_add_64": ("fpn", lambda: fpn(64, 16, "add")),
    "fpn_concat_48": ("fpn", lambda: fpn(48, 12, "concat")),
    "pan_64": ("fpn", lambda: fpn(64, 16, "add", pan=True)),
    "aspp_32": ("aspp", lambda: aspp(32, 16, (2, 4))),
    "aspp_48": ("aspp", lambda: aspp(48, 24, (2, 3, 5))),
    "dw7_s2_33": ("large_dw", lambda: large_dw(33, 16, 7, 2)),
    "dw9_s1_24": ("large_dw", lambda: large_dw(24, 8, 9, 1)),
    "dw5_valid_s2_31": ("large_dw", lambda: large_dw(31, 12, 5, 2, "valid")),
    "dw_3x7_s1_20": ("large_dw", lambda: large_dw(20, 16, (3, 7), 1)),
    "crnn_49x40": ("crnn", lambda: crnn(49, 40, 16, 32)),
    "crnn_98x20": ("crnn", lambda: crnn(98, 20, 8, 24)),
    "kws_cnn_49x10": ("kws", lambda: kws_cnn(49, 10, 28, (10, 4), (2, 1))),
    "kws_dscnn_49x10": ("kws", lambda: kws_cnn(49, 10, 64, (10, 4), (2, 2), ds=True)),
    "kws_cnn_99x13": ("kws", lambda: kws_cnn(99, 13, 20, (10, 4), (2, 1))),
    "act_mix_24": ("activations", lambda: act_mix(24, 12)),
    "act_mix_40w20": ("activations", lambda: act_mix(40, 20)),
    "vit_32p8": ("vit", lambda: vit(32, 8, 32)),
    "vit_48p12": ("vit", lambda: vit(48, 12, 24, 3)),
    "mha_bmm_16x32": ("attention", lambda: multi_head_bmm(16, 32, 2)),
    "fc_3d_4x6x10": ("fc_3d", lambda: fc_3d((4, 6, 10), (24, 7))),
    "fc_3d_2x9x33": ("fc_3d", lambda: fc_3d((2, 9, 33), (20,))),
    "odd_ch_20": ("odd_channels", lambda: odd_channels(20, (5, 7, 20, 33))),
    "valid_s2_45": ("valid_stride", lambda: valid_s2_chain(45, 12, 3)),
    "valid_s2_63": ("valid_stride", lambda: valid_s2_chain(63, 8, 3)),
    "reflect_res_32": ("reflect_pad", lambda: reflect_resnet(32, 16, 2)),
    "focus_64": ("space_to_depth", lambda: focus(64, 16)),
    "espcn_24": ("depth_to_space", lambda: espcn(24, 16, 2, 1)),
    "espcn_16_x3": ("depth_to_space", lambda: espcn(16, 8, 3, 3)),
    "siamese_16": ("multi_io", lambda: siamese(16, 3, 12)),
    "pointwise_1x1": ("tiny_map", lambda: pointwise_1x1(64, (96, 48))),
    "tall_256x6": ("odd_shapes", lambda: tall(256, 6, 12)),
    "hourglass_48": ("hourglass", lambda: hourglass(48, 12, 2)),
    "pad_pool_28": ("padding", lambda: pad_pool(28, 16)),
    "per_tensor_mnv3_48": ("per_tensor", lambda: mobilenet_v3(48, 16)),
    "large_mnv3_160": ("mobilenet_v3", lambda: mobilenet_v3(160, 8, ((16, 16, 3, 2, True, False), (48, 24, 3, 2, False, False),
                                                                    (72, 24, 5, 2, True, True)))),
    "op_space_to_depth": ("single", lambda: single(lambda x: tf.nn.space_to_depth(x, 2), (16, 16, 6))),
    "op_concat_uneven_h": ("single", lambda: single(_concat_uneven_h, (12, 10, 8))),
    "op_maxpool_13_same": ("single", lambda: single(L.MaxPooling2D(13, 1, padding="same"), (16, 16, 8))),
    "op_resize_to_27": ("single", lambda: single(L.Resizing(27, 27, "bilinear"), (9, 9, 8))),
    "op_resize_align": ("single", lambda: single(lambda x: tf.compat.v1.image.resize_bilinear(x, (15, 15), align_corners=True),
                                                 (8, 8, 8))),
    "op_elu": ("single", lambda: single(tf.nn.elu, (12, 12, 16))),
    "op_gelu_tanh": ("single", lambda: single(lambda x: tf.nn.gelu(x, approximate=True), (10, 10, 16))),
    "op_sub_bcast_channel": ("single", lambda: single(lambda x: x - x[:, :, :, :1], (10, 12, 9))),
    "op_square": ("single", lambda: single(lambda x: x * x, (14, 14, 8))),
    "op_mean_hw_nokeep": ("single", lambda: single(lambda x: tf.reduce_mean(x, axis=[1, 2]), (7, 9, 20))),
    "op_pad_large": ("single", lambda: single(lambda x: tf.pad(x, [[0, 0], [3, 4], [5, 2], [0, 0]]), (10, 10, 8))),
    "op_dw_mult4": ("single", lambda: single(L.DepthwiseConv2D(3, padding="same", depth_multiplier=4), (12, 12, 4))),
}
PER_TENSOR = {name for name, (family, _) in UNSEEN.items() if family == "per_tensor"}
