"""The TFL rounding mode is TensorFlow Lite's ``MultiplyByQuantizedMultiplier``: for any int32
accumulator and any Q31 multiplier the hardware's rescale (multiplier, right shift 31 - s) equals
TFLite's value with left shift s, the same arithmetic written twice (npuplan.lowering.fixedpoint
is the scalar transcription of TFLite's reference)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from npuplan.lowering.fixedpoint import multiply_by_quantized_multiplier
from npuplan.sim.rounding import RoundingMode, rescale


@settings(max_examples=300, deadline=None, derandomize=True)
@given(acc=st.integers(-(1 << 24), 1 << 24), multiplier=st.integers(1 << 30, (1 << 31) - 1),
       tflite_shift=st.integers(-31, 7))
def test_tfl_rounding_is_tflites_multiply_by_quantized_multiplier(acc, multiplier, tflite_shift):
    if tflite_shift > 0 and abs(acc) >= 1 << (31 - tflite_shift):
        return  # TFLite's left shift would wrap its int32
    want = multiply_by_quantized_multiplier(acc, multiplier, tflite_shift)
    got = int(rescale(np.array([acc]), multiplier, 31 - tflite_shift, RoundingMode.TFL)[0])
    assert got == want


@settings(max_examples=200, deadline=None, derandomize=True)
@given(values=st.lists(st.integers(-(1 << 40), 1 << 40), min_size=1, max_size=8), shift=st.integers(0, 63))
def test_natural_and_truncate_bracket_the_exact_quotient(values, shift):
    x = np.array(values, dtype=np.int64)
    natural = rescale(x, 1, shift, RoundingMode.NATURAL)
    truncated = rescale(x, 1, shift, RoundingMode.TRUNCATE)
    exact = [v / 2 ** shift for v in values]
    assert all(abs(n - e) <= 0.5 for n, e in zip(natural.tolist(), exact))
    assert all(abs(t) <= abs(e) < abs(t) + 1 for t, e in zip(truncated.tolist(), exact))
