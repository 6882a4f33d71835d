"""Single-operator networks (and small networks around one) for the operators Vela's default core
runs on the NPU and npuplan used to leave on the CPU (issue 25): patchify convolutions (a height
stride above 3, kernel = stride: ViT/ConvNeXt/Swin stems), overlapping ones (PoolFormer/SegFormer
stems) and SLICEs at batch offsets (a PyTorch export's fused QKV).

Run with a Python that has TensorFlow (a tool, never a dependency of npuplan):
  /work/tfvenv/bin/python bench/zoo/ops11_models.py --out /tmp/ops11_models [--only NAME ...]
Seeded by name (zoo5_models.write_models); full-integer int8 post-training quantization.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from generate import L  # noqa: E402
from zoo5_models import Spec, zoo_main  # noqa: E402


def patchify(size=32, channels=3, patch=4, filters=16, padding="valid", act="relu"):
    """One CONV_2D of kernel = stride = ``patch``: the image cut into non-overlapping patches."""
    inp = L.Input((size, size, channels))
    return tf.keras.Model(inp, L.Conv2D(filters, patch, strides=patch, padding=padding, activation=act)(inp))


def overlapping_stem(size=32, channels=3, kernel=7, stride=4, filters=16, padding="same"):
    """PoolFormer/SegFormer's overlapping patch embedding: a CONV_2D of kernel above its stride 4."""
    inp = L.Input((size, size, channels))
    return tf.keras.Model(inp, L.Conv2D(filters, kernel, strides=stride, padding=padding, activation="relu")(inp))


def vit_stem(size=64, patch=16, dim=48, classes=10):
    """A ViT-style stem: 16x16 patches, tokens, a dense mixer on each token, the mean token."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(dim, patch, strides=patch)(inp)
    tokens = L.Reshape(((size // patch) ** 2, dim))(x)
    x = L.Add()([tokens, L.Dense(dim, activation="relu")(tokens)])
    return tf.keras.Model(inp, L.Dense(classes)(L.GlobalAveragePooling1D()(x)))


def convnext_stem(size=32, dim=24):
    """A ConvNeXt-style stem: 4x4 stride-4 patches, a 7x7 depthwise convolution, a pointwise MLP."""
    inp = L.Input((size, size, 3))
    x = L.Conv2D(dim, 4, strides=4)(inp)
    y = L.DepthwiseConv2D(7, padding="same")(x)
    y = L.Conv2D(dim, 1)(L.Conv2D(dim * 2, 1, activation="gelu")(y))
    return tf.keras.Model(inp, L.Add()([x, y]))


def perm_shape(shape, perm):
    return tuple(shape[p] for p in perm)


def qkv_slices(tokens=16, dim=32, use_slice=True, rank=3, combine="add"):
    """A fused QKV projection cut into its three heads along the leading axis, as PyTorch exports
    it: (tokens, 3, dim) -> (3, tokens, dim), then SLICEs at offsets 0, 1, 2 of that axis (with
    ``rank`` 4, (3, tokens, 1, dim): offsets in the batch, as pt_attention_16x32's). ``combine``
    "max": the heads' elementwise maximum is the output (no rounding: the slices' bytes as read)."""
    inp = L.Input((tokens, dim))
    shape, perm = ((tokens, 3, dim), (1, 0, 2)) if rank == 3 else ((tokens, 1, 3, dim), (2, 0, 1, 3))
    qkv = L.Lambda(lambda t: tf.transpose(tf.reshape(t, shape), perm))(L.Dense(3 * dim)(inp))
    size = (1, *perm_shape(shape, perm)[1:])
    if use_slice:
        q, k, v = (L.Lambda(lambda t, i=i: tf.slice(t, (i,) + (0,) * (rank - 1), size))(qkv) for i in range(3))
    else:
        q, k, v = (L.Lambda(lambda t, i=i: t[i:i + 1])(qkv) for i in range(3))
    if combine == "max":
        return tf.keras.Model(inp, L.Maximum()([L.Maximum()([q, k]), v]))
    return tf.keras.Model(inp, L.Dense(dim)(L.Add()([L.Add()([q, k]), v])))


def matmul(tokens=16, dim=32, adj_x=False, constant=False):
    """A BATCH_MATMUL of a transposed first operand (``adj_x``) or of a constant second operand."""
    inp = L.Input((tokens, dim))
    x = L.Dense(dim)(inp)
    if constant:
        weights = tf.constant(np.random.default_rng(0).standard_normal((1, dim, 8)).astype(np.float32))
        return tf.keras.Model(inp, L.Lambda(lambda t: tf.matmul(t, tf.tile(weights, (tf.shape(t)[0], 1, 1))))(x))
    return tf.keras.Model(inp, L.Lambda(lambda t: tf.matmul(t, t, transpose_a=adj_x))(x))


MODELS: dict[str, Spec] = {
    "op_patchify_4x4": Spec("patchify", lambda: patchify()),
    "op_patchify_8x8_same": Spec("patchify", lambda: patchify(32, 8, 8, 32, "same", None)),
    "op_patchify_4x8_rect": Spec("patchify", lambda: patchify(16, 4, (4, 8), 8)),
    "vit_stem_64": Spec("patchify", lambda: vit_stem()),
    "op_overlap_7x7_s4": Spec("strided", lambda: overlapping_stem()),
    "op_overlap_5x5_s4_valid": Spec("strided", lambda: overlapping_stem(30, 8, 5, 4, 8, "valid")),
    "op_overlap_7x7_s5_odd": Spec("strided", lambda: overlapping_stem(27, 3, 7, 5, 8)),
    "convnext_stem_32": Spec("patchify", lambda: convnext_stem()),
    "qkv_slices_16x32": Spec("slices", lambda: qkv_slices()),
    "op_bmm_adj_x": Spec("matmul", lambda: matmul(16, 16, adj_x=True)),
    "op_bmm_constant": Spec("matmul", lambda: matmul(constant=True)),
    "qkv_strided_slices_16x32": Spec("slices", lambda: qkv_slices(use_slice=False)),
    "qkv_batch_slices_16x32": Spec("slices", lambda: qkv_slices(rank=4)),
    "qkv_batch_strided_slices_16x32": Spec("slices", lambda: qkv_slices(use_slice=False, rank=4)),
    "qkv_batch_max_16x32": Spec("slices", lambda: qkv_slices(rank=4, combine="max")),
}


def main() -> None:
    zoo_main(MODELS, __doc__.splitlines()[0], Path("/tmp/ops11_models"), Path(__file__))


if __name__ == "__main__":
    main()
