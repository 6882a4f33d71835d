"""Keras UpSampling2D (reshape/tile chains through 5-D tensors) lowered as a nearest resize."""

from __future__ import annotations

import numpy as np

from npuplan.hw.accelerator import accelerator
from npuplan.ir.graph import Op
from npuplan.ir.lowered import Resampling
from npuplan.ir.types import DataType
from npuplan.lowering import lower

from ._build import const, fm, graph, model, op

U55_128 = accelerator("ethos-u55-128")


def chain(h: int, w: int, c: int, fh: int, fw: int, *, tile_axis: int = 2) -> tuple[list[Op], object, object]:
    """Keras 3's export: x -> [1,H,1,W,C] -> tile fh -> [fh*H,W,1,C] -> tile fw -> [1,fh*H,fw*W,C]."""
    x = fm("x", (1, h, w, c))
    a = fm("a", (1, h, 1, w, c))
    b = fm("b", (1, h, fh, w, c) if tile_axis == 2 else (1, fh * h, 1, w, c))
    d, e = fm("d", (1, fh * h, w, 1, c)), fm("e", (1, fh * h, w, fw, c))
    y = fm("y", (1, fh * h, fw * w, c))
    m1 = [1, 1, 1, 1, 1]
    m1[tile_axis] = fh

    def shape(name: str, values: list[int]):
        return const(name, values, DataType.INT32, None)

    ops = [
        op("RESHAPE", [x, shape("s1", list(a.shape))], [a], 0),
        op("TILE", [a, shape("m1", m1)], [b], 1),
        op("RESHAPE", [b, shape("s2", list(d.shape))], [d], 2),
        op("TILE", [d, shape("m2", [1, 1, 1, fw, 1])], [e], 3),
        op("RESHAPE", [e, shape("s3", list(y.shape))], [y], 4),
    ]
    return ops, x, y


def test_upsampling2d_chain_becomes_one_nearest_resize() -> None:
    ops, x, y = chain(4, 6, 3, 2, 2)
    lg = lower(model(graph(ops, [x], [y])), U55_128)
    assert not lg.cpu_ops
    (npu,) = lg.npu_ops
    assert (npu.tflite_type, npu.op_type, npu.name) == ("RESIZE_NEAREST_NEIGHBOR", "ResizeNearestNeighbor", "y")
    assert npu.resampling is Resampling.NEAREST and npu.ifm.name == "x" and npu.ofm.name == "y"
    assert len(lg.removed) == 4 and all("UpSampling2D" in why for _, why in lg.removed)


def test_x4_chain_is_two_doublings() -> None:
    ops, x, y = chain(4, 4, 8, 4, 4)
    lg = lower(model(graph(ops, [x], [y])), U55_128)
    assert [o.ofm_shape.h for o in lg.npu_ops] == [8, 16]


def test_unequal_factors_run_as_width_then_height_copies() -> None:
    ops, x, y = chain(4, 5, 8, 2, 3)
    lg = lower(model(graph(ops, [x], [y])), U55_128)
    assert not lg.cpu_ops
    copies = lg.npu_ops
    assert [o.name for o in copies] == ["y_w0", "y_w1", "y_w2", "y_h0", "y_h1"]
    assert all(o.op_type == "MemoryCopy" and o.resampling is Resampling.NONE for o in copies)
    wide = copies[0].ofm
    assert wide.shape == (1, 20, 3, 8) and copies[2].ofm_write_offset is not None and copies[2].ofm_write_offset.w == 2
    assert copies[3].ifm is wide and copies[4].ofm.name == "y"
    assert (copies[4].ofm_shape.h, copies[4].ofm_shape.w, copies[4].ofm_shape.c) == (4, 2, 3 * 5 * 8)


def test_copies_compute_the_nearest_upscale() -> None:
    """Replaying the copies on an index tensor gives numpy's nearest upscale."""
    ops, x, y = chain(3, 4, 2, 3, 2)
    npu = lower(model(graph(ops, [x], [y])), U55_128).npu_ops
    data = {"x": np.arange(3 * 4 * 2).reshape(1, 3, 4, 2)}
    for o in npu:
        out = data.setdefault(o.ofm.name, np.zeros(o.ofm.shape, dtype=np.int64))
        src = data[o.ifm.name].reshape(o.ifm_shape.as_list())
        view = out.reshape(o.ofm_shape.as_list())  # a view of the same bytes
        assert o.ofm_write_offset is not None and o.ofm_write_shape is not None
        w = o.ofm_write_offset.w
        view[:, :, w:w + o.ofm_write_shape.w, :] = src
    expected = np.repeat(np.repeat(data["x"], 3, axis=1), 2, axis=2)
    assert np.array_equal(data["y"], expected)


def test_a_chain_that_is_not_an_upscale_is_left_alone() -> None:
    # tiling the height axis stacks the whole IFM twice ([x; x]): the same shapes, not an upscale
    ops, x, y = chain(4, 4, 8, 2, 2, tile_axis=1)
    lg = lower(model(graph(ops, [x], [y])), U55_128)
    assert not lg.npu_ops and len(lg.cpu_ops) == 5
