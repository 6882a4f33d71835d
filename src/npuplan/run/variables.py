"""Resource variables of a compiled file (TensorFlow's state: ``VAR_HANDLE``, ``READ_VARIABLE``,
``ASSIGN_VARIABLE`` and ``CALL_ONCE`` with its initialiser subgraph), held by the runner across
invocations as TFLite holds them in its resource table.

A variable is named by its ``VAR_HANDLE``'s ``(container, shared_name)``, as TFLite names it, so
the handle in the main subgraph and the one in the initialiser are the same variable. These
operators run here, not in LiteRT: a run of CPU operators becomes a small model of its own
(``run.cpu``), and a variable must outlive it. ``CALL_ONCE`` runs its initialiser the first time it
is reached, as TFLite does. A variable nothing has assigned yet reads as TensorFlow Lite Micro's
start, zeros (the zero point of a quantized variable; TFLite refuses the read): Vela 5.2 moves
``CALL_ONCE`` after the first ``READ_VARIABLE``, so on its files the first invocation reads that
start, not the initialiser's value, as it would on the device.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from npuplan.errors import ModelError
from npuplan.ir.graph import Graph, Op, Tensor

VARIABLE_OPS = frozenset({"VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CALL_ONCE"})

Key = tuple[str, str]
Values = Callable[[Tensor], np.ndarray]  # a tensor -> a writable view of its bytes as values


def _handles(graphs: tuple[Graph, ...]) -> dict[int, Key]:
    """id(handle tensor) -> the variable's name, from every VAR_HANDLE of every subgraph."""
    found: dict[int, Key] = {}
    for graph in graphs:
        for op in graph.ops:
            if op.type == "VAR_HANDLE":
                key = (str(op.options.get("container", "")), str(op.options.get("shared_name", "")))
                found[id(op.outputs[0])] = key
    return found


class ResourceVariables:
    """The values of a file's resource variables (``graphs``: the main subgraph then the others,
    at their file indices) and whether each ``CALL_ONCE`` has run."""

    def __init__(self, graphs: tuple[Graph, ...], *, label: str) -> None:
        self.label = label
        self._graphs = graphs
        self._handles = _handles(graphs)
        self._values: dict[Key, np.ndarray] = {}
        self._called: set[int] = set()

    def reset(self) -> None:
        """Every variable unassigned, every CALL_ONCE not yet run (a freshly loaded model)."""
        self._values.clear()
        self._called.clear()

    def value(self, key: Key) -> np.ndarray | None:
        """A variable's current value (None: nothing assigned it yet)."""
        return self._values.get(key)

    def run(self, op: Op, values: Values) -> None:
        """Perform one of ``VARIABLE_OPS``; ``values`` gives the feature maps' bytes."""
        if op.type == "READ_VARIABLE":
            current = self._values.get(self._key(op.inputs[0], op))
            out = values(op.outputs[0])
            if current is None:
                quant = op.outputs[0].quant
                out[...] = quant.zero_point[0] if quant is not None and quant.zero_point else 0
            elif current.size != out.size or current.dtype != out.dtype:
                raise ModelError(f"{self.label}: READ_VARIABLE '{op.outputs[0].name}' reads {current.dtype} "
                                 f"{list(current.shape)} into {out.dtype} {list(out.shape)}")
            else:
                out[...] = current.reshape(out.shape)
        elif op.type == "ASSIGN_VARIABLE":
            source = op.inputs[1]
            assert source is not None
            value = source.data if source.data is not None else values(source)
            self._values[self._key(op.inputs[0], op)] = np.array(value, copy=True)
        elif op.type == "CALL_ONCE":
            self._call_once(op, values)

    def _key(self, handle: Tensor | None, op: Op) -> Key:
        key = self._handles.get(id(handle)) if handle is not None else None
        if key is None:
            raise ModelError(f"{self.label}: {op.type} reads a resource that no VAR_HANDLE makes")
        return key

    def _call_once(self, op: Op, values: Values) -> None:
        index = int(op.options.get("init_subgraph_index", -1))
        if index in self._called:
            return
        if not 0 < index < len(self._graphs):
            raise ModelError(f"{self.label}: CALL_ONCE calls subgraph {index}, which the file does not have")
        self._called.add(index)
        body = self._graphs[index]
        for inner in body.ops:
            if inner.type not in VARIABLE_OPS:
                raise ModelError(f"{self.label}: CALL_ONCE's subgraph '{body.name}' computes with {inner.type}; "
                                 f"npuplan run holds initialisers of constants and variables only")
            self.run(inner, _body_values(body, self.label))


def _body_values(body: Graph, label: str) -> Values:
    """The initialiser's own tensors: constants only (it has no feature maps)."""
    def values(t: Tensor) -> np.ndarray:
        if t.data is None:
            raise ModelError(f"{label}: CALL_ONCE's subgraph '{body.name}' reads '{t.name}', which is not a constant")
        return np.asarray(t.data)
    return values

