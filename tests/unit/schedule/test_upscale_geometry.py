"""Stripe geometry of ops that upscale their IFM x2 while reading it (resizes, transpose convs)."""

from __future__ import annotations

import pytest

from npuplan.commands.stream import input_rows
from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import BlockType, Kernel, NpuOp, Padding, PoolKind, Resampling
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType
from npuplan.schedule.geometry import ifm_rows_for, producer_rows_for, stripe_rows_of


def upscaling(k: int, top: int, mode: Resampling, ifm_h: int = 20) -> NpuOp:
    """A pooling op over a 20-row IFM upscaled x2 (OFM 40 rows), ``k`` x ``k`` kernel, ``top`` rows padded."""
    ifm, ofm = Tensor("i", (1, ifm_h, 8, 4), DataType.INT8), Tensor("o", (1, 2 * ifm_h, 16, 4), DataType.INT8)
    return NpuOp("o", "RESIZE_BILINEAR", "ResizeBilinear", BlockType.POOLING, ifm, ifm.shape4d, ofm, ofm.shape4d,
                 kernel=Kernel(k, k, padding=Padding(top=top, bottom=max(k - 1 - top, 0))), pool=PoolKind.AVERAGE,
                 resampling=mode)


CASES = [(1, 0, Resampling.NEAREST), (2, 0, Resampling.NEAREST), (4, 0, Resampling.NEAREST),
         (3, 2, Resampling.TRANSPOSE), (2, 1, Resampling.TRANSPOSE), (4, 2, Resampling.TRANSPOSE)]


@pytest.mark.parametrize("k, top, mode", CASES)
def test_every_stripe_reads_no_more_rows_than_the_geometry_reserves(k: int, top: int, mode: Resampling) -> None:
    op = upscaling(k, top, mode)
    for height in range(1, 9):
        for a in range(0, op.ofm_shape.h, height):
            lo, hi = input_rows(op, op.ifm_shape, (a, min(a + height, op.ofm_shape.h)))
            assert 0 <= lo < hi <= op.ifm_shape.h
            assert hi - lo <= ifm_rows_for(op, height), (height, a, lo, hi)


def test_upscaling_reads_half_the_rows_of_an_even_aligned_stripe() -> None:
    nearest = upscaling(1, 0, Resampling.NEAREST)
    assert [ifm_rows_for(nearest, h) for h in (2, 4, 8)] == [1, 2, 4]
    assert ifm_rows_for(nearest, 3) == 3  # an odd stripe can start on the second copy of a row
    transpose = upscaling(3, 2, Resampling.TRANSPOSE)
    assert ifm_rows_for(transpose, 4) == 3  # ceil((4 - 1 + 3) / 2)
    plain = upscaling(3, 1, Resampling.NONE)
    assert ifm_rows_for(plain, 4) == 6


def test_producer_of_an_upscaling_consumer_makes_half_its_stripe() -> None:
    nearest = upscaling(1, 0, Resampling.NEAREST)
    assert [producer_rows_for(nearest, h) for h in (2, 4, 6, 7)] == [1, 2, 3, 4]
    assert producer_rows_for(upscaling(1, 0, Resampling.NONE), 4) == 4


def test_upscaling_stripes_are_even() -> None:
    nearest = upscaling(1, 0, Resampling.NEAREST)
    assert [stripe_rows_of(nearest, h) for h in (1, 2, 3, 40, 41)] == [2, 2, 4, 40, 40]
    assert stripe_rows_of(upscaling(1, 0, Resampling.NONE), 3) == 3


def test_the_last_stripe_reads_the_last_rows() -> None:
    op = upscaling(2, 0, Resampling.NEAREST)
    assert input_rows(op, op.ifm_shape, (38, 40)) == (19, 20)  # the bottom padding is not read
    assert op.ifm_shape == Shape4D(1, 20, 8, 4)
