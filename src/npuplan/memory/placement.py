"""Order-based placement, shared by the Greedy and HillClimb allocators.

Ranges are placed one after another in a given order, each at the lowest aligned address where it
does not overlap any already-placed range it shares a time step with. The order is the only thing
the allocators choose; this module turns an order into addresses.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

from npuplan.memory.live_range import LiveRange, live_bytes_profile
from npuplan.records import record

NO_PREDECESSOR = -1


@record(eq=False)
class Instance:
    """Ranges reduced to what placement needs, indexed 0..n-1 in the caller's order."""

    sizes_bytes: tuple[int, ...]
    """Aligned sizes."""
    alignments: tuple[int, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    neighbours: tuple[tuple[int, ...], ...]
    """For each range, the ranges it shares a time step with (in index order)."""
    blockers: tuple[tuple[int, ...], ...]
    """``neighbours`` without the empty ranges (they take no bytes, so they never push a range up)."""
    urgency_bytes: tuple[int, ...]
    """For each range, the most bytes live at any time step of its life."""
    size_ranks: tuple[int, ...]
    """Each range's position by (size, index): with the address, the order a fit scans blockers in."""

    def __len__(self) -> int:
        return len(self.sizes_bytes)


def make_instance(ranges: Sequence[LiveRange]) -> Instance:
    """Precompute sizes, time neighbours and urgencies of ``ranges`` (each with its final alignment)."""
    return Instance(
        sizes_bytes=tuple(r.aligned_size_bytes for r in ranges),
        alignments=tuple(r.alignment for r in ranges),
        starts=tuple(r.start for r in ranges),
        ends=tuple(r.end for r in ranges),
        neighbours=(neighbours := _time_neighbours(ranges)),
        blockers=tuple(tuple(j for j in found if ranges[j].aligned_size_bytes > 0) for found in neighbours),
        urgency_bytes=_urgencies(ranges),
        size_ranks=_size_ranks([r.aligned_size_bytes for r in ranges]),
    )


def _size_ranks(sizes: Sequence[int]) -> tuple[int, ...]:
    ranks = [0] * len(sizes)
    for rank, i in enumerate(sorted(range(len(sizes)), key=lambda k: (sizes[k], k))):
        ranks[i] = rank
    return tuple(ranks)


def _time_neighbours(ranges: Sequence[LiveRange]) -> tuple[tuple[int, ...], ...]:
    """Sweep over start times keeping the ranges still live; O(n log n + overlapping pairs)."""
    found: list[list[int]] = [[] for _ in ranges]
    active: list[int] = []
    for i in sorted(range(len(ranges)), key=lambda k: ranges[k].start):
        start = ranges[i].start
        active = [j for j in active if ranges[j].end >= start]
        for j in active:
            found[i].append(j)
            found[j].append(i)
        active.append(i)
    return tuple(tuple(sorted(f)) for f in found)


def _urgencies(ranges: Sequence[LiveRange]) -> tuple[int, ...]:
    profile = live_bytes_profile(ranges)
    times = [t for t, _ in profile]
    urgencies = []
    for r in ranges:
        first = bisect_right(times, r.start) - 1
        last = bisect_right(times, r.end) - 1
        urgencies.append(max(live for _, live in profile[first : last + 1]))
    return tuple(urgencies)


def priority_order(inst: Instance) -> list[int]:
    """The greedy order: most urgent first, then longest-lived, earliest, largest, lowest index."""

    def key(i: int) -> tuple[int, int, int, int, int]:
        duration = inst.ends[i] - inst.starts[i]
        return (-inst.urgency_bytes[i], -duration, inst.starts[i], -inst.sizes_bytes[i], i)

    return sorted(range(len(inst)), key=key)


def initial_orders(inst: Instance) -> list[list[int]]:
    """Starting orders for a search: the greedy order first, then the caller's order (placing in it
    never peaks above LinearAlloc), largest first, longest-lived first and earliest first (each with
    the others as tie-breaks); then three that are only placed, never climbed from (see
    ``allocators._hillclimb_state``): largest area (bytes x steps) first, largest then longest first,
    and most urgent then largest first. Duplicates removed."""
    n = range(len(inst))
    size, start, end, urgency = inst.sizes_bytes, inst.starts, inst.ends, inst.urgency_bytes
    found = [
        priority_order(inst),
        list(n),
        sorted(n, key=lambda i: (-size[i], start[i], i)),
        sorted(n, key=lambda i: (start[i] - end[i], -size[i], i)),
        sorted(n, key=lambda i: (start[i], -size[i], i)),
        sorted(n, key=lambda i: (-size[i] * (end[i] - start[i] + 1), start[i], i)),
        sorted(n, key=lambda i: (-size[i], start[i] - end[i], i)),
        sorted(n, key=lambda i: (-urgency[i], -size[i], start[i], i)),
    ]
    unique: list[list[int]] = []
    for order in found:
        if order not in unique:
            unique.append(order)
    return unique


@dataclass(slots=True, eq=False)
class PlacementState:
    """Working arrays of one placement (mutable; private to an allocator run, never returned).

    ``turn_of[i]`` is the position of range i in the order; ``offsets[i]`` its address;
    ``predecessor[i]`` the placed range whose end pushed it up (or ``NO_PREDECESSOR``). ``tops`` is a
    lazy max-heap of (-end address, range): an entry counts while its range still ends there, so the
    peak and the range that reaches it (the lowest such index) cost a heap look-up, not a pass over
    every range. ``scan_keys[i]`` is ``offsets[i] * n + size rank``: sorting blockers by it orders them
    by (start, end, index) with the sort's comparisons in C. ``journal`` holds (array, position, old value) of each write since the last
    ``commit``, so that ``rollback`` undoes a rejected move in the time it took to make.
    """

    order: list[int]
    turn_of: list[int]
    offsets: list[int]
    predecessor: list[int]
    scan_keys: list[int]
    inst: Instance
    tops: list[tuple[int, int]] = field(default_factory=list)
    journal: list[tuple[list[int], int, int]] = field(default_factory=list)

    def top(self) -> tuple[int, int]:
        """(peak address, the lowest-indexed range ending there); (0, ``NO_PREDECESSOR``) when empty."""
        tops, offsets, sizes = self.tops, self.offsets, self.inst.sizes_bytes
        while tops:
            neg_end, i = tops[0]
            if offsets[i] + sizes[i] == -neg_end:
                return -neg_end, i
            heapq.heappop(tops)
        return 0, NO_PREDECESSOR

    @property
    def peak_bytes(self) -> int:
        return self.top()[0]

    def move(self, i: int, address: int) -> None:
        """Give range ``i`` a new address (journalled)."""
        inst = self.inst
        self.journal += [(self.offsets, i, self.offsets[i]), (self.scan_keys, i, self.scan_keys[i])]
        self.offsets[i] = address
        self.scan_keys[i] = address * len(inst) + inst.size_ranks[i]
        heapq.heappush(self.tops, (-address - inst.sizes_bytes[i], i))

    def swap(self, t1: int, t2: int) -> None:
        """Exchange the ranges at turns ``t1`` and ``t2`` (journalled; addresses unchanged)."""
        order, turn_of, journal = self.order, self.turn_of, self.journal
        a, b = order[t1], order[t2]
        journal += [(order, t1, a), (order, t2, b), (turn_of, a, turn_of[a]), (turn_of, b, turn_of[b])]
        order[t1], order[t2] = b, a
        turn_of[b], turn_of[a] = t1, t2

    def commit(self) -> None:
        """Keep every write since the last commit (and drop stale heap entries once they pile up)."""
        self.journal.clear()
        if len(self.tops) > 4 * len(self.offsets) + 64:
            self.tops = _heap_of_ends(self.offsets, self.inst.sizes_bytes)

    def rollback(self) -> None:
        """Undo every write since the last commit."""
        offsets, sizes = self.offsets, self.inst.sizes_bytes
        for array, k, old in reversed(self.journal):
            array[k] = old
            if array is offsets:
                heapq.heappush(self.tops, (-old - sizes[k], k))
        self.journal.clear()


def _heap_of_ends(offsets: Sequence[int], sizes: Sequence[int]) -> list[tuple[int, int]]:
    tops = [(-o - s, i) for i, (o, s) in enumerate(zip(offsets, sizes))]
    heapq.heapify(tops)
    return tops


def placed(inst: Instance, order: Sequence[int]) -> PlacementState:
    """Place the ranges one after another in ``order``, each at its lowest fitting address."""
    n = len(inst)
    turn_of = [0] * n
    for turn, i in enumerate(order):
        turn_of[i] = turn
    offsets, predecessor, keys = [0] * n, [NO_PREDECESSOR] * n, [0] * n
    sizes, aligns, blockers, ranks = inst.sizes_bytes, inst.alignments, inst.blockers, inst.size_ranks
    for turn, i in enumerate(order):
        busy = [j for j in blockers[i] if turn_of[j] < turn]
        busy.sort(key=keys.__getitem__)
        address, predecessor[i] = _lowest_fit(sizes[i], aligns[i], busy, offsets, sizes)
        offsets[i], keys[i] = address, address * n + ranks[i]
    return PlacementState(list(order), turn_of, offsets, predecessor, keys, inst, _heap_of_ends(offsets, sizes))


def place_again(state: PlacementState, inst: Instance, moved_turns: Sequence[int], *,
                give_up_above: int | None = None) -> bool:
    """After the ranges at ``moved_turns`` changed turns, what placing the whole order again gives,
    re-placing only the ranges whose placement can differ: a range's address depends only on the
    addresses of its time neighbours placed before it, so only the moved ranges, their later
    neighbours and, in turn order, the later neighbours of every range whose address changed are
    re-placed, unless they lie wholly below both its old and its new address (a fit scans the
    blockers from the bottom and stops at the first one above the range, so those never reach it).
    Every write is journalled in ``state``.

    Returns False as soon as a re-placed range ends above ``give_up_above`` (the peak can only be
    higher), the state then only partly updated (``state.rollback()`` restores it)."""
    if not moved_turns:
        return True
    order, turn_of, offsets, predecessor, keys = state.order, state.turn_of, state.offsets, state.predecessor, state.scan_keys
    sizes, aligns, neighbours, blockers = inst.sizes_bytes, inst.alignments, inst.neighbours, inst.blockers
    n, ranks = len(inst), inst.size_ranks
    log, tops, push, pop = state.journal.append, state.tops, heapq.heappush, heapq.heappop
    first = min(moved_turns)
    queued = set(moved_turns) | {turn_of[j] for t in moved_turns for j in neighbours[order[t]] if turn_of[j] > first}
    pending = list(queued)  # each turn queued once: a turn is only ever queued after the one being placed
    heapq.heapify(pending)
    limit = give_up_above
    while pending:
        turn = pop(pending)
        i = order[turn]
        busy = [j for j in blockers[i] if turn_of[j] < turn]
        busy.sort(key=keys.__getitem__)
        address, pred = _lowest_fit(sizes[i], aligns[i], busy, offsets, sizes)
        if pred != predecessor[i]:  # state.move's journal writes, inlined (the inner loop)
            log((predecessor, i, predecessor[i]))
            predecessor[i] = pred
        if limit is not None and address + sizes[i] > limit:
            return False
        if address != offsets[i]:
            low = min(address, offsets[i])
            log((offsets, i, offsets[i]))
            log((keys, i, keys[i]))
            offsets[i] = address
            keys[i] = address * n + ranks[i]
            push(tops, (-address - sizes[i], i))
            for j in neighbours[i]:
                later = turn_of[j]
                # A later range placed wholly below both of i's addresses never reached i in its fit.
                if later > turn and later not in queued and offsets[j] + sizes[j] > low:
                    queued.add(later)
                    push(pending, later)
    return give_up_above is None or state.peak_bytes <= give_up_above


def _lowest_fit(size: int, alignment: int, busy: Sequence[int], offsets: Sequence[int],
                sizes: Sequence[int]) -> tuple[int, int]:
    """Lowest aligned address with ``size`` free bytes among the ranges ``busy``, sorted by
    (start, end, index); returns it and the range that pushed it up last (or ``NO_PREDECESSOR``)."""
    address, pred = 0, NO_PREDECESSOR
    for j in busy:
        lo = offsets[j]
        hi = lo + sizes[j]
        if hi <= address:
            continue
        if lo >= address + size:
            break
        address, pred = -(-hi // alignment) * alignment, j  # units.round_up, inlined: the allocator's inner loop
    return address, pred
