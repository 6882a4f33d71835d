"""Allocation verifier: independent of the allocators, it only reads ranges and addresses."""

from __future__ import annotations

import math
from collections.abc import Sequence

from npuplan.memory.allocators import Allocation
from npuplan.memory.live_range import LiveRange
from npuplan.units import round_up


def verify_allocation(
    ranges: Sequence[LiveRange], allocation: Allocation, *, size_limit_bytes: int | None = None
) -> list[str]:
    """Every problem with ``allocation`` as one readable line; an empty list means it is sound.

    Checks that every range has a non-negative address aligned to its alignment (and the
    allocation's), that ranges of one area live at a common time step share no byte (sizes rounded
    up to their alignment), that ``peak_bytes`` covers every range, and that every range ends within
    ``size_limit_bytes`` when one is given.
    """
    problems = _address_problems(ranges, allocation)
    placed = [r for r in ranges if r.name in allocation.offsets]
    problems += _overlap_problems(placed, allocation)
    problems += _extent_problems(placed, allocation, size_limit_bytes)
    return problems


def _alignment(r: LiveRange, allocation: Allocation) -> int:
    return math.lcm(r.alignment, allocation.alignment_bytes)


def _extent(r: LiveRange, allocation: Allocation) -> tuple[int, int]:
    """The byte interval [lo, hi) the range occupies."""
    lo = allocation.offsets[r.name]
    return lo, lo + round_up(r.size_bytes, _alignment(r, allocation))


def _address_problems(ranges: Sequence[LiveRange], allocation: Allocation) -> list[str]:
    problems = []
    names = {r.name for r in ranges}
    for r in ranges:
        offset = allocation.offsets.get(r.name)
        if offset is None:
            problems.append(f"'{r.name}' has no address")
        elif offset < 0:
            problems.append(f"'{r.name}' has a negative address {offset}")
        elif offset % _alignment(r, allocation):
            problems.append(f"'{r.name}' at {offset} is not aligned to {_alignment(r, allocation)} bytes")
    for name in sorted(set(allocation.offsets) - names):
        problems.append(f"address given for unknown live range '{name}'")
    return problems


def _overlap_problems(ranges: Sequence[LiveRange], allocation: Allocation) -> list[str]:
    """Sweep over start times; compare each range with the same-area ranges still live."""
    problems = []
    active: list[LiveRange] = []
    for r in sorted(ranges, key=lambda x: (x.start, x.name)):
        active = [a for a in active if a.end >= r.start]
        lo, hi = _extent(r, allocation)
        for a in active:
            a_lo, a_hi = _extent(a, allocation)
            if a.area == r.area and lo < a_hi and a_lo < hi:
                problems.append(
                    f"'{a.name}' [{a_lo}, {a_hi}) and '{r.name}' [{lo}, {hi}) overlap in {r.area} "
                    f"while both live at time {max(a.start, r.start)}..{min(a.end, r.end)}"
                )
        active.append(r)
    return problems


def _extent_problems(ranges: Sequence[LiveRange], allocation: Allocation, size_limit_bytes: int | None) -> list[str]:
    problems = []
    for r in ranges:
        _, hi = _extent(r, allocation)
        if hi > allocation.peak_bytes:
            problems.append(f"'{r.name}' ends at {hi}, above the reported peak {allocation.peak_bytes}")
        if size_limit_bytes is not None and hi > size_limit_bytes:
            problems.append(f"'{r.name}' ends at {hi}, beyond the {size_limit_bytes}-byte limit")
    return problems
