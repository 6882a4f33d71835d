"""The per-channel output-stage scales computed all at once match the one-by-one quantiser, and the
cycle collector's state is restored after an emit (no Vela needed)."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from npuplan.emit.emitter import _cycle_collection_paused
from npuplan.lowering.fixedpoint import quantise_scale, quantise_scales

_SCALES = st.one_of(st.floats(min_value=1e-30, max_value=1e9, allow_nan=False, allow_infinity=False),
                    st.sampled_from([0.0, 1.0, 0.5, 2.0 ** -33, 2.0 ** -40, 1.0 - 2.0 ** -40, 3.0 * 2.0 ** -34]))


@seed(21)
@settings(max_examples=300, deadline=None)
@given(st.lists(_SCALES, min_size=1, max_size=12))
def test_scales_quantised_together_match_one_by_one(scales: list[float]) -> None:
    try:
        expected = [quantise_scale(s) for s in scales]
    except ValueError:  # a scale too large for the output stage: the same error
        with pytest.raises(ValueError):
            quantise_scales(np.array(scales))
        return
    assert quantise_scales(np.array(scales)) == expected


def test_a_significand_rounding_up_to_one_carries_into_the_shift() -> None:
    scales = np.array([1.0 - 2.0 ** -40, 0.75])
    assert quantise_scales(scales) == [quantise_scale(float(s)) for s in scales] == [(1 << 30, 30), (3 << 29, 31)]


@pytest.mark.parametrize("enabled", [True, False])
def test_the_cycle_collector_is_restored_after_emitting(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        with pytest.raises(RuntimeError):
            with _cycle_collection_paused():
                assert not gc.isenabled()
                raise RuntimeError("an emit that fails")
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
