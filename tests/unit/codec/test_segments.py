"""``codec.segments.cheapest_segments`` against an exhaustive search of every parameter choice on
small streams (the fewest bits, changes included), and its tie rule (the lower parameter)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from npuplan.codec.segments import CHANGE_BITS, PARAMETERS, block_starts, cheapest_segments


def _bits(block_bits: np.ndarray, choices: list[int]) -> float:
    changes = sum(a != b for a, b in zip(choices, choices[1:]))
    return float(sum(block_bits[c, i] for i, c in enumerate(choices)) + CHANGE_BITS * changes)


def _choices(segments: tuple[tuple[int, int], ...], starts: np.ndarray) -> list[int]:
    """The parameter of each block, from the segments' ends (symbols)."""
    return [next(p for end, p in segments if s < end) for s in starts.tolist()]


@pytest.mark.parametrize("seed", range(40))
def test_fewest_bits_of_every_choice(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows, blocks = int(rng.integers(1, PARAMETERS + 1)), int(rng.integers(1, 7))
    block_bits = rng.integers(0, 120, size=(rows, blocks)).astype(np.float64)
    block_bits[rng.random((rows, blocks)) < 0.15] = np.inf
    block_bits[0, :] = np.minimum(block_bits[0, :], 200)  # one parameter codes every block
    starts = np.arange(blocks) * 3
    segments = cheapest_segments(block_bits, starts, blocks * 3)
    fewest = min(_bits(block_bits, list(c)) for c in itertools.product(range(rows), repeat=blocks))
    assert _bits(block_bits, _choices(segments, starts)) == fewest
    assert segments[-1][0] == blocks * 3 and all(a[1] != b[1] for a, b in zip(segments, segments[1:]))


def test_a_change_that_pays_and_one_that_does_not() -> None:
    starts = block_starts(4)
    pays = np.array([[10, 10, 100, 100], [100, 100, 10, 10]], dtype=np.float64)
    assert cheapest_segments(pays, starts, 4) == ((2, 0), (4, 1))
    close = np.array([[10, 10, 30, 30], [30, 30, 10, 10]], dtype=np.float64)  # 40 saved: no more than a change
    assert cheapest_segments(close, starts, 4) == ((4, 0),)


def test_ties_keep_the_lower_parameter() -> None:
    even = np.array([[5, 5, 5], [5, 5, 5], [5, 5, 5]], dtype=np.float64)
    assert cheapest_segments(even, block_starts(3), 3) == ((3, 0),)
    ahead = np.array([[90, 0, 0, 90], [0, 90, 90, 0]], dtype=np.float64)  # 0 1 1 0 costs 2 changes
    assert cheapest_segments(ahead, block_starts(4), 4) == ((1, 1), (3, 0), (4, 1))


def test_more_parameters_than_the_format_has() -> None:
    block_bits = np.full((PARAMETERS + 1, 4), 100.0)
    block_bits[0, :2] = block_bits[PARAMETERS, 2:] = 0  # a change pays: the search runs
    with pytest.raises(ValueError):
        cheapest_segments(block_bits, block_starts(4), 4)
