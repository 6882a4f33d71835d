"""``codec.symbols.stream_symbols`` skips the zero-run divisor search only where zero runs cannot
win: its choice (zero runs or zeros as values) is the one the full search makes, on seeded random
streams of every zero density; a stream of scattered zeros among wide values skips the search."""

from __future__ import annotations

import math

import numpy as np
import pytest

import npuplan.codec.symbols as symbols


def _full_choice(values: np.ndarray) -> bool:
    """Whether zero runs code ``values`` in fewer bits, the divisor search always run."""
    hist = np.zeros(symbols.MAX_INDEX + 1, dtype=np.int64)
    hist[symbols._palette_value_of_weight()] = np.bincount(values + symbols.MAX_WEIGHT, minlength=511)
    if int(hist[0]) <= symbols.ZERO_RUN_RATIO * int(hist[1:].max()):
        return False
    _, runs = symbols._zero_runs(values)
    with_runs = hist.copy()
    with_runs[0] = int(int(hist[0]) == values.size)
    found = symbols._zero_run_divisors(runs, math.inf)
    assert found is not None
    return symbols._coding(with_runs).bits + found[1] < symbols._coding(hist).bits


@pytest.mark.parametrize("seed", range(30))
def test_the_choice_of_the_full_search(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size, zeros, spread = int(rng.integers(50, 5000)), float(rng.uniform(0.5, 0.99)), int(rng.integers(1, 255))
    values = rng.integers(-spread, spread + 1, size=size).astype(np.int16)
    values[rng.random(size) < zeros] = 0
    chosen = symbols.stream_symbols(values)
    assert (chosen.zero_runs is not None) == _full_choice(values)


def test_scattered_zeros_skip_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)  # wide 8-bit weights, a tenth zeros: zero the commonest, most runs empty
    values = rng.integers(-127, 128, size=3000).astype(np.int16)
    values[rng.random(values.size) < 0.1] = 0
    counts = np.bincount(values + 127)
    assert counts[127] > symbols.ZERO_RUN_RATIO * np.delete(counts, 127).max()  # zero runs are tried
    assert not _full_choice(values)

    def searched(*_args: object) -> None:
        raise AssertionError("the divisor search ran")

    monkeypatch.setattr(symbols, "cheapest_segments", searched)
    assert symbols.stream_symbols(values).zero_runs is None
