"""Tiny graphs built in code for the lowering tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization

Q = Quantization(scale=(0.05,), zero_point=(-3,))
WQ = Quantization(scale=(0.01,), zero_point=(0,))


def fm(name: str, shape: Sequence[int], dtype: DataType = DataType.INT8, quant: Quantization | None = Q) -> Tensor:
    return Tensor(name, tuple(shape), dtype, quant)


def const(name: str, values: Any, dtype: DataType = DataType.INT8, quant: Quantization | None = WQ) -> Tensor:
    data = np.asarray(values, dtype=np.dtype(dtype.value))
    data.flags.writeable = False
    return Tensor(name, tuple(data.shape), dtype, quant, data)


def op(kind: str, inputs: Sequence[Tensor | None], outputs: Sequence[Tensor], index: int = -1, **options: Any) -> Op:
    return Op(kind, tuple(inputs), tuple(outputs), frozen_options(options), index)


def conv(ifm: Tensor, ofm: Tensor, k: int = 3, *, padding: str = "SAME", stride: int = 1, act: str = "NONE",
         index: int = 0) -> Op:
    cin, cout = ifm.shape[-1], ofm.shape[-1]
    w = const(f"{ofm.name}_w", np.ones((cout, k, k, cin)))
    b = const(f"{ofm.name}_b", np.zeros(cout), DataType.INT32, None)
    return op("CONV_2D", [ifm, w, b], [ofm], index, padding=padding, stride_h=stride, stride_w=stride,
              dilation_h_factor=1, dilation_w_factor=1, fused_activation_function=act)


def graph(ops: Sequence[Op], inputs: Sequence[Tensor], outputs: Sequence[Tensor]) -> Graph:
    return Graph("main", tuple(ops), tuple(inputs), tuple(outputs))


def model(g: Graph) -> Model:
    return Model("tiny", (g,))


def i32(name: str, values: Any) -> Tensor:
    """An int32 constant without quantization (shapes, axes, permutations)."""
    return const(name, values, DataType.INT32, None)
