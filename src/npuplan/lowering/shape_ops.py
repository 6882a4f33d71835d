"""Fold SHAPE operators on statically shaped tensors into constant tensors."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from npuplan.ir.graph import Graph, Tensor
from npuplan.ir.types import DataType
from npuplan.lowering._util import replace_tensor, without_op

Removed = tuple[tuple[str, str], ...]


def fold_shape_ops(graph: Graph, *, ready: Callable[[Tensor], bool] | None = None) -> tuple[Graph, Removed]:
    """Replace each SHAPE op whose input has a known shape (and is ``ready``, when given) by a
    constant int32 tensor. A SHAPE whose output is a graph output stays: a graph output must be
    an operator's output in the file (as ``lowering.constants`` leaves such ops unfolded).

    Returns the new graph and the removed ops as (name, reason).
    """
    removed: list[tuple[str, str]] = []
    for op in [o for o in graph.ops if o.type == "SHAPE"]:
        ifm = op.inputs[0]
        if op.outputs[0] in graph.outputs:
            continue
        if ifm is None or any(d < 0 for d in ifm.shape) or (ready is not None and not ready(ifm)):
            continue
        out = op.outputs[0]
        values = np.array(ifm.shape, dtype=np.int32)
        values.flags.writeable = False
        const = Tensor(out.name, (len(ifm.shape),), DataType.INT32, out.quant, values)
        graph = replace_tensor(without_op(graph, op), out, const)
        removed.append((op.name, f"SHAPE of '{ifm.name}' is the constant {list(ifm.shape)}"))
    return graph, tuple(removed)
