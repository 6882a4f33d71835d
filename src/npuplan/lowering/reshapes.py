"""Drop RESHAPE, SQUEEZE and EXPAND_DIMS that run on the NPU: they only relabel the same bytes."""

from __future__ import annotations

from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
from npuplan.lowering._util import replace_op, replace_tensor, without_op
from npuplan.lowering.support import MEMORY_TYPES, unsupported_reason

Removed = tuple[tuple[str, str], ...]


# Consumers whose view of their input does not depend on its declared shape.
_VIEW_FREE_CONSUMERS = frozenset({"FULLY_CONNECTED", "RESHAPE", "SQUEEZE", "EXPAND_DIMS"})
# Consumers that read their input as rows of its last axis (a softmax normalises each row): any
# view with rows as deep serves them.
_ROW_CONSUMERS = frozenset({"SOFTMAX"})
# Producers whose view of their output does not depend on its declared shape.
_VIEW_FREE_PRODUCERS = frozenset({"FULLY_CONNECTED"})
# Ops whose axes, paddings or slices count the dimensions of the tensor as declared: rewired to a
# tensor of another rank, they would reduce, split or pad the wrong axis.
_AXIS_SENSITIVE = frozenset({
    "MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD", "CONCATENATION", "PACK", "UNPACK", "SPLIT",
    "SPLIT_V", "STRIDED_SLICE", "SLICE", "ARG_MAX", "ARG_MIN", "TRANSPOSE", "PAD", "PADV2", "MIRROR_PAD", "GATHER",
    "BATCH_MATMUL",  # multiplies the last two axes, batched over the others
    # CPU operators that index, tile, reverse or block leading axes as declared
    "GATHER_ND", "SCATTER_ND", "TILE", "REVERSE_V2", "CUMSUM", "ONE_HOT", "SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND",
    "REDUCE_ANY", "REDUCE_ALL", "BROADCAST_TO",
})


def _needs_output_view(graph: Graph, ifm: Tensor, ofm: Tensor) -> bool:
    """Whether a consumer of ``ofm`` must see ``ofm`` itself: it reads it through its own 4D shape,
    which differs from ``ifm``'s, or counts its axes and the two ranks or shapes differ."""
    readers = graph.consumers().get(ofm, [])
    if ifm.shape != ofm.shape and any(c.type in _AXIS_SENSITIVE for c in readers):
        return True
    if ifm.shape4d == ofm.shape4d:
        return False
    same_rows = ifm.shape4d.c == ofm.shape4d.c
    return any(c.type not in _VIEW_FREE_CONSUMERS and not (same_rows and c.type in _ROW_CONSUMERS) for c in readers)


def _producer_may_write(graph: Graph, ifm: Tensor, ofm: Tensor) -> bool:
    """Whether the producer of ``ifm`` can write ``ofm`` instead: it sees its output through a view
    of its own (or the two 4D views agree) and does not count the output's axes."""
    producer = graph.producers().get(ifm)
    if producer is None or producer.type in _AXIS_SENSITIVE or len(ofm.shape) > 4:  # a 5-D map: byte movers only
        return False
    return producer.type in _VIEW_FREE_PRODUCERS or ifm.shape4d == ofm.shape4d


def drop_noop_reshapes(graph: Graph) -> tuple[Graph, Removed]:
    """Remove NPU-supported reshape-like ops, rewiring their neighbours to one shared tensor.

    Consumers read the reshape's input directly (they derive their own 4D view from the op
    semantics); when the reshape's output is a graph output, the producer writes it instead.
    """
    removed: list[tuple[str, str]] = []
    position = 0
    while position < len(graph.ops):  # by position: each rewrite rebuilds the ops after it
        op = graph.ops[position]
        position += 1
        if op.type not in MEMORY_TYPES or unsupported_reason(op) is not None:
            continue
        ifm, ofm = op.inputs[0], op.outputs[0]
        assert ifm is not None
        producers = graph.producers()
        sole_reader = len(graph.consumers().get(ifm, [])) == 1 and ifm in producers
        keep_output = ofm in graph.outputs and ifm not in graph.inputs and not ifm.is_constant
        if _needs_output_view(graph, ifm, ofm):
            # a consumer needs the reshaped tensor itself: the producer writes it when it can;
            # otherwise the reshape stays
            if not (sole_reader and ofm not in graph.outputs and _producer_may_write(graph, ifm, ofm)):
                continue
            graph = replace_tensor(without_op(graph, op), ifm, ofm)
        elif keep_output and sole_reader and _producer_may_write(graph, ifm, ofm):
            graph = replace_tensor(without_op(graph, op), ifm, ofm)
        elif ofm not in graph.outputs:
            graph = replace_tensor(without_op(graph, op), ofm, ifm)
        else:
            continue
        position -= 1  # the op is gone: the next one is where it was
        removed.append((op.name, f"{op.type} to {list(ofm.shape)} does not move data"))
    return graph, tuple(removed)


def _pack_as_concat(graph: Graph, pack: Op) -> tuple[Op, Op] | None:
    """``(reshape, concat)`` when ``pack`` stacks its inputs along a new axis ``k`` (giving a tensor
    of more than 4 dimensions) that its sole reader, a RESHAPE, merges with the axis after it:
    the two are a CONCATENATION of the inputs along ``k``."""
    out = pack.outputs[0]
    readers = graph.consumers().get(out, [])
    inputs = [t for t in pack.inputs if t is not None]
    if len(out.shape) <= 4 or len(readers) != 1 or readers[0].type != "RESHAPE" or out in graph.outputs or not inputs:
        return None
    reshape, rank = readers[0], len(out.shape)
    axis = int(pack.options.get("axis", 0)) % rank
    shape = list(inputs[0].shape)
    if axis >= len(shape) or any(list(t.shape) != shape for t in inputs) or reshape.outputs[0].quant != out.quant:
        return None
    merged = shape[:axis] + [len(inputs) * shape[axis]] + shape[axis + 1:]
    if list(reshape.outputs[0].shape) != merged:
        return None
    concat = Op("CONCATENATION", tuple(inputs), reshape.outputs, frozen_options({"axis": axis}), pack.index)
    return reshape, concat


def fold_pack_reshapes(graph: Graph) -> tuple[Graph, Removed]:
    """Replace each PACK to more than 4 dimensions whose RESHAPE merges the new axis with the next
    one (``tf.stack(..., axis=k)`` then flattened) by one CONCATENATION along ``k``."""
    removed: list[tuple[str, str]] = []
    for pack in [o for o in graph.ops if o.type == "PACK"]:
        found = _pack_as_concat(graph, pack)
        if found is None:
            continue
        reshape, concat = found
        graph = without_op(replace_op(graph, pack, concat), reshape)
        removed.append((pack.name, f"PACK and RESHAPE to {list(concat.outputs[0].shape)} are one concatenation"))
    return graph, tuple(removed)
