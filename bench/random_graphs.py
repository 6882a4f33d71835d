"""A seeded generator of valid int8 networks from the operator set npuplan lowers.

``random_network(seed)`` builds an ``ir.Model`` (chains, residual adds, concatenations, branches,
Inception-style cells with interleaved branches;
random shapes within the hardware's limits; random but valid quantization) and ``network_bytes``
writes it with npuplan's own TFLite writer, so a failing seed reproduces the file exactly. Each
operator kind is one small function in ``LAYERS`` (generation 1) or ``random_layers.LAYERS`` (added
by generation 2, the default): adding a kind is adding a function.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Tensor
from npuplan.ir.types import DataType, Quantization
from bench import random_layers
from bench.random_builder import Builder as _Builder


Layer = Callable[[_Builder, Tensor], Tensor]


def _conv(b: _Builder, x: Tensor) -> Tensor:
    _, h, w, c = x.shape
    k, s = b.rng.choice((1, 3, 5)), b.rng.choice((1, 1, 2))
    cout = b.rng.choice((4, 8, 16, 24))
    y = b.fm((1, -(-h // s), -(-w // s), cout))
    b.add("CONV_2D", [x, b.weights((cout, k, k, c)), b.bias(cout)], [y], padding="SAME", stride_h=s, stride_w=s,
          dilation_h_factor=1, dilation_w_factor=1, fused_activation_function=b.rng.choice(("NONE", "RELU", "RELU6")))
    return y


def _depthwise(b: _Builder, x: Tensor) -> Tensor:
    _, h, w, c = x.shape
    s = b.rng.choice((1, 2))
    y = b.fm((1, -(-h // s), -(-w // s), c))
    b.add("DEPTHWISE_CONV_2D", [x, b.weights((1, 3, 3, c)), b.bias(c)], [y], padding="SAME", stride_h=s, stride_w=s,
          depth_multiplier=1, dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="RELU")
    return y


def _pool(b: _Builder, x: Tensor) -> Tensor:
    _, h, w, c = x.shape
    if h < 2 or w < 2:
        return x
    y = b.fm((1, h // 2, w // 2, c), quant=x.quant)
    b.add(b.rng.choice(("MAX_POOL_2D", "AVERAGE_POOL_2D")), [x], [y], padding="VALID", stride_h=2, stride_w=2,
          filter_height=2, filter_width=2, fused_activation_function="NONE")
    return y


def _activation(b: _Builder, x: Tensor) -> Tensor:
    kind = b.rng.choice(("LEAKY_RELU", "HARD_SWISH", "LOGISTIC", "TANH", "RELU", "EXP", "ABS"))
    y = b.fm(x.shape, quant=x.quant if kind in ("RELU", "ABS") else None)
    if kind == "LEAKY_RELU":
        b.add(kind, [x], [y], alpha=b.rng.choice((0.1, 0.2)))
    else:
        b.add(kind, [x], [y])
    return y


def _residual(b: _Builder, x: Tensor) -> Tensor:
    branch = _conv_same(b, x, x.shape[-1])
    y = b.fm(x.shape)
    b.add(b.rng.choice(("ADD", "MUL", "MAXIMUM", "SUB")), [x, branch], [y], fused_activation_function="NONE")
    return y


def _conv_same(b: _Builder, x: Tensor, cout: int) -> Tensor:
    y = b.fm((*x.shape[:3], cout))
    b.add("CONV_2D", [x, b.weights((cout, 3, 3, x.shape[-1])), b.bias(cout)], [y], padding="SAME", stride_h=1,
          stride_w=1, dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="RELU")
    return y


def _concat(b: _Builder, x: Tensor) -> Tensor:
    other = _conv_same(b, x, b.rng.choice((4, 8)))
    q = b.quant()
    y = b.fm((*x.shape[:3], x.shape[-1] + other.shape[-1]), quant=q)
    b.add("CONCATENATION", [x, other], [y], axis=3, fused_activation_function="NONE")
    return y


def _split(b: _Builder, x: Tensor) -> Tensor:
    c = x.shape[-1]
    if c < 2 or c % 2:
        return x
    halves = [b.fm((*x.shape[:3], c // 2), quant=x.quant) for _ in range(2)]
    b.add("SPLIT", [b.const(np.asarray(3), DataType.INT32), x], halves, num_splits=2)
    y = b.fm(halves[0].shape)
    b.add("ADD", [halves[0], halves[1]], [y], fused_activation_function="NONE")
    return y


def _slice(b: _Builder, x: Tensor) -> Tensor:
    _, h, w, c = x.shape
    if h < 3 or w < 3:
        return x
    y = b.fm((1, h - 1, w - 2, c), quant=x.quant)
    begin, end = np.asarray([0, 1, 1, 0]), np.asarray([1, h, w - 1, c])
    b.add("STRIDED_SLICE", [x, b.const(begin, DataType.INT32), b.const(end, DataType.INT32),
                            b.const(np.ones(4), DataType.INT32)], [y], begin_mask=0, end_mask=0, shrink_axis_mask=0)
    return y


def _pad(b: _Builder, x: Tensor) -> Tensor:
    _, h, w, c = x.shape
    y = b.fm((1, h + 2, w + 2, c), quant=x.quant)
    b.add("PAD", [x, b.const(np.asarray([[0, 0], [1, 1], [1, 1], [0, 0]]), DataType.INT32)], [y])
    return y


def _resize(b: _Builder, x: Tensor) -> Tensor:
    _, h, w, c = x.shape
    if h * w > 256:
        return x
    y = b.fm((1, 2 * h, 2 * w, c), quant=x.quant)
    b.add(b.rng.choice(("RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR")),
          [x, b.const(np.asarray([2 * h, 2 * w]), DataType.INT32)], [y], align_corners=False, half_pixel_centers=False)
    return y


def _transpose_conv(b: _Builder, x: Tensor) -> Tensor:
    _, h, w, c = x.shape
    if h * w > 256:
        return x
    cout = b.rng.choice((4, 8))
    y = b.fm((1, 2 * h, 2 * w, cout))
    b.add("TRANSPOSE_CONV", [b.const(np.asarray([1, 2 * h, 2 * w, cout]), DataType.INT32),
                             b.weights((cout, 3, 3, c)), x, b.bias(cout)], [y], padding="SAME", stride_h=2, stride_w=2)
    return y


def _prelu(b: _Builder, x: Tensor) -> Tensor:
    alpha = b.const(np.asarray([[[b.rng.randint(1, 60) for _ in range(x.shape[-1])]]]), DataType.INT8,
                    Quantization((0.01,), (0,)))
    y = b.fm(x.shape)
    b.add("PRELU", [x, alpha], [y])
    return y


def _cell(b: _Builder, x: Tensor) -> Tensor:
    """An Inception-style cell: 2-4 branches of 1-3 convs of random widths, joined by a
    concatenation, with the branches' ops interleaved in the file (as converters often emit them)."""
    _, h, w, _c = x.shape
    branches: list[list[int]] = [[b.rng.choice((4, 8, 16, 32)) for _ in range(b.rng.randint(1, 3))]
                                 for _ in range(b.rng.randint(2, 4))]
    tails = [x] * len(branches)
    for depth in range(max(len(widths) for widths in branches)):
        for i, widths in enumerate(branches):
            if depth < len(widths):
                tails[i] = _conv_same(b, tails[i], widths[depth])
    y = b.fm((1, h, w, sum(t.shape[-1] for t in tails)))
    b.add("CONCATENATION", list(tails), [y], axis=3, fused_activation_function="NONE")
    return y


