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


def _needs_output_view(graph: Graph, ifm: Tensor, ofm: Tensor) -> bool:
    """Whether a consumer of ``ofm`` reads it through its own 4D shape, which differs from ``ifm``'s."""
    if ifm.shape4d == ofm.shape4d:
        return False
    return any(c.type not in _VIEW_FREE_CONSUMERS for c in graph.consumers().get(ofm, []))


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
            # a spatial consumer needs the reshaped 4D view: the producer writes the reshaped tensor,
            # when its own view does not come from its output's shape; otherwise the reshape stays
            if not (sole_reader and producers[ifm].type in _VIEW_FREE_PRODUCERS and ofm not in graph.outputs):
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
