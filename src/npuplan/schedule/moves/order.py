"""Operator order: the topological order of a lowered graph with the least whole-feature-map peak.

The file's order is one topological order of the graph among many; on a network with branches it
is often far from the one that needs the least memory (Serenity, MLSys 2020). ``least_peak_order``
searches the orders by dynamic programming over the graph's frontier (the set of ops already run),
as Serenity does, with three reductions that keep it exact on most graphs and fast on all of them:

- runs of ops linked one to one (an op's only successor has it as its only predecessor) move as one
  step, so chains stay contiguous, which is also what lets the cascade search stripe them;
- twins (ops with the same predecessors, successors and tensors: the box writes of dilation
  phases) run in file order, as swapping two changes no step's memory: n twins give n + 1
  frontiers where they gave 2^n (``_twin_chains``);
- each level keeps at most ``MAX_STATES`` frontiers (the least peak first, then the least memory
  held), so the search is exact while the frontier count stays under it and a beam search beyond.

The beam prunes by the peak so far, which is myopic: where many cheap ops are ready at once (the
copies of an unstacked sequence) the frontiers that run them all early fill the beam and the ones
that defer them are lost. So the search also proposes the demand order (``demand_order``: each
op just before the first op that needs it) and the order with the lesser peak is kept. As peaks
only grow along a path, the search stops once every frontier of a level peaks where it can no
longer beat the file order or the demand order (a recurrent network's file order is often already
the least): the answer is then known, so this saves time without changing it.

The memory counted is each feature map's whole storage from its first access to its last (network
inputs from the start, outputs to the end), the peak of the max schedule under that order. Which
order plans best after cascading is the planner's call: ``api.plan`` plans the file order and this
one and keeps the better plan.

Dependencies keep every read after the writes before it in the file and every write after the
accesses before it, except that writes of disjoint boxes of one tensor (producers writing their
slice of a concatenation in place) may run in any order.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import LoweredGraph, LoweredOp, NpuOp
from npuplan.records import record
from npuplan.schedule.moves.order_wide import WideGraph, WideLevel, from_wide, to_wide, wide_graph, wide_step

# Frontiers kept per step of the search (the beam beyond which it is no longer exact): at most
# MAX_STATES, fewer on large graphs so that ops x frontiers stays near STATE_STEPS.
MAX_STATES = 512
MIN_STATES = 16
STATE_STEPS = 60_000
# (frontier, ready op) pairs of a level from which it is stepped as arrays (``order_wide``), and
# below which it goes back to Python: numpy's fixed cost per call pays off only on wide levels.
WIDE_PAIRS = 192
NARROW_PAIRS = 48


def _accesses(op: LoweredOp) -> tuple[list[Tensor], list[Tensor]]:
    """The non-constant tensors ``op`` reads and writes (a CPU op's variable inputs are both)."""
    if isinstance(op, NpuOp):
        reads = [t for t in (op.ifm, op.ifm2) if t is not None and not t.is_constant]
        return reads, [op.ofm]
    inputs = [t for t in op.op.inputs if t is not None and not t.is_constant]
    writes = [t for t in op.op.outputs if t is not None] + [t for t in inputs if t.is_variable]
    return inputs, writes


def _box_write(op: LoweredOp) -> bool:
    return isinstance(op, NpuOp) and op.ofm_write_offset is not None


def dependencies(graph: LoweredGraph) -> list[frozenset[int]]:
    """For each op (by position in ``graph.ops``), the positions of the ops it must follow."""
    readers: dict[str, list[int]] = {}
    writers: dict[str, list[int]] = {}
    preds: list[frozenset[int]] = []
    for k, op in enumerate(graph.ops):
        reads, writes = _accesses(op)
        found: set[int] = set()
        for tensor in reads:
            found.update(writers.get(tensor.name, ()))
        for tensor in writes:
            found.update(readers.get(tensor.name, ()))
            if not _box_write(op):
                found.update(writers.get(tensor.name, ()))
            else:
                found.update(w for w in writers.get(tensor.name, ()) if not _box_write(graph.ops[w]))
        found.discard(k)
        preds.append(frozenset(found))
        for tensor in reads:
            readers.setdefault(tensor.name, []).append(k)
        for tensor in writes:
            writers.setdefault(tensor.name, []).append(k)
    return preds


def reordered(graph: LoweredGraph, order: tuple[int, ...]) -> LoweredGraph:
    """``graph`` with its ops in ``order`` (positions in ``graph.ops``; must be topological)."""
    if order == tuple(range(len(graph.ops))):
        return graph
    return replace(graph, ops=tuple(graph.ops[k] for k in order))


def is_topological(graph: LoweredGraph, order: tuple[int, ...]) -> bool:
    """Whether ``order`` runs every op of ``graph`` once, after every op it depends on."""
    if sorted(order) != list(range(len(graph.ops))):
        return False
    position = {k: i for i, k in enumerate(order)}
    return all(position[p] < position[k] for k, preds in enumerate(dependencies(graph)) for p in preds)


class _Memory:
    """Whole-feature-map storage of a graph's tensors, as bit masks over op positions."""

    def __init__(self, graph: LoweredGraph, sizes: dict[str, int]) -> None:
        names: dict[str, int] = {}
        self.size: list[int] = []
        self.access_mask: list[int] = []
        op_tensors: list[list[int]] = []
        for k, op in enumerate(graph.ops):
            reads, writes = _accesses(op)
            ids = []
            for tensor in reads + writes:
                t = names.get(tensor.name)
                if t is None:
                    t = names[tensor.name] = len(self.size)
                    self.size.append(sizes.get(tensor.name, tensor.size_bytes))
                    self.access_mask.append(0)
                self.access_mask[t] |= 1 << k
                ids.append(t)
            op_tensors.append(list(dict.fromkeys(ids)))
        pinned = {names[t.name] for t in graph.outputs if t.name in names}  # held to the end
        # per op: (tensor bit, bytes, mask of the ops that access the tensor) for each tensor it
        # touches; a pinned tensor's mask is -1 (every op: its accesses never all end)
        self.op_tensors = tuple(
            tuple((1 << t, self.size[t], -1 if t in pinned else self.access_mask[t]) for t in ids) for ids in op_tensors)
        self.start = [names[t.name] for t in graph.inputs if t.name in names]

    def initial(self) -> tuple[int, int]:
        """(bytes held, tensors held as a bit mask) before the first op: the network inputs."""
        return sum(self.size[t] for t in self.start), sum(1 << t for t in set(self.start))

    def run(self, done: int, held_bytes: int, held: int, k: int) -> tuple[int, int, int]:
        """Run op ``k`` after the ops in mask ``done``: (step peak, bytes held after, tensors held
        after). Only the op's own tensors start or end at its step."""
        pending = ~(done | (1 << k))
        step = held_bytes
        for bit, size, accesses in self.op_tensors[k]:
            if not held & bit:
                step += size
                held_bytes += size
                held |= bit
            if not accesses & pending:
                held_bytes -= size
                held &= ~bit
        return step, held_bytes, held


def order_peak_bytes(graph: LoweredGraph, order: tuple[int, ...], sizes: dict[str, int]) -> int:
    """The whole-feature-map peak of running ``graph``'s ops in ``order``."""
    return _order_peak(_Memory(graph, sizes), order)


def _order_peak(memory: _Memory, order: tuple[int, ...]) -> int:
    held_bytes, held = memory.initial()
    done, peak = 0, held_bytes
    for k in order:
        step, held_bytes, held = memory.run(done, held_bytes, held, k)
        done |= 1 << k
        peak = max(peak, step)
    return peak


# A frontier of the search (a set of ops done) is a plain tuple, built in the inner loop:
# (rank, bytes held, tensors held as a bit mask, ops ready next, path), where ``rank`` packs
# (peak so far, bytes held, breaks) into one int ordered as that tuple (``_Ranks``) and the path
# is (last op, the path before it), a shared linked list. ``breaks`` counts the ops run right
# after an op they do not read from (each one may cut a cascade): among frontiers of equal peak
# and memory, the fewer the better.
_Frontier = tuple[int, int, int, tuple[int, ...], Any]


@record(eq=False)
class _Ranks:
    """(peak bytes, held bytes, breaks) as one int that compares as the tuple does: each field
    below its bound (``held_bound`` over any bytes held, ``breaks_bound`` over any break count)."""

    held_bound: int
    breaks_bound: int

    def pack(self, peak_bytes: int, held_bytes: int, breaks: int) -> int:
        return (peak_bytes * self.held_bound + held_bytes) * self.breaks_bound + breaks

    def peak_bytes(self, rank: int) -> int:
        return rank // (self.held_bound * self.breaks_bound)

    def held_bytes(self, rank: int) -> int:
        return rank // self.breaks_bound % self.held_bound

    def breaks(self, rank: int) -> int:
        return rank % self.breaks_bound


class OrderMemo:
    """``least_peak_order``'s answers by all that decides them: each op's dependencies and the
    (bytes, accessing ops) of the maps it touches, the network inputs and the beam width. Lowerings
    of one model that differ only where the search cannot see (a recurrent network's with and
    without concatenation writes, where it has none) share one search."""

    def __init__(self) -> None:
        self._found: dict[tuple[object, ...], tuple[int, ...]] = {}

    def __len__(self) -> int:
        """How many searches the memo holds."""
        return len(self._found)

    def answer(self, key: tuple[object, ...], search: Callable[[], tuple[int, ...]]) -> tuple[int, ...]:
        """The order found for ``key`` before, else ``search()``'s (then kept)."""
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = search()
        return found


def least_peak_order(graph: LoweredGraph, sizes: dict[str, int], *, max_states: int | None = None,
                     memo: OrderMemo | None = None) -> tuple[int, ...]:
    """A topological order of ``graph.ops`` with the least whole-feature-map peak the search finds
    (exact while every level holds at most ``max_states`` frontiers, by default ``MAX_STATES``
    scaled down on large graphs), never above the file order's; ties keep ops that feed each other
    adjacent. ``sizes`` gives each feature map's storage bytes by name (others count their
    element bytes). ``memo`` answers a search it has seen (``OrderMemo``) without running it."""
    count = len(graph.ops)
    if count < 3:
        return tuple(range(count))
    limit = max_states or max(MIN_STATES, min(MAX_STATES, STATE_STEPS // count))
    preds = dependencies(graph)
    memory = _Memory(graph, sizes)
    if memo is None:
        return _least_peak(graph, preds, memory, limit)
    return memo.answer((tuple(preds), memory.op_tensors, tuple(memory.start), limit),
                       lambda: _least_peak(graph, preds, memory, limit))


def _least_peak(graph: LoweredGraph, preds: list[frozenset[int]], memory: _Memory,
                limit: int) -> tuple[int, ...]:
    """``least_peak_order`` for the dependencies ``preds`` and maps ``memory`` of ``graph``."""
    count = len(graph.ops)
    identity = tuple(range(count))
    succs: list[list[int]] = [[] for _ in range(count)]
    for k, ps in enumerate(preds):
        for p in ps:
            succs[p].append(k)
    after = _twin_chains(memory, preds, succs)
    pred_masks = [sum(1 << p for p in ps) | (0 if first is None else 1 << first)
                  for ps, first in zip(preds, _chained_before(after))]
    followers = [s + ([] if a is None else [a]) for s, a in zip(succs, after)]
    held_bytes, held = memory.initial()
    ranks = _Ranks(held_bound=held_bytes + sum(memory.size) + 1, breaks_bound=count + 1)
    ready = tuple(k for k, mask in enumerate(pred_masks) if not mask)
    level: dict[int, _Frontier] = {0: (ranks.pack(held_bytes, held_bytes, 0), held_bytes, held, ready, None)}
    demand = demand_order(graph, preds)
    identity_peak, demand_peak = _order_peak(memory, identity), _order_peak(memory, demand)
    fallback = demand if demand_peak < identity_peak else identity
    path = _searched_path(level, memory, preds, pred_masks, followers, ranks, limit,
                          lambda least: _cannot_win(least, identity_peak, demand_peak))
    if path is None:
        return fallback
    found: list[int] = []
    while path is not None:
        found.append(path[0])
        path = path[1]
    searched = tuple(reversed(found))
    searched_peak = _order_peak(memory, searched)
    order, peak = (searched, searched_peak) if searched_peak <= demand_peak else (demand, demand_peak)
    return identity if peak >= identity_peak else order


def _searched_path(level: dict[int, _Frontier], memory: _Memory, preds: list[frozenset[int]],
                   pred_masks: list[int], followers: list[list[int]], ranks: _Ranks, limit: int,
                   lost: Any) -> Any:
    """The path (last op, path before) of the search's last frontier, stepping from ``level`` one op
    at a time, each level in Python or, where it is wide, as arrays (``order_wide``); None once
    ``lost(least peak of a level)`` says the search can no longer win."""
    wide: WideLevel | None = None
    arrays: WideGraph | None = None
    for _ in range(len(memory.op_tensors)):
        if wide is None and sum(len(state[3]) for state in level.values()) >= WIDE_PAIRS:
            arrays = arrays or wide_graph(memory.op_tensors, preds, pred_masks, followers)
            wide = to_wide(level, arrays, lambda rank: (ranks.peak_bytes(rank), ranks.breaks(rank)))
        if wide is not None and arrays is not None:
            least, wide = wide_step(wide, arrays, limit)
            if lost(least):
                return None
            if wide.pairs() < NARROW_PAIRS:
                level, wide = from_wide(wide, ranks.pack), None
            continue
        following = _reached(level, memory, preds, ranks)
        if lost(ranks.peak_bytes(min(r[0] for r in following.values()))):
            return None
        kept = (heapq.nsmallest(limit, following.items(), key=lambda item: item[1][0]) if len(following) > limit
                else following.items())
        level = _advanced(kept, pred_masks, followers, ranks)
    return wide.paths[0] if wide is not None else next(iter(level.values()))[4]


def _twin_chains(memory: _Memory, preds: list[frozenset[int]], succs: list[list[int]]) -> list[int | None]:
    """For each op, the next op (by position) of its twins, or None: twins are ops with the same
    predecessors, successors and tensors (the writes of one tensor's boxes from one input: dilation
    phases, split writes). Swapping two twins changes no step's memory nor any break, so every order
    has an equal one running each op's twins in file order; the search only builds those."""
    classes: dict[tuple[Any, ...], list[int]] = {}
    for k, accessed in enumerate(memory.op_tensors):
        classes.setdefault((preds[k], tuple(sorted(succs[k])), accessed), []).append(k)
    after: list[int | None] = [None] * len(preds)
    for members in classes.values():
        for k, following in zip(members, members[1:]):
            after[k] = following
    return after


def _chained_before(after: list[int | None]) -> list[int | None]:
    """The inverse of ``_twin_chains``: each op's previous twin, or None."""
    before: list[int | None] = [None] * len(after)
    for k, following in enumerate(after):
        if following is not None:
            before[following] = k
    return before


def _cannot_win(least_peak_bytes: int, identity_peak_bytes: int, demand_peak_bytes: int) -> bool:
    """Whether a search whose frontiers all peak at ``least_peak_bytes`` or more can no longer
    change the answer: the order it finds peaks at least as high (peaks only grow along a path),
    so it loses to the file order on a tie and to the demand order only when strictly above it
    (the searched order wins a tie with the demand order)."""
    if demand_peak_bytes < identity_peak_bytes:
        return least_peak_bytes > demand_peak_bytes
    return least_peak_bytes >= identity_peak_bytes


def _reached(level: dict[int, _Frontier], memory: _Memory, preds: list[frozenset[int]],
             ranks: _Ranks) -> dict[int, tuple[int, int, int, _Frontier]]:
    """Each frontier one op beyond ``level``'s, by its ops done: (rank, tensors held, the op run,
    the frontier before it), the least rank kept (the first reached on a tie). Only the ones the
    beam keeps are built (their ready ops are the costly part). ``memory.run`` inlined: this is
    the search's inner loop.

    What is held after a set of ops depends on the set only (each map from its first access to its
    last), so the frontiers reaching one set differ only in their peak and breaks: a set reached
    before is compared on those alone."""
    op_tensors = memory.op_tensors
    bits = [1 << k for k in range(len(op_tensors))]
    held_bound, breaks_bound = ranks.held_bound, ranks.breaks_bound
    unit = held_bound * breaks_bound
    following: dict[int, tuple[int, int, int, _Frontier]] = {}
    for done, state in level.items():
        rank, held_bytes, held, ready, path = state
        last = -1 if path is None else path[0]
        peak = rank // unit
        floor = peak * unit
        breaks = rank % breaks_bound
        for k in ready:
            after = done | bits[k]
            best = following.get(after)
            if best is not None:
                if best[0] < floor:  # its peak is below this frontier's already
                    continue
                step = held_bytes
                for bit, size, _accesses in op_tensors[k]:
                    if not held & bit:
                        step += size
                candidate = ((peak if peak >= step else step) * unit + best[0] % unit - best[0] % breaks_bound
                             + breaks + (last not in preds[k]))
                if best[0] > candidate:
                    following[after] = (candidate, best[1], k, state)
                continue
            step = b = held_bytes
            h = held
            pending = ~after
            for bit, size, accesses in op_tensors[k]:
                if not h & bit:
                    step += size
                    b += size
                    h |= bit
                if not accesses & pending:
                    b -= size
                    h &= ~bit
            following[after] = (((peak if peak >= step else step) * held_bound + b) * breaks_bound + breaks
                                + (last not in preds[k]), h, k, state)
    return following


def _advanced(kept: Any, pred_masks: list[int], followers: list[list[int]],
              ranks: _Ranks) -> dict[int, _Frontier]:
    """The next level: each frontier of ``kept`` ((ops done, (rank, tensors held, the op run, the
    frontier before it)), as ``_reached`` gives them) with its bytes held and ready ops."""
    breaks_bound, held_bound = ranks.breaks_bound, ranks.held_bound
    level: dict[int, _Frontier] = {}
    for done, (rank, held, k, before) in kept:
        now_ready = [r for r in before[3] if r != k]
        for s in followers[k]:
            mask = pred_masks[s]
            if mask & done == mask:
                now_ready.append(s)
        now_ready.sort()
        level[done] = (rank, rank // breaks_bound % held_bound, held, tuple(now_ready), (k, before[4]))
    return level


def demand_order(graph: LoweredGraph, preds: list[frozenset[int]] | None = None) -> tuple[int, ...]:
    """The topological order that runs each op as late as its first reader allows: the ops nothing
    depends on in file order, each first running (depth first, in file order) what it depends on
    that has not run yet. ``preds`` is ``dependencies(graph)`` when the caller has it."""
    preds = dependencies(graph) if preds is None else preds
    needed = {p for ps in preds for p in ps}
    done = [False] * len(graph.ops)
    order: list[int] = []
    for sink in (k for k in range(len(graph.ops)) if k not in needed):
        stack = [(sink, iter(sorted(preds[sink])))]
        while stack:
            k, pending = stack[-1]
            first = next((p for p in pending if not done[p]), None)
            if first is not None:
                stack.append((first, iter(sorted(preds[first]))))
                continue
            stack.pop()
            if not done[k]:
                done[k] = True
                order.append(k)
    return tuple(order)
