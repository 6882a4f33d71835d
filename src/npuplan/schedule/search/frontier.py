"""Pareto frontiers of partial plans: (search cost, fast-storage peak, tail usage).

A ``Point`` is one partial plan as the Pareto search sees it: ``cost`` is the search metric
(bandwidth-weighted bytes plus weighted cycles, lower is better), ``peak_bytes`` the fast-storage
peak over the time steps covered so far, ``tail_bytes`` the usage at the last covered time step
(what the next op's weight prefetch would be added to). A point dominates another when it is no
worse in all three. ``prune`` keeps the non-dominated points within the budget and, past ``cap``,
a spread of them along the peak axis (the cheapest and the smallest always among them).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import Generic, NamedTuple, TypeVar

T = TypeVar("T")


class Point(NamedTuple, Generic[T]):
    """A named tuple rather than a dataclass: the search makes one per extension (tens of thousands)."""

    cost: float
    peak_bytes: int
    tail_bytes: int
    payload: T


def dominates(a: Point[T], b: Point[T]) -> bool:
    """``a`` is no worse than ``b`` in cost, peak and tail (equal points dominate each other)."""
    return a.cost <= b.cost and a.peak_bytes <= b.peak_bytes and a.tail_bytes <= b.tail_bytes


def pareto_front(points: Iterable[Point[T]]) -> list[Point[T]]:
    """The non-dominated points, cheapest first; of equal points only the first is kept."""
    kept: list[Point[T]] = []
    # the (peak, tail) staircase of the kept points: peaks ascending, tails strictly descending, so
    # the least tail among kept points of peak <= p's is the entry just left of p's peak
    peaks: list[int] = []
    tails: list[int] = []
    for p in sorted(points, key=itemgetter(0, 1, 2)):  # cost, peak, tail
        at = bisect_right(peaks, p.peak_bytes)
        if at and tails[at - 1] <= p.tail_bytes:
            continue  # a cheaper kept point is no worse in peak and tail
        kept.append(p)
        end = at
        while end < len(peaks) and tails[end] >= p.tail_bytes:
            end += 1
        peaks[at:end] = [p.peak_bytes]
        tails[at:end] = [p.tail_bytes]
    return kept


def spread(front: Sequence[Point[T]], cap: int) -> list[Point[T]]:
    """At most ``cap`` (>= 2) points of ``front``, evenly spaced by peak, keeping the cheapest and
    the smallest-peak points (the two ends a Performance and a Size search need)."""
    if len(front) <= cap:
        return list(front)
    by_peak = sorted(front, key=lambda p: (p.peak_bytes, p.cost, p.tail_bytes))
    step = (len(by_peak) - 1) / max(cap - 2, 1)
    chosen = [by_peak[i] for i in sorted({round(k * step) for k in range(cap - 1)})]
    cheapest = min(front, key=lambda p: (p.cost, p.peak_bytes))
    if not any(c is cheapest for c in chosen):
        chosen.append(cheapest)
    return sorted(chosen, key=lambda p: (p.cost, p.peak_bytes))


def prune(points: Iterable[Point[T]], *, limit_bytes: int, cap: int) -> list[Point[T]]:
    """The frontier of the points within ``limit_bytes`` (capped at ``cap``). When none fits,
    the single smallest-peak point, so an infeasible network can still be explained."""
    every = list(points)
    within = [p for p in every if p.peak_bytes <= limit_bytes]
    if not within:
        return [min(every, key=lambda p: (p.peak_bytes, p.cost))] if every else []
    return spread(pareto_front(within), cap)
