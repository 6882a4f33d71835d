"""The frozen graph IR read from a model file: tensors, operators, subgraphs.

Operators keep their TFLite builtin name (``"CONV_2D"``) and options as a read-only mapping with
snake_case keys (``stride_h``, ``padding``, ``fused_activation_function``...). Tensors compare by
identity; passes build new ``Op`` and ``Graph`` values and reuse the tensors they do not change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np

from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.records import record

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@record(eq=False, slots=False)
class Tensor:
    """A tensor: ``shape`` as read (batch set to 1 if dynamic); ``data`` is set for constants;
    ``signature`` the file's shape signature when it has a dynamic (-1) dimension, else None (the
    declared shape of such a tensor may be a placeholder: ``lowering.dynamic_shapes``)."""

    name: str
    shape: tuple[int, ...]
    dtype: DataType
    quant: Quantization | None = None
    data: np.ndarray | None = field(default=None, repr=False)
    is_variable: bool = False
    signature: tuple[int, ...] | None = None

    @property
    def is_constant(self) -> bool:
        return self.data is not None

    @cached_property
    def shape4d(self) -> Shape4D:
        """``shape`` as NHWC (computed once: the emitter asks for it tens of thousands of times)."""
        return Shape4D.of(self.shape)

    @property
    def elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= max(int(d), 1)
        return n

    @property
    def size_bytes(self) -> int:
        return self.elements * self.dtype.size_bytes

    __hash__ = object.__hash__  # identity, hashed in C (a Python __hash__ slows every memo key)


@record(eq=False, slots=False)
class Op:
    """An operator. ``type`` is the TFLite builtin name; ``inputs`` may hold ``None`` (optional).

    ``intermediates`` are the tensors TFLite lists as the op's intermediates: quantization-only
    records (an LSTM's gate scales), neither read nor written as data."""

    type: str
    inputs: tuple[Tensor | None, ...]
    outputs: tuple[Tensor, ...]
    options: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    index: int = -1
    intermediates: tuple[Tensor, ...] = ()

    @property
    def name(self) -> str:
        """The TFLite name of the op's first output tensor (how Vela names layers)."""
        return self.outputs[0].name if self.outputs else f"{self.type}_{self.index}"

    __hash__ = object.__hash__  # identity, hashed in C (a Python __hash__ slows every memo key)


@record(eq=False, slots=False)
class Graph:
    """One subgraph, ops in execution order."""

    name: str
    ops: tuple[Op, ...]
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]

    def producers(self) -> dict[Tensor, Op]:
        return {t: op for op in self.ops for t in op.outputs}

    def consumers(self) -> dict[Tensor, list[Op]]:
        found: dict[Tensor, list[Op]] = {}
        for op in self.ops:
            for t in op.inputs:
                if t is not None:
                    found.setdefault(t, []).append(op)
        return found

    def tensors(self) -> list[Tensor]:
        """Every tensor used by the graph, each once, in first-use order."""
        seen: dict[int, Tensor] = {}
        for t in self.inputs:
            seen.setdefault(id(t), t)
        for op in self.ops:
            for used in (*op.inputs, *op.outputs, *op.intermediates):
                if used is not None:
                    seen.setdefault(id(used), used)
        return list(seen.values())


@record
class Signature:
    """A signature def: the names a runtime's signature runner calls a subgraph's inputs and
    outputs by, each naming a position in that subgraph's ``inputs`` or ``outputs``."""

    key: str
    subgraph: int
    inputs: tuple[tuple[str, int], ...]
    outputs: tuple[tuple[str, int], ...]


@record(eq=False, slots=False)
class Model:
    """A model: its subgraphs (the first is the entry point) and its signature defs."""

    name: str
    subgraphs: tuple[Graph, ...]
    description: str = ""
    signatures: tuple[Signature, ...] = ()

    @property
    def main(self) -> Graph:
        return self.subgraphs[0]


def frozen_options(options: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only copy of an options mapping."""
    return MappingProxyType(dict(options))
