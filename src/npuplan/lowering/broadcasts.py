"""Materialise the constant operand of a binary elementwise op when both operands broadcast.

The NPU broadcasts an elementwise op's second operand only, so one operand must have the output's
shape (Vela's legacy core refuses the op otherwise: "At least one Input's shape must match the
OFM's shape"). When the other operand broadcasts too and one of them is a constant (an MLP-Mixer's
``x[1, 16, 1] * w[1, 1, 32]``), the constant is written out at the output's shape, TFLite's
broadcast of its values, as Vela's default core runs such an op on the NPU. Only per-tensor
quantized constants, of at most ``MAX_MATERIALISED_BYTES``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor
from npuplan.lowering._util import replace_op

Removed = tuple[tuple[str, str], ...]
MAX_MATERIALISED_BYTES = 64 * 1024
BINARY_ELEMENTWISE = frozenset({"ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE"})


def broadcast_constant(const: Tensor, shape: tuple[int, ...]) -> Tensor | None:
    """``const`` written out at ``shape`` (numpy's broadcast, which is TFLite's), or None when
    its values do not broadcast to it, it is quantized per channel or the result is too large."""
    if const.data is None or (const.quant is not None and len(const.quant.scale) > 1):
        return None
    if int(np.prod(shape)) * const.dtype.size_bytes > MAX_MATERIALISED_BYTES:
        return None
    try:
        data = np.array(np.broadcast_to(const.data.reshape(const.shape), shape))
    except ValueError:
        return None
    data.flags.writeable = False
    return replace(const, name=f"{const.name}_broadcast", shape=tuple(shape), data=data, signature=None)


def _materialised(op: Op) -> Op | None:
    if op.type not in BINARY_ELEMENTWISE or len(op.inputs) != 2 or len(op.outputs) != 1:
        return None
    a, b = op.inputs
    out = op.outputs[0]
    if a is None or b is None or out.shape4d in (a.shape4d, b.shape4d):
        return None
    k = 0 if a.is_constant and not b.is_constant else 1 if b.is_constant and not a.is_constant else None
    if k is None:
        return None
    wide = broadcast_constant(op.inputs[k], tuple(out.shape))  # type: ignore[arg-type]
    if wide is None:
        return None
    inputs = (wide, b) if k == 0 else (a, wide)
    return replace(op, inputs=inputs)


def materialise_broadcast_constants(graph: Graph) -> tuple[Graph, Removed]:
    """``graph`` with each such op's constant written out at the output's shape (nothing removed)."""
    for op in graph.ops:
        new = _materialised(op)
        if new is not None:
            graph = replace_op(graph, op, new)
    return graph, ()
