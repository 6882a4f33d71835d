"""The layer kinds of the random generator's second generation (bench/random_graphs.py): the rest of
the operator types npuplan lowers (FULLY_CONNECTED, reductions, SOFTMAX, reshapes, TRANSPOSE,
MIRROR_PAD, broadcasting elementwise, the other table lookups, ARG_MAX, requantizing, SLICE,
SPLIT_V, UNPACK/PACK) and convolutions, depthwise convolutions and pools of shapes that stress
tiling (odd depths, strides 3, dilation, large and one-sided kernels, VALID padding).

Each kind takes the 4D int8 map it is given and returns a 4D int8 map; what runs on rank 2 or 3
tensors reshapes there and back. The layers only choose what npuplan's support checks accept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from npuplan.ir.graph import Tensor
from npuplan.ir.types import DataType, Quantization
from bench.random_builder import Builder

Layer = Callable[[Builder, Tensor], Tensor]

_LUT_KINDS = ("RSQRT", "LOG", "GELU", "EXP", "LOGISTIC", "TANH", "HARD_SWISH")
_SOFTMAX_QUANT = Quantization((1 / 256,), (-128,))


def _out(size: int, kernel: int, stride: int, same: bool) -> int:
    return -(-size // stride) if same else (size - kernel) // stride + 1


def conv_stress(b: Builder, x: Tensor) -> Tensor:
    """A CONV_2D of odd depth, possibly one-sided or large kernel, stride up to 3 or dilation."""
    _, h, w, c = x.shape
    kh, kw = b.rng.choice(((1, 1), (2, 2), (3, 3), (5, 5), (7, 7), (1, 7), (7, 1), (3, 5), (1, 3)))
    sh, sw = b.rng.choice(((1, 1), (2, 2), (3, 3), (1, 2), (2, 1), (3, 1)))
    dil = b.rng.choice((1, 2, 3)) if (sh, sw) == (1, 1) else 1
    dkh, dkw = (kh - 1) * dil + 1, (kw - 1) * dil + 1
    same = b.rng.random() < 0.6 or dkh > h or dkw > w
    cout = b.rng.choice((1, 3, 5, 7, 12, 13, 20, 33, 48))
    y = b.fm((1, _out(h, dkh, sh, same), _out(w, dkw, sw, same), cout))
    b.add("CONV_2D", [x, b.weights((cout, kh, kw, c)), b.bias(cout)], [y], padding="SAME" if same else "VALID",
          stride_h=sh, stride_w=sw, dilation_h_factor=dil, dilation_w_factor=dil,
          fused_activation_function=b.rng.choice(("NONE", "RELU", "RELU6", "RELU_N1_TO_1")))
    return y


def depthwise_stress(b: Builder, x: Tensor) -> Tensor:
    """A DEPTHWISE_CONV_2D with a 3..7 kernel, stride up to 3 or dilation (a depth multiplier on
    one-channel maps)."""
    _, h, w, c = x.shape
    k = b.rng.choice((3, 5, 7))
    s = b.rng.choice((1, 2, 3))
    dil = b.rng.choice((1, 2)) if s == 1 else 1
    mult = b.rng.choice((2, 4)) if c == 1 else 1
    dk = (k - 1) * dil + 1
    same = b.rng.random() < 0.7 or dk > min(h, w)
    y = b.fm((1, _out(h, dk, s, same), _out(w, dk, s, same), c * mult))
    b.add("DEPTHWISE_CONV_2D", [x, b.weights((1, k, k, c * mult)), b.bias(c * mult)], [y],
          padding="SAME" if same else "VALID", stride_h=s, stride_w=s, depth_multiplier=mult,
          dilation_h_factor=dil, dilation_w_factor=dil, fused_activation_function=b.rng.choice(("NONE", "RELU6")))
    return y


def pool_stress(b: Builder, x: Tensor) -> Tensor:
    """A 3x3 pool of stride 1..3 (SAME), or a VALID average pool over the whole map."""
    _, h, w, c = x.shape
    if b.rng.random() < 0.3 and h * w > 1:
        y = b.fm((1, 1, 1, c), quant=x.quant)
        b.add("AVERAGE_POOL_2D", [x], [y], padding="VALID", stride_h=1, stride_w=1, filter_height=h,
              filter_width=w, fused_activation_function="NONE")
        return y
    s = b.rng.choice((1, 2, 3))
    y = b.fm((1, -(-h // s), -(-w // s), c), quant=x.quant)
    b.add(b.rng.choice(("MAX_POOL_2D", "AVERAGE_POOL_2D")), [x], [y], padding="SAME", stride_h=s, stride_w=s,
          filter_height=3, filter_width=3, fused_activation_function="NONE")
    return y


def fully_connected(b: Builder, x: Tensor) -> Tensor:
    """A FULLY_CONNECTED over the flattened map (2-D, small maps) or over each pixel (3-D input,
    with or without keep_num_dims), reshaped back to 4D."""
    _, h, w, c = x.shape
    units = b.rng.choice((1, 7, 10, 16, 33))
    act = b.rng.choice(("NONE", "RELU"))
    if h * w * c <= 2048 and b.rng.random() < 0.5:
        flat = b.reshape(x, (1, h * w * c))
        y = b.fm((1, units))
        b.add("FULLY_CONNECTED", [flat, b.weights((units, h * w * c)), b.bias(units)], [y],
              fused_activation_function=act, keep_num_dims=False)
        return b.reshape(y, (1, 1, 1, units))
    seq = b.reshape(x, (1, h * w, c))
    keep = b.rng.random() < 0.5
    y = b.fm((1, h * w, units) if keep else (h * w, units))
    b.add("FULLY_CONNECTED", [seq, b.weights((units, c)), b.bias(units)], [y], fused_activation_function=act,
          keep_num_dims=keep)
    return b.reshape(y, (1, h, w, units))


def reduce(b: Builder, x: Tensor) -> Tensor:
    """MEAN, SUM, REDUCE_MAX or REDUCE_MIN over some of height, width and depth, keeping the
    reduced axes or not (then an EXPAND_DIMS or RESHAPE makes the result 4D again)."""
    kind = b.rng.choice(("MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN"))
    axes = b.rng.choice(((1, 2), (1,), (2,), (3,), (2, 3), (1, 2, 3)))
    keep = b.rng.random() < 0.5
    if kind in ("MEAN", "SUM") and 3 in axes and 1 not in x.shape[1:]:
        axes = (1, 2)  # over depth only where a height, width or depth of 1 can take its place (Vela's rule)
    reduced = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    y = b.fm(reduced if keep else tuple(d for i, d in enumerate(x.shape) if i not in axes),
             quant=x.quant if kind in ("REDUCE_MAX", "REDUCE_MIN") else None)
    b.add(kind, [x, b.ints(axes)], [y], keep_dims=keep)
    if keep:
        return y
    if len(axes) == 1:
        z = b.fm(reduced, kind="expanded", quant=y.quant)
        b.add("EXPAND_DIMS", [y, b.ints(axes[0])], [z])
        return z
    return b.reshape(y, reduced)


def softmax(b: Builder, x: Tensor) -> Tensor:
    """A SOFTMAX over the depth of the map, or of its pixels seen as rows of a matrix."""
    _, h, w, c = x.shape
    beta = b.rng.choice((1.0, 0.5, 2.0))
    flat = b.rng.random() < 0.5
    src = b.reshape(x, (h * w, c)) if flat else x
    y = b.fm(src.shape, quant=_SOFTMAX_QUANT)
    b.add("SOFTMAX", [src], [y], beta=beta)
    return b.reshape(y, x.shape) if flat else y


def rank3_lut(b: Builder, x: Tensor) -> Tensor:
    """A table lookup on the map seen in 3-D: SQUEEZE of a (1, 1, HW, C) view or a RESHAPE to
    (H, W, C), and back by RESHAPE or EXPAND_DIMS."""
    _, h, w, c = x.shape
    if b.rng.random() < 0.5:
        wide = b.reshape(x, (1, 1, h * w, c))
        src = b.fm((1, h * w, c), kind="squeezed", quant=x.quant)
        b.add("SQUEEZE", [wide], [src], squeeze_dims=(1,))
    else:
        src = b.reshape(x, (h, w, c))
    y = b.fm(src.shape)
    b.add(b.rng.choice(_LUT_KINDS), [src], [y])
    if len(y.shape) == 3 and y.shape[0] == h:
        z = b.fm(x.shape, kind="expanded", quant=y.quant)
        b.add("EXPAND_DIMS", [y, b.ints(0)], [z])
        return z
    return b.reshape(y, x.shape)


def unary(b: Builder, x: Tensor) -> Tensor:
    """RSQRT, LOG, GELU, RELU_N1_TO_1, RELU_0_TO_1, RELU6 or a requantizing QUANTIZE."""
    kind = b.rng.choice(("RSQRT", "LOG", "GELU", "RELU_N1_TO_1", "RELU_0_TO_1", "RELU6", "QUANTIZE"))
    y = b.fm(x.shape)
    if kind == "GELU":
        b.add(kind, [x], [y], approximate=b.rng.random() < 0.5)
    else:
        b.add(kind, [x], [y])
    return y


def transpose(b: Builder, x: Tensor) -> Tensor:
    """A TRANSPOSE of two or three of height, width and depth."""
    perm = b.rng.choice(((0, 2, 1, 3), (0, 1, 3, 2), (0, 3, 2, 1), (0, 2, 3, 1), (0, 3, 1, 2)))
    y = b.fm(tuple(x.shape[p] for p in perm), quant=x.quant)
    b.add("TRANSPOSE", [x, b.ints(perm)], [y])
    return y


def mirror_pad(b: Builder, x: Tensor) -> Tensor:
    """A MIRROR_PAD (REFLECT or SYMMETRIC) of up to two rows and columns each side."""
    _, h, w, c = x.shape
    reflect = b.rng.random() < 0.5
    limit_h, limit_w = min(2, h - reflect), min(2, w - reflect)
    (top, bottom), (left, right) = [(b.rng.randint(0, n), b.rng.randint(0, n)) for n in (limit_h, limit_w)]
    if top + bottom + left + right == 0:
        return x
    y = b.fm((1, h + top + bottom, w + left + right, c), quant=x.quant)
    b.add("MIRROR_PAD", [x, b.ints([[0, 0], [top, bottom], [left, right], [0, 0]])], [y], mode=0 if reflect else 1)
    return y


def _broadcast_operand(b: Builder, x: Tensor) -> Tensor:
    """Something to combine with ``x``: a conv of it (same shape), its mean over the map (1x1xC),
    over width and depth (Hx1x1), or a constant 1x1xC."""
    _, h, w, c = x.shape
    form = b.rng.choice(("conv", "pixel", "row", "const"))
    if form == "conv":
        y = b.fm(x.shape)
        b.add("CONV_2D", [x, b.weights((c, 1, 1, c)), b.bias(c)], [y], padding="SAME", stride_h=1, stride_w=1,
              dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="NONE")
        return y
    if form == "const":
        values = np.asarray([b.rng.randint(-100, 100) for _ in range(c)]).reshape(1, 1, 1, c)
        return b.const(values, DataType.INT8, b.quant())
    if form == "row" and 1 not in (h, w, c):  # over the width first: a mean over depth needs a 1 beside it
        rows = b.fm((1, h, 1, c))
        b.add("MEAN", [x, b.ints((2,))], [rows], keep_dims=True)
        x = rows
    axes, shape = ((1, 2), (1, 1, 1, c)) if form == "pixel" else ((2, 3), (1, h, 1, 1))
    y = b.fm(shape)
    b.add("MEAN", [x, b.ints(axes)], [y], keep_dims=True)
    return y


def requantized(b: Builder, t: Tensor, quant: Quantization | None) -> Tensor:
    """``t`` in ``quant``: a constant relabelled, a feature map rewritten by the op writing it."""
    new = replace(t, quant=quant)
    for i, op in enumerate(b.ops):
        if any(o is t for o in op.outputs):
            b.ops[i] = replace(op, outputs=tuple(new if o is t else o for o in op.outputs))
    return new


def binary(b: Builder, x: Tensor) -> Tensor:
    """ADD, SUB, MUL, MAXIMUM, MINIMUM or SQUARED_DIFFERENCE of the map and something of the same
    shape or broadcast to it, either operand first."""
    kind = b.rng.choice(("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE"))
    other = _broadcast_operand(b, x)
    if kind in ("MAXIMUM", "MINIMUM"):  # the NPU compares its operands unscaled: all in x's quantization
        other = requantized(b, other, x.quant)
    inputs = [x, other] if b.rng.random() < 0.5 else [other, x]
    y = b.fm(x.shape)
    if kind in ("MAXIMUM", "MINIMUM"):
        y = replace(y, quant=x.quant)  # after b.fm drew its quantization: the other layers' draws unchanged
    if kind == "SQUARED_DIFFERENCE":
        b.add(kind, inputs, [y])
    else:
        b.add(kind, inputs, [y], fused_activation_function=b.rng.choice(("NONE", "RELU")))
    return y


def argmax(b: Builder, x: Tensor) -> Tensor:
    """An ARG_MAX over the depth as a second graph output (int32 indices); the map goes on."""
    _, h, w, c = x.shape
    if c > 127:
        return x
    y = Tensor(b.name("argmax"), (1, h, w), DataType.INT32)
    b.add("ARG_MAX", [x, b.ints(3)], [y], output_type=2)  # TensorType INT32
    b.side_outputs.append(y)
    return x


def slice_concat(b: Builder, x: Tensor) -> Tensor:
    """A SLICE of a box of the map, or a SPLIT_V of its width or depth into unequal parts, one of
    them convolved, concatenated again."""
    _, h, w, c = x.shape
    if b.rng.random() < 0.4 and h > 1 and w > 1:
        top, left = b.rng.randint(0, h // 2), b.rng.randint(0, w // 2)
        size = (1, b.rng.randint(1, h - top), b.rng.randint(1, w - left), c)
        y = b.fm(size, quant=x.quant)
        b.add("SLICE", [x, b.ints([0, top, left, 0]), b.ints(size)], [y])
        return y
    axis = b.rng.choice((2, 3))
    if x.shape[axis] < 2:
        return x
    first = b.rng.randint(1, x.shape[axis] - 1)
    sizes = (first, x.shape[axis] - first) if b.rng.random() < 0.5 else (first, -1)
    parts = [b.fm(tuple(n if i == axis else d for i, d in enumerate(x.shape)), quant=x.quant)
             for n in (first, x.shape[axis] - first)]
    b.add("SPLIT_V", [x, b.ints(sizes), b.ints(axis)], parts, num_splits=2)
    _, ph, pw, pc = parts[1].shape
    changed = b.fm(parts[1].shape, quant=x.quant)
    b.add("CONV_2D", [parts[1], b.weights((pc, 1, 1, pc)), b.bias(pc)], [changed], padding="SAME", stride_h=1,
          stride_w=1, dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="NONE")
    y = b.fm(x.shape, quant=x.quant)
    b.add("CONCATENATION", [parts[0], changed], [y], axis=axis, fused_activation_function="NONE")
    return y


def unpack_pack(b: Builder, x: Tensor) -> Tensor:
    """An UNPACK of the rows (at most 8), a table lookup on some, and a PACK of them again (in
    order or reversed)."""
    _, h, w, c = x.shape
    if not 2 <= h <= 8:
        return x
    rows = [b.fm((1, w, c), quant=x.quant) for _ in range(h)]
    b.add("UNPACK", [x], rows, num=h, axis=1)
    for i in range(h):
        if b.rng.random() < 0.4:
            y = b.fm(rows[i].shape, quant=x.quant)
            b.add("RELU", [rows[i]], [y])
            rows[i] = y
    if b.rng.random() < 0.5:
        rows.reverse()
    y = b.fm(x.shape, quant=x.quant)
    b.add("PACK", rows, [y], values_count=h, axis=1)
    return y


LAYERS: dict[str, Layer] = {
    "conv_stress": conv_stress, "depthwise_stress": depthwise_stress, "pool_stress": pool_stress,
    "fully_connected": fully_connected, "reduce": reduce, "softmax": softmax, "rank3_lut": rank3_lut,
    "unary": unary, "transpose": transpose, "mirror_pad": mirror_pad, "binary": binary, "argmax": argmax,
    "slice_concat": slice_concat, "unpack_pack": unpack_pack,
}

# Input maps of the second generation: square, odd, tall, wide, one-pixel and large ones (the
# large ones need striping or cascading to fit small memories).
INPUT_MAPS = ((8, 8), (16, 16), (24, 24), (7, 7), (15, 15), (17, 23), (33, 9), (1, 48), (48, 1), (3, 40),
              (40, 5), (1, 1), (64, 64), (75, 97), (128, 12))
INPUT_DEPTHS = (1, 2, 3, 5, 8, 12, 16)
