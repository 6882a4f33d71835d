"""Tiny lowered graphs built in code for scheduler tests."""

from __future__ import annotations

import numpy as np

from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import BlockType, Kernel, LoweredGraph, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType


def fm(name: str, h: int, w: int, c: int) -> Tensor:
    return Tensor(name, (1, h, w, c), DataType.INT8)


def conv(name: str, ifm: Tensor, ofm: Tensor, k: int = 3, stride: int = 1, seed: int = 0) -> NpuOp:
    cin, cout = ifm.shape[3], ofm.shape[3]
    rng = np.random.default_rng(seed)
    weights = rng.integers(-127, 127, size=(cout, k, k, cin), dtype=np.int8)
    return NpuOp(
        name=name, tflite_type="CONV_2D", op_type="Conv2DBias", block_type=BlockType.CONV,
        ifm=ifm, ifm_shape=Shape4D.of(ifm.shape), ofm=ofm, ofm_shape=Shape4D.of(ofm.shape),
        weights=weights, bias=np.zeros(cout, dtype=np.int32),
        kernel=Kernel(k, k, stride, stride),
    )


def conv_chain(layers: list[tuple[int, int]], h: int = 32, w: int = 32, c: int = 8) -> LoweredGraph:
    """A chain of convolutions; ``layers`` holds (out channels, stride) per conv (SAME-ish sizes)."""
    x = fm("input", h, w, c)
    ops = []
    cur = x
    for i, (cout, stride) in enumerate(layers):
        h, w = -(-h // stride), -(-w // stride)
        out = fm(f"t{i}", h, w, cout)
        ops.append(conv(f"t{i}", cur, out, 3, stride, seed=i))
        cur = out
    return LoweredGraph("chain", tuple(ops), (x,), (cur,))
