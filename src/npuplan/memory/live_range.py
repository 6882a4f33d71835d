"""Live ranges: which buffer must hold its bytes during which time steps, per memory area.

A live range is the unit the allocators place. Times are integer steps (an op, or a stripe within a
cascade) and both ends are inclusive. Tensors that share one buffer (aliases, such as the output of a
no-op reshape) are merged into one live range by ``build_live_ranges``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from npuplan.records import record
from npuplan.units import ALIGN_BYTES, round_up



@record
class LiveRange:
    """A buffer of ``size_bytes`` in ``area`` that is live from ``start`` to ``end`` (inclusive).

    ``alignment`` (bytes) constrains its address; the allocators also round its size up to it.
    """

    name: str
    start: int
    end: int
    size_bytes: int
    area: str = "Sram"
    alignment: int = ALIGN_BYTES

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"live range '{self.name}': need 0 <= start <= end, got {self.start}..{self.end}")
        if self.size_bytes < 0:
            raise ValueError(f"live range '{self.name}': negative size {self.size_bytes}")
        if self.alignment <= 0:
            raise ValueError(f"live range '{self.name}': alignment must be positive, got {self.alignment}")

    @property
    def aligned_size_bytes(self) -> int:
        """The size rounded up to the alignment: the bytes an allocator reserves for it."""
        return round_up(self.size_bytes, self.alignment)

    def overlaps_in_time(self, other: LiveRange) -> bool:
        """Whether both ranges are live at some common time step."""
        return self.start <= other.end and other.start <= self.end


@record
class TensorUse:
    """One use of a tensor's buffer: it must hold its data from ``start`` to ``end`` (inclusive)."""

    tensor: str
    start: int
    end: int
    size_bytes: int
    area: str = "Sram"
    alignment: int = ALIGN_BYTES


@record(eq=False)
class LiveRangeSet:
    """The merged live ranges and, for every tensor, the name of the range that holds it."""

    ranges: tuple[LiveRange, ...]
    range_of: Mapping[str, str]

    def in_area(self, area: str) -> tuple[LiveRange, ...]:
        """The ranges of one memory area, in their original order."""
        return tuple(r for r in self.ranges if r.area == area)

    def tensor_offsets(self, range_offsets: Mapping[str, int]) -> dict[str, int]:
        """Every tensor's address, given the addresses of the ranges (tensors of unplaced ranges left out)."""
        return {t: range_offsets[r] for t, r in self.range_of.items() if r in range_offsets}


def build_live_ranges(uses: Iterable[TensorUse], *, aliases: Iterable[tuple[str, str]] = ()) -> LiveRangeSet:
    """Merge tensor uses into one live range per buffer.

    ``aliases`` are pairs of tensor names that share one buffer (for example a no-op reshape's input
    and output). A merged range is named after its member that is used first in ``uses``; it spans
    all its members' uses, is as large as the largest member and as aligned as the strictest one.
    Raises ``ValueError`` when aliased tensors live in different memory areas.
    """
    use_list = list(uses)
    root = _alias_roots([u.tensor for u in use_list], aliases)
    groups: dict[str, list[TensorUse]] = {}
    for use in use_list:
        groups.setdefault(root[use.tensor], []).append(use)
    ranges = tuple(_merge_group(group) for group in groups.values())
    name_of_root = {key: rng.name for key, rng in zip(groups, ranges)}
    range_of = {t: name_of_root[r] for t, r in root.items() if r in name_of_root}
    return LiveRangeSet(ranges=ranges, range_of=MappingProxyType(range_of))


def _alias_roots(tensors: Sequence[str], aliases: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Union-find over aliases; every group's root is its member seen first in ``tensors``."""
    first_seen: dict[str, int] = {}
    for t in tensors:
        first_seen.setdefault(t, len(first_seen))
    parent: dict[str, str] = {t: t for t in first_seen}

    def find(t: str) -> str:
        parent.setdefault(t, t)
        while parent[t] != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    def rank(t: str) -> int:
        return first_seen.get(t, len(first_seen) + 1)

    for a, b in aliases:
        ra, rb = find(a), find(b)
        if ra != rb:
            keep, drop = (ra, rb) if rank(ra) <= rank(rb) else (rb, ra)
            parent[drop] = keep
    return {t: find(t) for t in parent}


def _merge_group(group: Sequence[TensorUse]) -> LiveRange:
    areas = {u.area for u in group}
    if len(areas) > 1:
        names = sorted({u.tensor for u in group})
        raise ValueError(f"aliased tensors {names} are in different memory areas {sorted(areas)}")
    return LiveRange(
        name=group[0].tensor,
        start=min(u.start for u in group),
        end=max(u.end for u in group),
        size_bytes=max(u.size_bytes for u in group),
        area=group[0].area,
        alignment=math.lcm(*(u.alignment for u in group)),
    )


def live_bytes_profile(ranges: Iterable[LiveRange]) -> list[tuple[int, int]]:
    """``(time, live_bytes)`` at every time step where the live aligned bytes change, in time order.

    Each entry holds until the next one; the last entry is 0 bytes after the last range ends.
    """
    deltas: dict[int, int] = {}
    for r in ranges:
        deltas[r.start] = deltas.get(r.start, 0) + r.aligned_size_bytes
        deltas[r.end + 1] = deltas.get(r.end + 1, 0) - r.aligned_size_bytes
    profile: list[tuple[int, int]] = []
    live_bytes = 0
    for time in sorted(deltas):
        live_bytes += deltas[time]
        profile.append((time, live_bytes))
    return profile


def live_bytes_lower_bound(ranges: Iterable[LiveRange]) -> int:
    """Max over time of the aligned bytes live at that time: no allocation can peak lower (bytes).

    Ranges of different areas are summed together; pass one area's ranges at a time.
    """
    return max((live for _, live in live_bytes_profile(ranges)), default=0)
