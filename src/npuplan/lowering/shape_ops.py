"""Fold compile-time-constant subgraphs (shape arithmetic) into constant tensors.

A SHAPE of a statically shaped tensor is a constant; so is any op ``const_eval`` can evaluate
whose inputs are all constants (STRIDED_SLICE, PACK, REDUCE_PROD, CAST... as Keras 3 and
``tf.function`` exports compute a RESHAPE's shape). Each folded op is removed and its output
becomes a constant tensor of the same name, so the RESHAPE it fed gets a constant shape and
becomes a no-op. Ops writing a graph output are kept. Folded results are bounded in size
(``MAX_FOLDED_ELEMENTS``): a larger FILL, RANGE or TILE stays an operator.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor
from npuplan.lowering.const_eval import constant_value, evaluate

Removed = tuple[tuple[str, str], ...]

# Largest constant (elements) a fold may create; shape arithmetic is a handful of elements.
MAX_FOLDED_ELEMENTS = 1 << 16


def _describe(values: np.ndarray) -> str:
    shown = values.reshape(-1)[:8].tolist()
    text = str(shown if values.ndim else shown[0])
    return text if values.size <= 8 else f"{text[:-1]}, ... ({values.size} values)]"


def _fold(op: Op, inputs: tuple[Tensor | None, ...], output_names: frozenset[str]) -> Tensor | None:
    """The constant ``op``'s output becomes, or ``None`` when it is not folded."""
    if len(op.outputs) != 1 or op.outputs[0].name in output_names:
        return None
    if op.type == "SHAPE":
        values: list[np.ndarray | None] = []
    else:
        values = [constant_value(t) for t in inputs if t is not None]
        if not values or any(v is None for v in values):
            return None
    result = evaluate(replace(op, inputs=inputs), values, MAX_FOLDED_ELEMENTS)
    if result is None:
        return None
    result.flags.writeable = False
    out = op.outputs[0]
    return Tensor(out.name, tuple(result.shape), out.dtype, out.quant, result)


def fold_shape_ops(graph: Graph) -> tuple[Graph, Removed]:
    """Evaluate every op whose inputs are compile-time constants and replace it by its value.

    Returns the new graph and the removed ops as (name, reason).
    """
    folded: dict[Tensor, Tensor] = {}
    kept: list[Op] = []
    removed: list[tuple[str, str]] = []
    output_names = frozenset(t.name for t in graph.outputs)
    for op in graph.ops:
        inputs = tuple(folded.get(t, t) if t is not None else None for t in op.inputs)
        const = _fold(op, inputs, output_names)
        if const is None:
            kept.append(replace(op, inputs=inputs) if inputs != op.inputs else op)
            continue
        folded[op.outputs[0]] = const
        source = f"of '{inputs[0].name}'" if op.type == "SHAPE" and inputs[0] is not None else "of constants"
        removed.append((op.name, f"{op.type} {source} is the constant {_describe(const.data)}"))  # type: ignore[arg-type]
    if not removed:
        return graph, ()
    return replace(graph, ops=tuple(kept)), tuple(removed)
