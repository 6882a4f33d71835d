"""Resolve the placeholder shapes of a network exported with dynamic dimensions.

A TFLite file exported with a dynamic batch (Keras: ``shape_signature`` [-1, 16, 32]) declares
each tensor with a -1 in its signature at a placeholder shape: the batch as 1, but also the rows
of a flattened ``Tensordot`` (a RESHAPE to [-1, 32] declared [1, 32], its target computed by
SHAPE -> GATHER -> REDUCE_PROD -> PACK at run time). npuplan plans the batch as 1, so every such
shape is known at compile time: this pass computes them, as TensorFlow Lite does when it allocates
the tensors, and gives each tensor its planned static shape (signature None). The shape arithmetic
is folded on a scratch copy (``fold_shape_ops``, ``fold_constants``) round by round, each round
reaching the RESHAPEs whose targets the previous one folded; an operator whose output shape is not
inferred here keeps its declared shape (as before this pass).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor
from npuplan.lowering._util import replace_tensors, with_tensors_replaced
from npuplan.lowering.constants import fold_constants
from npuplan.lowering.shape_ops import fold_shape_ops

MAX_ROUNDS = 16
# Operators whose output has the shape of their first input.
_SAME_SHAPE = frozenset({
    "SOFTMAX", "LOGISTIC", "TANH", "RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "HARD_SWISH", "LEAKY_RELU",
    "PRELU", "EXP", "LOG", "RSQRT", "SQRT", "NEG", "ABS", "GELU", "QUANTIZE", "DEQUANTIZE", "CAST", "SQUARE",
})
# 4-D operators whose output keeps their input's batch (the declared rows, columns and depth are
# right; the batch is the placeholder 1, wrong after a SPACE_TO_BATCH_ND).
_KEEP_BATCH = frozenset({
    "CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D", "RESIZE_BILINEAR",
    "RESIZE_NEAREST_NEIGHBOR", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH",
})
# Operators whose output has the broadcast shape of their two inputs.
_BROADCAST = frozenset({"ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "POW"})


def is_dynamic(t: Tensor) -> bool:
    """Whether ``t``'s declared shape may be a placeholder (a -1 in its signature)."""
    return t.signature is not None


def _reshape(op: Op, ifm: Tensor) -> tuple[int, ...] | None:
    target_t = op.inputs[1] if len(op.inputs) > 1 else None
    if target_t is not None and target_t.data is None:
        return None  # not folded yet
    target = ([int(v) for v in target_t.data.reshape(-1)] if target_t is not None and target_t.data is not None
              else [int(v) for v in op.options.get("new_shape", ()) or ()])
    if not target or target.count(-1) > 1:
        return None
    known = int(np.prod([d for d in target if d != -1]))
    if -1 in target:
        if known <= 0 or ifm.elements % known:
            return None
        target[target.index(-1)] = ifm.elements // known
    return tuple(target) if int(np.prod(target)) == ifm.elements else None


