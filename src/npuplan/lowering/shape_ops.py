"""Fold compile-time-constant subgraphs (shape arithmetic) into constant tensors.

A SHAPE of a statically shaped tensor is a constant; so is any op ``const_eval`` can evaluate
whose inputs are all constants (STRIDED_SLICE, PACK, REDUCE_PROD, CAST... as Keras 3 and
``tf.function`` exports compute a RESHAPE's shape). Each folded op is removed and its output
becomes a constant tensor of the same name, so the RESHAPE it fed gets a constant shape and
becomes a no-op. Ops writing a graph output are kept. Folded results are bounded in size
(``MAX_FOLDED_ELEMENTS``): a larger FILL, RANGE or TILE stays an operator.
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor
from npuplan.lowering.const_eval import constant_value, evaluate

Removed = tuple[tuple[str, str], ...]
logger = logging.getLogger(__name__)

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
        # positions kept (an absent optional input is None); every present input must be constant
        values = [constant_value(t) if t is not None else None for t in inputs]
        if not any(t is not None for t in inputs) or any(t is not None and v is None for t, v in zip(inputs, values)):
            return None
    result = evaluate(replace(op, inputs=inputs), values, MAX_FOLDED_ELEMENTS)
    if result is None:
        return None
    result.flags.writeable = False
    out = op.outputs[0]
    return Tensor(out.name, tuple(result.shape), out.dtype, out.quant, result)


def _inferred_shape(op: Op, inputs: tuple[Tensor | None, ...]) -> tuple[int, ...] | None:
    """The output shape of a RESHAPE with a constant shape, or of a FULLY_CONNECTED, from its input."""
    ifm = inputs[0] if inputs else None
    if ifm is None or ifm.dynamic_axes or any(d < 1 for d in ifm.shape):
        return None
    if op.type == "RESHAPE":
        value = constant_value(inputs[1]) if len(inputs) > 1 else None
        wanted = [int(v) for v in value.reshape(-1)] if value is not None else list(op.options.get("new_shape", ()))
        known = math.prod(d for d in wanted if d != -1)
        if not wanted or wanted.count(-1) > 1 or any(d < -1 for d in wanted) or known <= 0:
            return None
        shape = tuple(ifm.elements // known if d == -1 else d for d in wanted)
        return shape if math.prod(shape) == ifm.elements else None
    if op.type == "FULLY_CONNECTED" and len(inputs) > 1 and inputs[1] is not None and len(inputs[1].shape) == 2:
        units, depth = inputs[1].shape
        if depth < 1 or ifm.elements % depth:
            return None
        if op.options.get("keep_num_dims", False):
            return (*ifm.shape[:-1], units) if ifm.shape[-1] == depth else None
        return (ifm.elements // depth, units)
    return None


def _placeholder_fixed(op: Op, inputs: tuple[Tensor | None, ...]) -> Tensor | None:
    """The output with its real shape, when its declared shape is a dynamic-shape placeholder.

    A dynamic dimension is stored as 1 (``shape_signature`` -1); once the shape arithmetic is
    folded, the shape follows from the input. Only a declared shape whose element count cannot
    be right is replaced.
    """
    if len(op.outputs) != 1:
        return None
    out, shape = op.outputs[0], _inferred_shape(op, inputs)
    if shape is None or (math.prod(shape) == out.elements and not out.dynamic_axes):
        return None
    return replace(out, shape=shape, dynamic_axes=())


def fold_shape_ops(graph: Graph) -> tuple[Graph, Removed]:
    """Evaluate every op whose inputs are compile-time constants and replace it by its value.

    Outputs of RESHAPE and FULLY_CONNECTED whose declared shape is a dynamic placeholder (a
    Keras ``Dense`` on a 3-D input with a dynamic batch: ``[-1, -1]`` stored as 1 x 1) get the
    shape their input implies, so later SHAPE ops and the cost model see the real sizes.
    Returns the new graph and the removed ops as (name, reason).
    """
    folded: dict[Tensor, Tensor] = {}
    kept: list[Op] = []
    removed: list[tuple[str, str]] = []
    output_names = frozenset(t.name for t in graph.outputs)
    for op in graph.ops:
        inputs = tuple(folded.get(t, t) if t is not None else None for t in op.inputs)
        const = _fold(op, inputs, output_names)
        if const is not None:
            folded[op.outputs[0]] = const
            source = f"of '{inputs[0].name}'" if op.type == "SHAPE" and inputs[0] is not None else "of constants"
            removed.append((op.name, f"{op.type} {source} is the constant {_describe(const.data)}"))  # type: ignore[arg-type]
            continue
        fixed = _placeholder_fixed(op, inputs)
        if fixed is not None:
            logger.debug("%s: dynamic output shape %s is %s", op.name, list(op.outputs[0].shape), list(fixed.shape))
            folded[op.outputs[0]] = fixed
        outputs = tuple(folded.get(t, t) for t in op.outputs)
        kept.append(replace(op, inputs=inputs, outputs=outputs) if (inputs, outputs) != (op.inputs, op.outputs) else op)
    if not folded:
        return graph, ()
    graph_outputs = tuple(folded.get(t, t) for t in graph.outputs)
    return replace(graph, ops=tuple(kept), outputs=graph_outputs), tuple(removed)
