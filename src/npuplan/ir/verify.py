"""Structural checks on a graph, used at the edges of passes."""

from __future__ import annotations

from npuplan.ir.graph import Graph


def verify(graph: Graph) -> Graph:
    """Check that every op input is produced earlier, is a graph input or is constant.

    Returns ``graph`` unchanged so passes can be chained: ``verify(fuse(graph))``.
    Raises ``AssertionError`` naming the first op that reads an undefined tensor.
    """
    defined = {id(t) for t in graph.inputs}
    for op in graph.ops:
        for t in op.inputs:
            if t is None or t.is_constant or t.is_variable:
                continue
            assert id(t) in defined, f"op {op.type} '{op.name}' reads '{t.name}' before it is produced"
        defined.update(id(t) for t in op.outputs)
    for t in graph.outputs:
        assert id(t) in defined or t.is_constant, f"graph output '{t.name}' is never produced"
    return graph