def _fully_connected(op: Op, ifm: Tensor) -> tuple[int, ...] | None:
    weights = op.inputs[1] if len(op.inputs) > 1 else None
    if weights is None or len(weights.shape) != 2 or weights.shape[1] <= 0:
        return None
    units, depth = weights.shape
    if op.options.get("keep_num_dims"):
        return (*ifm.shape[:-1], units) if ifm.shape and ifm.shape[-1] == depth else None
    return (ifm.elements // depth, units) if ifm.elements % depth == 0 else None


def _space_batch(op: Op, ifm: Tensor) -> tuple[int, ...] | None:
    """SPACE_TO_BATCH_ND's or BATCH_TO_SPACE_ND's output: the blocks of the spatial axes move
    to (or from) the batch, after padding (before cropping) by the constant operands."""
    block_t, edges_t = (op.inputs[1], op.inputs[2]) if len(op.inputs) > 2 else (None, None)
    if block_t is None or edges_t is None or block_t.data is None or edges_t.data is None:
        return None
    block = [int(v) for v in block_t.data.reshape(-1)]
    edges = np.asarray(edges_t.data).reshape(-1, 2).astype(int)
    if len(edges) != len(block) or len(ifm.shape) < len(block) + 1 or min(block, default=0) <= 0:
        return None
    cells = int(np.prod(block))
    shape = list(ifm.shape)
    if op.type == "SPACE_TO_BATCH_ND":
        spatial = [shape[1 + i] + int(edges[i].sum()) for i in range(len(block))]
        if any(d % b for d, b in zip(spatial, block)):
            return None
        return (shape[0] * cells, *(d // b for d, b in zip(spatial, block)), *shape[1 + len(block):])
    if shape[0] % cells:
        return None
    spatial = [shape[1 + i] * block[i] - int(edges[i].sum()) for i in range(len(block))]
    return (shape[0] // cells, *spatial, *shape[1 + len(block):])


def inferred_shape(op: Op) -> tuple[int, ...] | None:
    """The shape of ``op``'s first output given its inputs' shapes, or None when not inferred here
    (or when its shape operand is not a constant yet)."""
    ifm = op.inputs[0] if op.inputs else None
    if ifm is None:
        return None
    if op.type in ("RESHAPE", "SQUEEZE", "EXPAND_DIMS"):
        return _reshape(op, ifm) if op.type == "RESHAPE" else None
    if op.type == "FULLY_CONNECTED":
        return _fully_connected(op, ifm)
    if op.type in ("SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND"):
        return _space_batch(op, ifm)
    if op.type in _KEEP_BATCH:
        out = op.outputs[0]
        return (ifm.shape[0], *out.shape[1:]) if out is not None and len(out.shape) == len(ifm.shape) == 4 else None
    if op.type in _SAME_SHAPE:
        return ifm.shape
    if op.type in _BROADCAST and len(op.inputs) > 1 and op.inputs[1] is not None:
        try:
            return tuple(int(d) for d in np.broadcast_shapes(ifm.shape, op.inputs[1].shape))
        except ValueError:
            return None
    return None


def _known(t: Tensor | None, resolved: set[int], inputs: set[int]) -> bool:
    return t is None or not is_dynamic(t) or t.is_constant or id(t) in resolved or id(t) in inputs


def _round(scratch: Graph, resolved: set[int], origin: dict[int, Tensor],
           sizes: dict[int, tuple[int, ...]]) -> tuple[Graph, bool]:
    """One pass over ``scratch`` in order: each op whose inputs are known resolves its dynamic
    outputs (``sizes``: source tensor id -> planned shape). Whether any tensor was resolved."""
    inputs = {id(t) for t in scratch.inputs}
    progress = False
    # Replacements are made as each op is reached and applied to the whole graph once at the end
    # (the same graph as replacing each tensor everywhere at once, without a pass per tensor); the
    # replaced tensors are kept alive so that no new tensor reuses an id the map holds.
    ops = list(scratch.ops)
    new_by_old: dict[int, Tensor] = {}
    replaced: list[Tensor] = []
    for k in range(len(ops)):
        op = ops[k] = with_tensors_replaced(ops[k], new_by_old)
        if not all(_known(t, resolved, inputs) for t in op.inputs):
            continue
        for index, out in enumerate(op.outputs):
            if out is None or _known(out, resolved, inputs):
                continue
            shape = inferred_shape(op) if index == 0 else None
            if shape is None and op.type == "RESHAPE" and len(op.inputs) > 1 and op.inputs[1] is not None \
                    and op.inputs[1].data is None:
                continue  # its target is folded in a later round
            source = origin.get(id(out), out)
            new = replace(out, shape=tuple(shape) if shape is not None else out.shape, signature=None)
            origin[id(new)] = source
            sizes[id(source)] = new.shape
            resolved.add(id(new))
            new_by_old[id(out)] = new
            replaced.append(out)
            op = ops[k] = with_tensors_replaced(op, new_by_old)
            progress = True
    return replace_tensors(replace(scratch, ops=tuple(ops)), new_by_old), progress


def resolve_dynamic_shapes(graph: Graph) -> tuple[Graph, tuple[tuple[str, tuple[int, ...], tuple[int, ...]], ...]]:
    """``graph`` with every dynamic tensor at its planned static shape, and the tensors whose
    declared shape changed as (name, declared, planned)."""
    inputs = {id(t) for t in graph.inputs}
    if not any(is_dynamic(t) and id(t) not in inputs for t in graph.tensors()):
        return graph, ()
    scratch = graph
    resolved: set[int] = set()
    origin: dict[int, Tensor] = {}
    sizes: dict[int, tuple[int, ...]] = {}
    for _ in range(MAX_ROUNDS):
        inputs = {id(t) for t in scratch.inputs}
        scratch, _ = fold_shape_ops(scratch, ready=lambda t: _known(t, resolved, inputs))
        scratch, _ = fold_constants(scratch)
        scratch, progress = _round(scratch, resolved, origin, sizes)
        if not progress:
            break
    changed = []
    new_by_old: dict[int, Tensor] = {}
    for t in graph.tensors():
        shape = sizes.get(id(t))
        if shape is None:
            continue
        new_by_old[id(t)] = replace(t, shape=shape, signature=None)
        if shape != t.shape:
            changed.append((t.name, t.shape, shape))
    return replace_tensors(graph, new_by_old), tuple(changed)

