"""Execution order as Vela's legacy core builds it: a depth-first post-order from the outputs.

Vela visits each op's inputs, last first, before the op itself, starting from the subgraph outputs;
on residual blocks this runs the main branch before the shortcut (TFLite files often list the
shortcut first). Ops that feed no output keep their relative order at the end.
"""

from __future__ import annotations

from dataclasses import replace

from npuplan.ir.graph import Graph, Op


def vela_order(graph: Graph) -> Graph:
    """A copy of ``graph`` with its ops in Vela's post-order (iterative, no recursion limit)."""
    producers = graph.producers()
    done: set[int] = set()
    ordered: list[Op] = []
    for out in graph.outputs:
        root = producers.get(out)
        if root is None or id(root) in done:
            continue
        stack: list[tuple[Op, int]] = [(root, 0)]
        pending = {id(root)}
        while stack:
            op, next_input = stack.pop()
            while next_input < len(op.inputs):
                t = op.inputs[len(op.inputs) - 1 - next_input]
                next_input += 1
                child = producers.get(t) if t is not None else None
                if child is not None and id(child) not in done and id(child) not in pending:
                    stack.append((op, next_input))
                    stack.append((child, 0))
                    pending.add(id(child))
                    break
            else:
                done.add(id(op))
                ordered.append(op)
    ordered += [op for op in graph.ops if id(op) not in done]
    return replace(graph, ops=tuple(ordered))
