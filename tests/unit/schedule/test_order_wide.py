"""The order search's wide levels as arrays (``order_wide``) step exactly as its Python levels do:
the same orders, ties included, whichever way each level is stepped."""

from __future__ import annotations

import pytest

from npuplan.ir.lowered import LoweredGraph
from npuplan.schedule.moves import order
from npuplan.schedule.moves.order import least_peak_order

from tests.unit.schedule.test_order import _phases_beside_a_branch, _random_tree, _sizes, _unstacked_sequence


def _graphs() -> list[LoweredGraph]:
    return ([_random_tree(seed, count) for seed in range(10) for count in (7, 16, 40)]
            + [_unstacked_sequence(steps) for steps in (3, 8, 12)] + [_phases_beside_a_branch(phases) for phases in (2, 4)])


def _orders(monkeypatch: pytest.MonkeyPatch, wide_pairs: int, narrow_pairs: int, max_states: int) -> list[tuple[int, ...]]:
    monkeypatch.setattr(order, "WIDE_PAIRS", wide_pairs)
    monkeypatch.setattr(order, "NARROW_PAIRS", narrow_pairs)
    return [least_peak_order(g, _sizes(g), max_states=max_states) for g in _graphs()]


@pytest.mark.parametrize("max_states", [3, 16, 512])
def test_wide_levels_give_the_orders_python_levels_give(monkeypatch: pytest.MonkeyPatch, max_states: int) -> None:
    python = _orders(monkeypatch, 1 << 30, 0, max_states)
    assert python == _orders(monkeypatch, 0, 0, max_states)  # every level as arrays
    assert python == _orders(monkeypatch, 6, 3, max_states)  # back and forth between the two


def test_the_wide_graph_and_level_round_trip() -> None:
    from npuplan.schedule.moves.order_wide import from_wide, to_wide, wide_graph

    graph = _unstacked_sequence(5)
    memory = order._Memory(graph, _sizes(graph))
    preds = order.dependencies(graph)
    followers = [[k for k, ps in enumerate(preds) if p in ps] for p in range(len(preds))]
    arrays = wide_graph(memory.op_tensors, preds, [sum(1 << p for p in ps) for ps in preds], followers)
    ranks = order._Ranks(held_bound=1 << 20, breaks_bound=len(preds) + 1)
    level = {0b101: (ranks.pack(300, 200, 2), 200, 0b11, (1, 3, 4), (2, (0, None)))}
    wide = to_wide(level, arrays, lambda rank: (ranks.peak_bytes(rank), ranks.breaks(rank)))
    assert wide.pairs() == 3 and from_wide(wide, ranks.pack) == level
    # the accesses still to run of each tensor held: all of its accesses but those of ops 0 and 2
    masks = arrays.access_masks
    assert [int(wide.pending[0, t]) for t in (0, 1)] == [(masks[t] & ~0b101).bit_count() for t in (0, 1)]
    assert int(wide.pending[0, 2]) == masks[2].bit_count()  # not held: every access to come


def test_pairs_are_grouped_by_their_set_even_when_two_sets_share_a_hash() -> None:
    import numpy as np

    from npuplan.schedule.moves.order_wide import _set_winners

    after = np.array([[5], [3], [5], [3], [9]], dtype=np.uint64)  # sets {0,2}, {0,1}, {0,2}, {0,1}, {0,3}
    ranks = np.array([7, 4, 6, 4, 1], dtype=np.int64)
    for hashes in ([2, 1, 2, 1, 3], [1, 1, 1, 1, 1]):  # the sets' own hashes, then one hash for all
        first, winners = _set_winners(after, np.array(hashes, dtype=np.uint64), ranks)
        by_set = {int(after[f, 0]): (int(f), int(w)) for f, w in zip(first, winners)}
        # each set's first pair, and the first pair of its least rank (the earlier one on a tie)
        assert by_set == {5: (0, 2), 3: (1, 1), 9: (4, 4)}
