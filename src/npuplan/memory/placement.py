"""Order-based placement, shared by the Greedy and HillClimb allocators.

Ranges are placed one after another in a given order, each at the lowest aligned address where it
does not overlap any already-placed range it shares a time step with. The order is the only thing
the allocators choose; this module turns an order into addresses.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

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
    urgency_bytes: tuple[int, ...]
    """For each range, the most bytes live at any time step of its life."""

    def __len__(self) -> int:
        return len(self.sizes_bytes)


def make_instance(ranges: Sequence[LiveRange]) -> Instance:
    """Precompute sizes, time neighbours and urgencies of ``ranges`` (each with its final alignment)."""
    return Instance(
        sizes_bytes=tuple(r.aligned_size_bytes for r in ranges),
        alignments=tuple(r.alignment for r in ranges),
        starts=tuple(r.start for r in ranges),
        ends=tuple(r.end for r in ranges),
        neighbours=_time_neighbours(ranges),
        urgency_bytes=_urgencies(ranges),
    )


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
    the others as tie-breaks); duplicates removed."""
    n = range(len(inst))
    size, start, end = inst.sizes_bytes, inst.starts, inst.ends
    found = [
        priority_order(inst),
        list(n),
        sorted(n, key=lambda i: (-size[i], start[i], i)),
        sorted(n, key=lambda i: (start[i] - end[i], -size[i], i)),
        sorted(n, key=lambda i: (start[i], -size[i], i)),
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
    ``predecessor[i]`` the placed range whose end pushed it up (or ``NO_PREDECESSOR``);
    ``peak_upto[t]`` the highest end address among the first t+1 ranges placed.
    """

    order: list[int]
    turn_of: list[int]
    offsets: list[int]
    predecessor: list[int]
    peak_upto: list[int]

    @property
    def peak_bytes(self) -> int:
        return self.peak_upto[-1] if self.peak_upto else 0

    def copy(self) -> PlacementState:
        return PlacementState(
            self.order[:], self.turn_of[:], self.offsets[:], self.predecessor[:], self.peak_upto[:]
        )

    def assign(self, other: PlacementState) -> None:
        """Overwrite this state with ``other``'s contents."""
        self.order[:] = other.order
        self.turn_of[:] = other.turn_of
        self.offsets[:] = other.offsets
        self.predecessor[:] = other.predecessor
        self.peak_upto[:] = other.peak_upto


def new_state(inst: Instance, order: Sequence[int]) -> PlacementState:
    """A state for ``order`` with nothing placed yet (call ``place_from(state, inst, 0)``)."""
    n = len(inst)
    turn_of = [0] * n
    for turn, i in enumerate(order):
        turn_of[i] = turn
    return PlacementState(list(order), turn_of, [0] * n, [NO_PREDECESSOR] * n, [0] * n)


def place_from(state: PlacementState, inst: Instance, first_turn: int, *, give_up_above: int | None = None) -> bool:
    """(Re)place the ranges at turns ``first_turn`` onwards; earlier turns keep their addresses.

    Stops early and returns False as soon as the peak exceeds ``give_up_above`` (the state is then
    only partly updated); returns True when every range is placed.
    """
    order, turn_of, offsets = state.order, state.turn_of, state.offsets
    sizes, aligns, neighbours = inst.sizes_bytes, inst.alignments, inst.neighbours
    peak = state.peak_upto[first_turn - 1] if first_turn > 0 else 0
    for turn in range(first_turn, len(order)):
        i = order[turn]
        busy = sorted(
            (offsets[j], offsets[j] + sizes[j], j) for j in neighbours[i] if turn_of[j] < turn and sizes[j] > 0
        )
        address, pred = _lowest_fit(sizes[i], aligns[i], busy)
        offsets[i] = address
        state.predecessor[i] = pred
        peak = max(peak, address + sizes[i])
        state.peak_upto[turn] = peak
        if give_up_above is not None and peak > give_up_above:
            return False
    return True


def place_again(state: PlacementState, inst: Instance, moved_turns: Sequence[int], *,
                give_up_above: int | None = None) -> bool:
    """After the ranges at ``moved_turns`` changed turns, what ``place_from(state, inst, min(
    moved_turns), give_up_above=...)`` gives, re-placing only
    the ranges whose placement can differ: a range's address depends only on the addresses of its
    time neighbours placed before it, so only the moved ranges, their later neighbours and, in
    turn order, the later neighbours of every range whose address changed are re-placed.

    Returns False as soon as a re-placed range ends above ``give_up_above`` (the peak can only be
    higher), the state then only partly updated, as ``place_from`` leaves it."""
    if not moved_turns:
        return True
    order, turn_of, offsets = state.order, state.turn_of, state.offsets
    sizes, aligns, neighbours = inst.sizes_bytes, inst.alignments, inst.neighbours
    first = min(moved_turns)
    queued = set(moved_turns) | {turn_of[j] for t in moved_turns for j in neighbours[order[t]] if turn_of[j] > first}
    pending = list(queued)  # each turn queued once: a turn is only ever queued after the one being placed
    heapq.heapify(pending)
    limit = give_up_above
    while pending:
        turn = heapq.heappop(pending)
        i = order[turn]
        busy = sorted(
            (offsets[j], offsets[j] + sizes[j], j) for j in neighbours[i] if turn_of[j] < turn and sizes[j] > 0
        )
        address, state.predecessor[i] = _lowest_fit(sizes[i], aligns[i], busy)
        if limit is not None and address + sizes[i] > limit:
            return False
        if address != offsets[i]:
            offsets[i] = address
            for j in neighbours[i]:
                later = turn_of[j]
                if later > turn and later not in queued:
                    queued.add(later)
                    heapq.heappush(pending, later)
    peak = state.peak_upto[first - 1] if first > 0 else 0
    peak_upto = state.peak_upto
    for turn in range(first, len(order)):
        i = order[turn]
        end = offsets[i] + sizes[i]
        if end > peak:
            peak = end
        peak_upto[turn] = peak
    return give_up_above is None or peak <= give_up_above


def _lowest_fit(size: int, alignment: int, busy: Sequence[tuple[int, int, int]]) -> tuple[int, int]:
    """Lowest aligned address with ``size`` free bytes among ``busy`` (start, end, index), sorted by start."""
    address, pred = 0, NO_PREDECESSOR
    for lo, hi, j in busy:
        if hi <= address:
            continue
        if lo >= address + size:
            break
        address, pred = -(-hi // alignment) * alignment, j  # units.round_up, inlined: the allocator's inner loop
    return address, pred
