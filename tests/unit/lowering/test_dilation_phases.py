"""The phases of a dilated convolution (``lowering.dilation_phases``) compute exactly the layer:
each phase run as a plain convolution over its strided IFM view and scattered to its strided OFM
view gives the direct dilated convolution, for rates 1-6, odd sizes, strides and paddings."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from npuplan.lowering._util import same_padding
from npuplan.lowering.dilation_phases import AxisSplit, split_axis


def _direct(x: np.ndarray, w: np.ndarray, stride: tuple[int, int], rate: tuple[int, int],
            pad: tuple[int, int], out: tuple[int, int]) -> np.ndarray:
    """A depthwise dilated convolution of ``x`` (H x W x C) by ``w`` (KH x KW x C), padded with 0."""
    kh, kw, _ = w.shape
    y = np.zeros((*out, x.shape[2]), dtype=np.int64)
    for oy, ox, ky, kx in itertools.product(range(out[0]), range(out[1]), range(kh), range(kw)):
        iy, ix = oy * stride[0] - pad[0] + ky * rate[0], ox * stride[1] - pad[1] + kx * rate[1]
        if 0 <= iy < x.shape[0] and 0 <= ix < x.shape[1]:
            y[oy, ox] += x[iy, ix] * w[ky, kx]
    return y


def _phased(x: np.ndarray, w: np.ndarray, stride: tuple[int, int], splits: tuple[AxisSplit, AxisSplit],
            out: tuple[int, int]) -> np.ndarray:
    """The phases each run over their view (padding before, none read past ``in_count``)."""
    sy, sx = splits
    y = np.full((*out, x.shape[2]), -(10 ** 9), dtype=np.int64)
    for py, px in itertools.product(sy.phases, sx.phases):
        view = x[py.in_start::sy.step, px.in_start::sx.step][:py.in_count, :px.in_count]
        assert view.shape[:2] == (py.in_count, px.in_count)
        padded = np.pad(view, ((py.pad_before, py.pad_after), (px.pad_before, px.pad_after), (0, 0)))
        part = _direct(padded, w, stride, (sy.hw_dilation, sx.hw_dilation), (0, 0), (py.out_count, px.out_count))
        y[py.out_start::sy.step, px.out_start::sx.step] = part
    return y


@pytest.mark.parametrize("rate", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("size,kernel,stride,same", [((13, 11), (3, 3), (1, 1), True), ((9, 14), (3, 2), (1, 1), False),
                                                      ((17, 7), (2, 3), (2, 1), True), ((15, 15), (3, 3), (3, 2), False),
                                                      ((5, 19), (1, 3), (1, 1), True)])
def test_phases_compute_the_dilated_convolution(rate: int, size: tuple[int, int], kernel: tuple[int, int],
                                                stride: tuple[int, int], same: bool) -> None:
    rng = np.random.default_rng(rate * 100 + size[0])
    x = rng.integers(-128, 128, (*size, 3))
    w = rng.integers(-128, 128, (*kernel, 3))
    extent = [(k - 1) * rate + 1 for k in kernel]
    if not same and any(e > s for e, s in zip(extent, size)):
        pytest.skip("VALID kernel larger than the map")
    if same:
        pads = [same_padding(s, st, e) for s, st, e in zip(size, stride, extent)]
        out = tuple((s + st - 1) // st for s, st in zip(size, stride))
    else:
        pads = [(0, 0), (0, 0)]
        out = tuple((s - e) // st + 1 for s, e, st in zip(size, extent, stride))
    splits = tuple(split_axis(in_size=size[a], out_size=out[a], kernel=kernel[a], stride=stride[a], rate=rate,
                              pad_before=pads[a][0]) for a in (0, 1))
    assert all(s is not None for s in splits)
    expected = _direct(x, w, stride, (rate, rate), (pads[0][0], pads[1][0]), out)
    assert np.array_equal(_phased(x, w, stride, splits, out), expected)  # type: ignore[arg-type]


@pytest.mark.parametrize("rate,step,hw", [(1, 1, 1), (2, 1, 2), (3, 3, 1), (4, 2, 2), (5, 5, 1), (6, 3, 2)])
def test_the_hardware_runs_a_dilation_of_1_or_2_over_a_view_of_step_rate_over_it(rate: int, step: int, hw: int) -> None:
    split = split_axis(in_size=32, out_size=32, kernel=3, stride=1, rate=rate, pad_before=rate)
    assert split is not None and (split.step, split.hw_dilation) == (step, hw)
    assert sum(p.out_count for p in split.phases) == 32
    assert all(p.pad_before + p.in_count + p.pad_after == p.out_count + hw * 2 for p in split.phases)


def test_a_phase_reading_only_padding_is_no_split() -> None:
    # a 1-row map, SAME at rate 5: phase 0 reads row 0, but a 3-tap kernel of a 2-row OFM...
    assert split_axis(in_size=1, out_size=3, kernel=3, stride=1, rate=5, pad_before=6) is None