LAYERS: dict[str, Layer] = {
    "conv": _conv, "depthwise": _depthwise, "pool": _pool, "activation": _activation, "residual": _residual,
    "concat": _concat, "split": _split, "slice": _slice, "pad": _pad, "resize": _resize,
    "transpose_conv": _transpose_conv, "prelu": _prelu, "cell": _cell,
}


# Generation 1 (the first 13 kinds, square inputs) writes the same files as before generation 2
# (every lowered operator type, stress shapes) was added; the sets in bench/results name theirs.
GENERATIONS = (1, 2)


def random_network(seed: int, *, layers: int | None = None, kinds: tuple[str, ...] | None = None,
                   generation: int = 2) -> Model:
    """A valid int8 network of random layers of ``generation`` (or those named in ``kinds``), a
    conv first and last; ARG_MAX layers add graph outputs."""
    if generation not in GENERATIONS:
        raise ValueError(f"generation must be one of {GENERATIONS} (it is {generation})")
    rng = random.Random(seed)
    b = _Builder(rng)
    if generation == 1:
        size = rng.choice((8, 12, 16, 24, 32))
        x = b.fm((1, size, size, rng.choice((1, 3, 8))), kind="input")
        table = LAYERS
    else:
        h, w = rng.choice(random_layers.INPUT_MAPS)
        x = b.fm((1, h, w, rng.choice(random_layers.INPUT_DEPTHS)), kind="input")
        table = {**LAYERS, **random_layers.LAYERS}
    y = _conv(b, x)
    for _ in range(layers if layers is not None else rng.randint(2, 8)):
        y = table[rng.choice(sorted(kinds or table))](b, y)
    y = _conv(b, y)
    return Model(f"random_{seed}", (Graph("main", tuple(b.ops), (x,), (y, *b.side_outputs)),))


def network_bytes(seed: int, **options: object) -> bytes:
    """``random_network(seed)`` as a TFLite file."""
    return write_tflite(random_network(seed, **options))  # type: ignore[arg-type]
