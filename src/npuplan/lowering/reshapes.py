"""Drop RESHAPE, SQUEEZE and EXPAND_DIMS that run on the NPU: they only relabel the same bytes."""

from __future__ import annotations

from npuplan.ir.graph import Graph, Tensor
from npuplan.lowering._util import replace_tensor, without_op
from npuplan.lowering.support import MEMORY_TYPES, unsupported_reason

Removed = tuple[tuple[str, str], ...]


# Consumers whose view of their input does not depend on its declared shape.
_VIEW_FREE_CONSUMERS = frozenset({"FULLY_CONNECTED", "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "SOFTMAX"})
# Producers whose view of their output does not depend on its declared shape.
_VIEW_FREE_PRODUCERS = frozenset({"FULLY_CONNECTED"})
# Ops whose axes, paddings or slices count the dimensions of the tensor as declared: rewired to a
# tensor of another rank, they would reduce, split or pad the wrong axis.
_AXIS_SENSITIVE = frozenset({
    "MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD", "CONCATENATION", "PACK", "UNPACK", "SPLIT",
    "SPLIT_V", "STRIDED_SLICE", "SLICE", "ARG_MAX", "ARG_MIN", "TRANSPOSE", "PAD", "PADV2", "MIRROR_PAD", "GATHER",
})


def _needs_output_view(graph: Graph, ifm: Tensor, ofm: Tensor) -> bool:
    """Whether a consumer of ``ofm`` must see ``ofm`` itself: it reads it through its own 4D shape,
    which differs from ``ifm``'s, or counts its axes and the two ranks or shapes differ."""
    readers = graph.consumers().get(ofm, [])
    if ifm.shape != ofm.shape and any(c.type in _AXIS_SENSITIVE for c in readers):
        return True
    if ifm.shape4d == ofm.shape4d:
        return False
    return any(c.type not in _VIEW_FREE_CONSUMERS for c in readers)


def _producer_may_write(graph: Graph, ifm: Tensor, ofm: Tensor) -> bool:
    """Whether the producer of ``ifm`` can write ``ofm`` instead: it sees its output through a view
    of its own (or the two 4D views agree) and does not count the output's axes."""
    producer = graph.producers().get(ifm)
    if producer is None or producer.type in _AXIS_SENSITIVE:
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
        elif keep_output and sole_reader:
            graph = replace_tensor(without_op(graph, op), ifm, ofm)
        elif ofm not in graph.outputs:
            graph = replace_tensor(without_op(graph, op), ofm, ifm)
        else:
            continue
        position -= 1  # the op is gone: the next one is where it was
        removed.append((op.name, f"{op.type} to {list(ofm.shape)} does not move data"))
    return graph, tuple(removed)
