"""Execution order as Vela's legacy core builds it: a depth-first post-order from the outputs.

Vela visits each op's inputs, last first, before the op itself, starting from the subgraph outputs;
on residual blocks this runs the main branch before the shortcut (TFLite files often list the
shortcut first). Ops that feed no output keep their relative order at the end.
"""

from __future__ import annotations

from dataclasses import replace

from npuplan.ir.graph import Graph, Op, Tensor
from npuplan.ir.lowered import LoweredOp, NpuOp, reads, writes
from npuplan.records import record


# Operators on resource variables: their effects order them beyond their tensors (CALL_ONCE
# initialises the variables before any is read; an ASSIGN_VARIABLE stores after the reads before it).
EFFECTS = frozenset({"CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"})


def _effect_chain(graph: Graph) -> dict[int, Op]:
    """Each effect op's predecessor among the effect ops, in the file's order (by op identity)."""
    effects = [op for op in graph.ops if op.type in EFFECTS]
    return {id(later): earlier for earlier, later in zip(effects, effects[1:])}


def vela_order(graph: Graph) -> Graph:
    """A copy of ``graph`` with its ops in Vela's post-order (iterative, no recursion limit); an op
    on resource variables also comes after the one before it in the file (``EFFECTS``)."""
    producers = graph.producers()
    chain = _effect_chain(graph)
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
            while next_input < len(op.inputs) + 1:
                if next_input == len(op.inputs):  # after the inputs: the effect op before this one
                    next_input += 1
                    child = chain.get(id(op))
                    if child is not None and id(child) not in done and id(child) not in pending:
                        stack.append((op, next_input))
                        stack.append((child, 0))
                        pending.add(id(child))
                        break
                    continue
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


# TFLite operators whose NPU operations Vela runs as separate passes, each where its own input
# is ready (a concatenation's copies); the others keep their operations together, in order.
_SPLIT_UNITS = frozenset({"CONCATENATION", "PACK"})


@record(eq=False, slots=False)
class _Unit:
    """Lowered ops run together: a TFLite operator's, or one copy of a concatenation."""

    ops: tuple[LoweredOp, ...]
    reads: tuple[Tensor, ...]  # feature maps read from outside the unit, in input order
    writes: tuple[Tensor, ...]


def _op_reads(op: LoweredOp) -> tuple[Tensor, ...]:
    return tuple(t for t in reads(op) if not t.is_constant)


def _units(ops: tuple[LoweredOp, ...]) -> list[_Unit]:
    groups: list[list[LoweredOp]] = []
    last_key: object = None
    for op in ops:
        key = (op.source_index, op.tflite_type) if isinstance(op, NpuOp) else id(op)
        if groups and key == last_key and op.tflite_type not in _SPLIT_UNITS:
            groups[-1].append(op)
        else:
            groups.append([op])
        last_key = key
    units = []
    for group in groups:
        written = tuple(dict.fromkeys(t for op in group for t in writes(op)))
        inner = {id(t) for t in written}
        outside = tuple(t for op in group for t in _op_reads(op) if id(t) not in inner)
        units.append(_Unit(tuple(group), outside, written))
    return units


def _needed(units: list[_Unit], outputs: tuple[Tensor, ...]) -> list[_Unit]:
    """The units some output depends on, in order."""
    producers: dict[int, list[_Unit]] = {}
    for unit in units:
        for t in unit.writes:
            producers.setdefault(id(t), []).append(unit)
    seen: set[int] = set()
    stack = [p for t in outputs for p in producers.get(id(t), [])]
    while stack:
        unit = stack.pop()
        if id(unit) not in seen:
            seen.add(id(unit))
            stack += [p for t in unit.reads for p in producers.get(id(t), [])]
    return [unit for unit in units if id(unit) in seen]


def vela_pass_order(ops: tuple[LoweredOp, ...], outputs: tuple[Tensor, ...]) -> tuple[LoweredOp, ...]:
    """``ops`` in the order Vela's legacy core packs its passes (``pack_into_passes``): from the
    outputs, an operator is taken once every reader of every tensor it writes has been taken (a
    graph output counts as one reader more), then the producers of its inputs, first input first
    (each tensor's producers last first); the order is the reverse of that.

    Unlike a post-order from the outputs, this runs a feature map read by two branches only after
    both are reached (a second output such as an ARG_MAX runs before the branch it leaves), and the
    copies of a concatenation each just after their input's branch. An operator's own NPU
    operations stay together in their order; ops no output depends on keep their order at the end."""
    units = _units(ops)
    producers: dict[int, list[_Unit]] = {}
    readers: dict[int, int] = {id(t): 1 for t in outputs}
    for unit in _needed(units, outputs):
        for t in unit.writes:
            producers.setdefault(id(t), []).append(unit)
        for t in unit.reads:
            readers[id(t)] = readers.get(id(t), 0) + 1
    reached: dict[int, int] = {}
    outputs_seen: dict[int, int] = {}
    taken: list[_Unit] = []
    stack: list[Tensor | _Unit] = list(reversed(outputs))
    while stack:
        item = stack.pop()
        if isinstance(item, Tensor):
            reached[id(item)] = reached.get(id(item), 0) + 1
            if reached[id(item)] == readers.get(id(item), 0):
                stack += producers.get(id(item), [])  # popped last first
            continue
        if id(item) not in outputs_seen:  # first visit: outputs nothing reads count as reached
            outputs_seen[id(item)] = sum(readers.get(id(t), 0) == 0 for t in item.writes)
        outputs_seen[id(item)] += 1
        if outputs_seen[id(item)] == len(item.writes):
            taken.append(item)
            stack += reversed(item.reads)  # popped first input first
    order = [op for unit in reversed(taken) for op in unit.ops]
    placed = {id(op) for op in order}
    order += [op for op in ops if id(op) not in placed]
    return tuple(order) if _keeps_dependencies(ops, order) else ops


def _keeps_dependencies(ops: tuple[LoweredOp, ...], order: list[LoweredOp]) -> bool:
    """Whether ``order`` holds ``ops`` and every op in it reads each tensor after all the ops
    before it in ``ops`` that write it."""
    position = {id(op): k for k, op in enumerate(ops)}
    writers: dict[int, list[int]] = {}
    for k, op in enumerate(ops):
        for t in writes(op):
            writers.setdefault(id(t), []).append(k)
    done: set[int] = set()
    for op in order:
        at = position.get(id(op))
        if at is None or any(w < at and w not in done for t in _op_reads(op) for w in writers.get(id(t), ())):
            return False
        done.add(at)
    return len(done) == len(ops)
