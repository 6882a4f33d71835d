"""``lowering.tiles``: TILE of one axis as copies in the 4-D views."""

from __future__ import annotations

from npuplan.ir.shape import Shape4D
from npuplan.lowering.tiles import convert_tile, tile_reason
from tests.unit.lowering._build import fm, i32, op


def _tile(shape, multiples):
    x = fm("x", shape)
    y = fm("y", tuple(d * m for d, m in zip(shape, multiples)))
    return op("TILE", [x, i32("m", list(multiples))], [y], 0)


def test_a_new_inner_axis_of_the_rows_writes_every_f_th_row():
    ops = convert_tile(_tile((1, 10, 1, 10, 32), (1, 1, 2, 1, 1)))  # UpSampling2D's repeat of the rows
    assert [(o.ofm_write_offset, o.ofm_step) for o in ops] == [(Shape4D(0, 0, 0, 0), (2, 1)), (Shape4D(0, 1, 0, 0), (2, 1))]
    assert all(o.ifm_shape == o.ofm_shape == Shape4D(1, 10, 10, 32) for o in ops)


def test_an_outer_or_lone_axis_writes_boxes_one_after_the_other():
    ops = convert_tile(_tile((1, 4, 5, 6), (1, 1, 3, 1)))
    assert [o.ofm_write_offset for o in ops] == [Shape4D(0, 0, 5 * k, 0) for k in range(3)]
    assert all(o.ofm_step is None and o.ofm_write_shape == Shape4D(1, 4, 5, 6) for o in ops)
    ops = convert_tile(_tile((1, 2, 3, 4, 8), (1, 2, 1, 1, 1)))  # the outer part of the rows
    assert [o.ofm_write_offset for o in ops] == [Shape4D(0, 0, 0, 0), Shape4D(0, 6, 0, 0)]


def test_which_tiles_stay_on_the_cpu():
    assert tile_reason(_tile((1, 10, 1, 10, 32), (1, 1, 2, 1, 1))) is None
    assert tile_reason(_tile((1, 4, 3, 5, 8), (1, 1, 2, 1, 1))) is not None  # inner part of H, size 3
    assert tile_reason(_tile((2, 4, 5, 6), (2, 1, 1, 1))) is not None  # the batch
    assert tile_reason(_tile((1, 4, 5, 6), (1, 2, 2, 1))) is not None  # two axes
