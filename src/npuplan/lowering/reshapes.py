"""Drop RESHAPE, SQUEEZE and EXPAND_DIMS that run on the NPU: they only relabel the same bytes."""

from __future__ import annotations

from npuplan.ir.graph import Graph
from npuplan.lowering._util import replace_op, replace_tensor, without_op
from npuplan.lowering.support import MEMORY_TYPES, unsupported_reason
from npuplan.lowering.views import INPUT_VIEWS, OUTPUT_VIEWS, add_view

Removed = tuple[tuple[str, str], ...]


def drop_noop_reshapes(graph: Graph) -> tuple[Graph, Removed]:
    """Remove NPU-supported reshape-like ops, rewiring their neighbours to one shared tensor.

    Consumers read the reshape's input directly; when the reshape's output is a graph output, the
    producer writes it instead. Either way the rewired op records the shape it was written for as
    a view (``views.py``), so it is still converted with that geometry.
    """
    removed: list[tuple[str, str]] = []
    for op in [o for o in graph.ops if o.type in MEMORY_TYPES]:
        if unsupported_reason(op) is not None:
            continue
        ifm, ofm = op.inputs[0], op.outputs[0]
        assert ifm is not None
        producers = graph.producers()
        keep_output = ofm in graph.outputs and ifm not in graph.inputs and not ifm.is_constant
        if keep_output and len(graph.consumers().get(ifm, [])) == 1 and ifm in producers:
            producer = producers[ifm]
            graph = replace_op(graph, producer, add_view(producer, OUTPUT_VIEWS, ofm, ifm.shape))
            graph = replace_tensor(without_op(graph, op), ifm, ofm)
        elif ofm not in graph.outputs:
            for consumer in graph.consumers().get(ofm, []):
                graph = replace_op(graph, consumer, add_view(consumer, INPUT_VIEWS, ifm, ofm.shape))
            graph = replace_tensor(without_op(graph, op), ofm, ifm)
        else:
            continue
        removed.append((op.name, f"{op.type} to {list(ofm.shape)} does not move data"))
    return graph, tuple(removed)
