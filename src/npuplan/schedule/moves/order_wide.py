"""The operator-order search's wide levels as arrays (``order.least_peak_order``).

Where a level of the search holds many frontiers, each with many ready ops (a recurrent network's
input projections, all ready at the start), stepping it op by op in Python costs a few hundred
nanoseconds for each of thousands of (frontier, op) pairs. Here a level is a set of arrays, the
sets of ops done as rows of 64-bit words, tensors held and ops ready as rows of flags, and one
step runs every pair at once. It gives the level ``order._reached`` and ``order._advanced`` give, frontier for frontier
and in the same order (so the search's ties go the same way): each set of ops done reached by its
least (peak, breaks), the first reached on a tie; the ``limit`` least by (peak, bytes held, breaks),
the first reached on a tie, in that order, or all of them in the order first reached.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from npuplan.records import record

_ONE = np.uint64(1)
_INT64_MAX = int(np.iinfo(np.int64).max)


def _words(count: int) -> int:
    return (count + 63) // 64


def _rows(masks: Sequence[int], width: int) -> np.ndarray:
    """Bit masks (Python ints) as rows of ``width`` little-endian 64-bit words."""
    raw = b"".join(m.to_bytes(8 * width, "little") for m in masks)
    return np.frombuffer(raw, dtype="<u8").reshape(len(masks), width).astype(np.uint64)


def _masks(rows: np.ndarray) -> list[int]:
    """The inverse of ``_rows``."""
    return [int.from_bytes(row.tobytes(), "little") for row in np.ascontiguousarray(rows, dtype="<u8")]


def _flags(rows: np.ndarray, count: int) -> np.ndarray:
    """Word rows as rows of ``count`` flags."""
    bits = np.unpackbits(np.ascontiguousarray(rows, dtype="<u8").view(np.uint8), axis=1, bitorder="little")
    return bits[:, :count].astype(bool)


def _bit_set(rows: np.ndarray, index: np.ndarray, bit: np.ndarray) -> np.ndarray:
    """Whether bit ``bit[i]`` is set in ``rows[index[i]]``."""
    return ((rows[index, bit >> 6] >> (bit & 63).astype(np.uint64)) & _ONE).astype(bool)


@record(eq=False)
class WideGraph:
    """A search's constants as arrays: for each op its tensors (padded with the empty tensor ``T``)
    and the masks of its dependencies (for breaks) and of what must run before it (for readiness),
    its followers (flattened, ``follower_starts`` delimiting each op's); for each tensor its bytes,
    whether it is held to the end, the mask of the ops that access it (a Python int) and their
    count."""

    op_count: int
    tensor_count: int
    op_tensors: np.ndarray
    tensor_bytes: np.ndarray
    pinned: np.ndarray
    access_masks: tuple[int, ...]
    access_counts: np.ndarray
    dependencies: np.ndarray
    before: np.ndarray
    follower_starts: np.ndarray
    followers: np.ndarray
    op_hashes: np.ndarray


def wide_graph(op_tensors: Sequence[Sequence[tuple[int, int, int]]], preds: Sequence[frozenset[int]],
               pred_masks: Sequence[int], followers: Sequence[Sequence[int]]) -> WideGraph:
    """``WideGraph`` of the search's lists (``order._Memory.op_tensors``: (tensor bit, bytes, access
    mask or -1 when held to the end) per tensor of each op)."""
    count = len(op_tensors)
    tensors: dict[int, tuple[int, int]] = {}
    for entries in op_tensors:
        for bit, size, accesses in entries:
            tensors[bit.bit_length() - 1] = (size, accesses)
    tensor_count = max(tensors, default=-1) + 1
    width = max(1, max(map(len, op_tensors), default=1))
    ids = np.full((count, width), tensor_count, dtype=np.int64)
    for k, entries in enumerate(op_tensors):
        ids[k, : len(entries)] = [bit.bit_length() - 1 for bit, _, _ in entries]
    size_of = np.zeros(tensor_count + 1, dtype=np.int64)
    pinned = np.ones(tensor_count + 1, dtype=bool)
    access_masks = [0] * (tensor_count + 1)
    for t, (size, accesses) in tensors.items():
        size_of[t] = size
        pinned[t] = accesses == -1
        access_masks[t] = 0 if accesses == -1 else accesses
    words = _words(count)
    starts = np.zeros(count + 1, dtype=np.int64)
    starts[1:] = np.cumsum([len(f) for f in followers])
    return WideGraph(
        op_count=count, tensor_count=tensor_count, op_tensors=ids, tensor_bytes=size_of, pinned=pinned,
        access_masks=tuple(access_masks),
        access_counts=np.array([m.bit_count() for m in access_masks], dtype=np.int32), dependencies=_rows([sum(1 << p for p in ps) for ps in preds], words),
        before=_rows(list(pred_masks), words), follower_starts=starts,
        followers=np.array([s for f in followers for s in f], dtype=np.int64),
        op_hashes=np.random.default_rng(count).integers(0, 1 << 63, size=count, dtype=np.uint64) * np.uint64(2) + _ONE)


@record(eq=False)
class WideLevel:
    """Frontiers as arrays, one row each: ops done as a word row, tensors held (with the empty
    tensor ``WideGraph.tensor_count``, never held) and ops ready as rows of flags; the sum of the
    ops' hashes done (``WideGraph.op_hashes``, wrapping: a set's hash is the sum of its members',
    so a step adds one), bytes held, peak so far, breaks and the
    last op run (-1 for none); for each tensor, how many of the ops that access it are still to run
    (``pending``: a tensor ends at the step of its last one); ``paths`` the ops run, as ``order``'s
    linked (last op, path before) tuples."""

    done: np.ndarray
    hashes: np.ndarray
    held: np.ndarray
    ready: np.ndarray
    held_bytes: np.ndarray
    peak: np.ndarray
    breaks: np.ndarray
    last: np.ndarray
    pending: np.ndarray
    paths: list[Any]

    def __len__(self) -> int:
        return len(self.paths)

    def pairs(self) -> int:
        """How many (frontier, ready op) pairs the level has: the steps its next level tries."""
        return int(self.ready.sum())


def to_wide(level: dict[int, tuple[int, int, int, tuple[int, ...], Any]], graph: WideGraph,
            unpack: Any) -> WideLevel:
    """``order``'s level (ops done -> (rank, bytes held, tensors held, ready ops, path)) as arrays;
    ``unpack(rank)`` gives (peak, breaks)."""
    words, tensor_words = _words(graph.op_count), _words(graph.tensor_count + 1)
    states = list(level.values())
    peaks_breaks = [unpack(s[0]) for s in states]
    done = _rows(list(level), words)
    ready = np.zeros((len(states), graph.op_count), dtype=bool)
    for row, state in enumerate(states):
        ready[row, list(state[3])] = True
    return WideLevel(
        done=done, hashes=(_flags(done, graph.op_count) * graph.op_hashes).sum(axis=1, dtype=np.uint64),
        held=_flags(_rows([s[2] for s in states], tensor_words), graph.tensor_count + 1), ready=ready,
        held_bytes=np.array([s[1] for s in states], dtype=np.int64),
        peak=np.array([p for p, _ in peaks_breaks], dtype=np.int64),
        breaks=np.array([b for _, b in peaks_breaks], dtype=np.int64),
        last=np.array([-1 if s[4] is None else s[4][0] for s in states], dtype=np.int64),
        pending=_pending(graph, list(level), [s[2] for s in states]), paths=[s[4] for s in states])


def _pending(graph: WideGraph, done: list[int], held: list[int]) -> np.ndarray:
    """For each frontier (ops ``done``, tensors ``held`` as masks) and tensor, how many of the ops
    that access it are not done. Only a held tensor has accesses both done and to come; one not
    held has either all of them to come or none, and then no op to run touches it."""
    pending = np.tile(graph.access_counts, (len(done), 1))
    masks = graph.access_masks
    for row, (ops, tensors) in enumerate(zip(done, held)):
        while tensors:
            low = tensors & -tensors
            t = low.bit_length() - 1
            pending[row, t] -= (masks[t] & ops).bit_count()
            tensors ^= low
    return pending


def from_wide(wide: WideLevel, pack: Any) -> dict[int, tuple[int, int, int, tuple[int, ...], Any]]:
    """The inverse of ``to_wide``; ``pack(peak, held bytes, breaks)`` gives a rank."""
    ready_bits = wide.ready
    level = {}
    held_masks = [int.from_bytes(r.tobytes(), "little") for r in np.packbits(wide.held, axis=1, bitorder="little")]
    for row, (done, held) in enumerate(zip(_masks(wide.done), held_masks)):
        held_bytes = int(wide.held_bytes[row])
        level[done] = (pack(int(wide.peak[row]), held_bytes, int(wide.breaks[row])), held_bytes, held,
                       tuple(int(k) for k in np.flatnonzero(ready_bits[row])), wide.paths[row])
    return level


def wide_step(level: WideLevel, graph: WideGraph, limit: int) -> tuple[int, WideLevel]:
    """One step of the search from ``level``: the least peak of every frontier one op beyond it,
    and the next level (the ``limit`` least of them, as ``order`` keeps them)."""
    rows, ops = _pairs(level.ready)
    after = level.done[rows]
    after[np.arange(len(rows)), ops >> 6] |= _ONE << (ops & 63).astype(np.uint64)
    tensors = graph.op_tensors[ops]
    sizes = graph.tensor_bytes[tensors]
    fresh = ~level.held[rows[:, None], tensors]
    ended = ~graph.pinned[tensors] & (level.pending[rows[:, None], tensors] == 1)  # the op is its last access
    step = level.held_bytes[rows] + (sizes * fresh).sum(axis=1)
    held_bytes = step - (sizes * ended).sum(axis=1)
    peak = np.maximum(level.peak[rows], step)
    last = level.last[rows]
    follows = np.zeros(len(rows), dtype=bool)
    known = last >= 0
    follows[known] = _bit_set(graph.dependencies, ops[known], last[known])
    breaks = level.breaks[rows] + ~follows
    hashes = level.hashes[rows] + graph.op_hashes[ops]
    first, winners = _set_winners(after, hashes, peak * (graph.op_count + 1) + breaks)
    order = np.argsort(first, kind="stable")  # sets in the order first reached
    chosen = winners[order]
    if len(chosen) > limit:
        chosen = chosen[np.lexsort((first[order], breaks[chosen], held_bytes[chosen], peak[chosen]))[:limit]]
    return int(peak.min()), _next_level(level, graph, chosen, rows, ops, after, hashes, tensors, ended, held_bytes,
                                         peak, breaks)


def _pairs(ready: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.nonzero(ready)`` (row-major), through the flat indices: numpy's two-dimensional
    ``nonzero`` costs several times as much on a level's few thousand flags."""
    rows, ops = np.divmod(np.flatnonzero(ready), ready.shape[1])
    return rows, ops


