"""``_monotone_blocks`` lists exactly the blocks a full scan accepts, in the same order."""

from __future__ import annotations

import itertools
import random

from npuplan.emit.native.blocks import _monotone_blocks


def _full_scan(heights, widths, depths, fits_at):
    return [(h, w, d) for w in widths for h in heights for d in depths if fits_at(h, w, d)]


def test_matches_a_full_scan_for_monotone_budgets() -> None:
    rng = random.Random(26)
    for _ in range(300):
        heights = range(2, 2 * rng.randint(1, 12) + 1, 2)
        widths = range(2, 2 * rng.randint(1, 12) + 1, 2)
        depths = list(range(8, 8 * rng.randint(0, 10) + 1, 8))
        budget, hw, wd = rng.randint(0, 3000), rng.randint(1, 9), rng.randint(1, 9)

        def fits_at(h: int, w: int, d: int) -> bool:  # grows with every side
            return h * w * d + hw * h * w + wd * w * d <= budget

        assert _monotone_blocks(heights, widths, depths, fits_at) == _full_scan(heights, widths, depths, fits_at)


def test_nothing_fits_and_everything_fits() -> None:
    sides = (range(2, 9, 2), range(2, 9, 2), [8, 16])
    for verdict in (False, True):
        expected = [(h, w, d) for w, h, d in itertools.product(sides[1], sides[0], sides[2])] if verdict else []
        assert _monotone_blocks(*sides, lambda h, w, d: verdict) == expected
