"""The network a random generator (bench/random_graphs.py) is building: ops, named tensors and a
seeded source of shapes, constants and quantization."""

from __future__ import annotations

import random

import numpy as np

from npuplan.ir.graph import Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization


class Builder:
    """The network being built: its ops and a source of names and quantization."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.ops: list[Op] = []
        self.count = 0
        self.side_outputs: list[Tensor] = []  # graph outputs besides the last layer's (e.g. ARG_MAX's indices)

    def name(self, kind: str) -> str:
        self.count += 1
        return f"{kind.lower()}_{self.count}"

    def quant(self) -> Quantization:
        return Quantization((self.rng.uniform(0.01, 0.2),), (self.rng.randint(-20, 20),))

    def fm(self, shape: tuple[int, ...], kind: str = "t", quant: Quantization | None = None) -> Tensor:
        return Tensor(self.name(kind), shape, DataType.INT8, quant or self.quant())

    def const(self, values: np.ndarray, dtype: DataType, quant: Quantization | None = None) -> Tensor:
        data = np.ascontiguousarray(values).astype({DataType.INT8: np.int8, DataType.INT32: np.int32}[dtype])
        data.flags.writeable = False
        return Tensor(self.name("c"), tuple(data.shape), dtype, quant, data)

    def add(self, kind: str, inputs: list[Tensor | None], outputs: list[Tensor], **options: object) -> None:
        self.ops.append(Op(kind, tuple(inputs), tuple(outputs), frozen_options(options), len(self.ops)))

    def weights(self, shape: tuple[int, ...]) -> Tensor:
        values = np.asarray([self.rng.randint(-127, 127) for _ in range(int(np.prod(shape)))]).reshape(shape)
        return self.const(values, DataType.INT8, Quantization((self.rng.uniform(0.001, 0.02),), (0,)))

    def bias(self, channels: int) -> Tensor:
        return self.const(np.asarray([self.rng.randint(-500, 500) for _ in range(channels)]), DataType.INT32)


    def ints(self, values: object) -> Tensor:
        """An int32 constant (shapes, axes, paddings); a scalar stays 0-D, as converters write axes
        (``const`` makes it 1-D, which Vela 5.2.0's legacy core fails to read under NumPy 2)."""
        data = np.array(values, dtype=np.int32)
        data.flags.writeable = False
        return Tensor(self.name("c"), tuple(data.shape), DataType.INT32, None, data)

    def reshape(self, x: Tensor, shape: tuple[int, ...]) -> Tensor:
        """``x`` as ``shape`` (same bytes, same quantization) through a RESHAPE."""
        y = self.fm(shape, kind="reshaped", quant=x.quant)
        self.add("RESHAPE", [x, self.ints(shape)], [y], new_shape=shape)
        return y