def _set_winners(after: np.ndarray, hashes: np.ndarray, ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group the pairs by their set of ops done (rows of ``after``, told apart by ``hashes`` unless
    two sets share one): per set, in the order of their hashes, its first pair and the first pair
    of its least ``ranks``."""
    count = len(hashes)
    by_hash = np.argsort(hashes)
    sorted_hashes = hashes[by_hash]
    new = np.empty(count, dtype=bool)
    new[:1] = True
    np.not_equal(sorted_hashes[1:], sorted_hashes[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    first = np.minimum.reduceat(by_hash, starts)
    lengths = np.diff(starts, append=count)
    if (np.array_equal(after[by_hash], np.repeat(after[first], lengths, axis=0))
            and int(ranks.max(initial=0)) < _INT64_MAX // max(count, 1) - 1):
        # each pair's (rank, position) as one int: the least per set is its winner
        return first, np.minimum.reduceat((ranks * count + np.arange(count))[by_hash], starts) % count
    # two sets of one hash (or ranks too wide to pack): tell the sets apart by their words
    keys = np.ascontiguousarray(after, dtype="<u8").view(np.dtype((np.void, 8 * after.shape[1]))).ravel()
    _, first, which = np.unique(keys, return_index=True, return_inverse=True)
    by_set = np.lexsort((np.arange(count), ranks, which))
    grouped = which[by_set]
    return first, by_set[np.concatenate(([True], grouped[1:] != grouped[:-1]))]


def _next_level(level: WideLevel, graph: WideGraph, chosen: np.ndarray, rows: np.ndarray, ops: np.ndarray,
                after: np.ndarray, hashes: np.ndarray, tensors: np.ndarray, ended: np.ndarray, held_bytes: np.ndarray,
                peak: np.ndarray, breaks: np.ndarray) -> WideLevel:
    """The level of the ``chosen`` (frontier, op) pairs: tensors held with the op's own set and
    its ended ones cleared, ready ops without it and with its followers whose ops before are done."""
    count = len(chosen)
    at = np.arange(count)
    held = level.held[rows[chosen]]
    pending = level.pending[rows[chosen]]
    # an op's tensors are distinct (but for the padding, never held nor ended): no row and tensor
    # is written twice, so every column is set, then the ended ones cleared, at once
    t = tensors[chosen]
    owners = np.broadcast_to(at[:, None], t.shape)
    real = t < graph.tensor_count
    held[owners[real], t[real]] = True
    pending[owners[real], t[real]] -= 1
    gone = ended[chosen]
    held[owners[gone], t[gone]] = False
    done = after[chosen]
    k = ops[chosen]
    ready = level.ready[rows[chosen]]
    ready[at, k] = False
    lengths = graph.follower_starts[k + 1] - graph.follower_starts[k]
    owner = np.repeat(at, lengths)
    offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    follower = graph.followers[np.repeat(graph.follower_starts[k], lengths) + offsets]
    now = ~(graph.before[follower] & ~done[owner]).any(axis=1)
    ready[owner[now], follower[now]] = True
    before = level.paths
    paths = [(op, before[row]) for op, row in zip(k.tolist(), rows[chosen].tolist())]
    return WideLevel(done=done, hashes=hashes[chosen], held=held, ready=ready, held_bytes=held_bytes[chosen], peak=peak[chosen],
                     breaks=breaks[chosen], last=k, pending=pending, paths=paths)
