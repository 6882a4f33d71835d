"""The Pareto frontier: dominance, pruning of dominated and over-budget points, the cap."""

from __future__ import annotations

from npuplan.schedule.search.frontier import Point, dominates, pareto_front, prune, spread


def _p(cost: float, peak: int, tail: int = 0, name: str = "") -> Point[str]:
    return Point(cost, peak, tail, name)


def test_dominance_needs_no_worse_in_every_axis() -> None:
    assert dominates(_p(1, 10, 5), _p(2, 10, 5))
    assert dominates(_p(1, 10, 5), _p(1, 10, 5))
    assert not dominates(_p(1, 11, 5), _p(2, 10, 5))
    assert not dominates(_p(1, 10, 6), _p(2, 10, 5))


def test_front_drops_dominated_points_and_duplicates() -> None:
    points = [_p(3, 10, name="slow"), _p(1, 20, name="fast"), _p(2, 20, name="worse"), _p(1, 20, name="twin"),
              _p(5, 5, name="small"), _p(6, 5, name="no")]
    names = [p.payload for p in pareto_front(points)]
    assert names == ["fast", "slow", "small"]


def test_tail_keeps_an_otherwise_dominated_point() -> None:
    names = [p.payload for p in pareto_front([_p(1, 10, 9, "a"), _p(2, 10, 1, "b")])]
    assert names == ["a", "b"]


def test_prune_drops_points_over_the_budget() -> None:
    kept = prune([_p(1, 200, name="big"), _p(3, 90, name="fits"), _p(4, 100, name="edge")], limit_bytes=100, cap=16)
    assert [p.payload for p in kept] == ["fits"]
    assert all(p.peak_bytes <= 100 for p in kept)


def test_prune_keeps_the_smallest_point_when_nothing_fits() -> None:
    kept = prune([_p(1, 300, name="a"), _p(9, 150, name="b")], limit_bytes=100, cap=16)
    assert [p.payload for p in kept] == ["b"]
    assert prune([], limit_bytes=100, cap=16) == []


def test_cap_keeps_the_cheapest_and_the_smallest() -> None:
    front = [_p(100 - k, 10 + k, name=str(k)) for k in range(50)]  # every point on the front
    kept = spread(front, 6)
    assert len(kept) <= 6
    assert min(front, key=lambda p: p.cost) in kept
    assert min(front, key=lambda p: p.peak_bytes) in kept
    peaks = sorted(p.peak_bytes for p in kept)
    assert peaks[-1] - peaks[0] == 49  # spread over the whole peak range


def test_prune_result_is_a_front_within_the_cap() -> None:
    points = [_p((k * 37) % 101, (k * 53) % 97, (k * 7) % 5, str(k)) for k in range(300)]
    kept = prune(points, limit_bytes=80, cap=16)
    assert 0 < len(kept) <= 16
    assert all(p.peak_bytes <= 80 for p in kept)
    for a in kept:
        assert not any(b is not a and dominates(b, a) and (b.cost, b.peak_bytes, b.tail_bytes) !=
                       (a.cost, a.peak_bytes, a.tail_bytes) for b in kept)
    cheapest = min((p for p in points if p.peak_bytes <= 80), key=lambda p: p.cost)
    assert min(p.cost for p in kept) == cheapest.cost
