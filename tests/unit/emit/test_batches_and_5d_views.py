"""Operators Vela's default core runs on the NPU that npuplan once left to the CPU (issue 25):
4-D operators of a batch above 1 (each batch element its own operations, ``lowering.batches``) and
5-D maps that only move bytes (``lowering.tiles``, ``Shape4D.of``). Each emitted file runs on the
simulator bit for bit as LiteRT runs the model."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.ir.graph import Graph
from tests.unit.emit.conftest import U55_128, U65_DEDICATED
from tests.unit.emit.test_grouped_convs import _run_both
from tests.unit.lowering._build import conv, fm, i32, op


@pytest.mark.parametrize("batch,kernel,stride,scenario", [
    (4, 3, 2, U55_128),  # split per element: a 3x3 window would cross batch elements
    (3, 1, 1, U65_DEDICATED),  # one convolution over the stacked rows
    (2, 3, 1, U65_DEDICATED),
])
def test_a_batched_convolution_runs_per_batch_element(tmp_path, batch, kernel, stride, scenario):
    x, y = fm("x", (batch, 8, 8, 5)), fm("y", (batch, 8 // stride, 8 // stride, 6))
    z = fm("z", (batch, 8 // stride, 8 // stride, 6))
    ops = [conv(x, y, kernel, stride=stride, act="RELU", index=0),
           op("ADD", [y, y], [z], 1, fused_activation_function="NONE")]
    npu, got, expected = _run_both(tmp_path, Graph("batched", tuple(ops), (x,), (z,)), scenario)
    assert got.shape == expected.shape and np.array_equal(got, expected)
    convs = [o for o in npu if o.tflite_type == "CONV_2D"]
    assert len(convs) == (1 if kernel == 1 else batch) and all(o.ifm_shape.n == o.ofm_shape.n == 1 for o in npu)


def test_a_batched_pool_reads_its_rows_per_element(tmp_path):
    x, y = fm("x", (3, 6, 6, 8)), fm("y", (3, 3, 3, 8))
    pool = op("MAX_POOL_2D", [x], [y], 0, padding="VALID", stride_h=2, stride_w=2, filter_height=2, filter_width=2,
              fused_activation_function="NONE")
    npu, got, expected = _run_both(tmp_path, Graph("pool", (pool,), (x,), (y,)), U55_128)
    assert np.array_equal(got, expected) and sum(o.tflite_type == "MAX_POOL_2D" for o in npu) == 3


@pytest.mark.parametrize("shape,multiples,scenario", [
    ((1, 6, 1, 5, 8), (1, 1, 3, 1, 1), U55_128),  # a new inner axis of H: every third row
    ((1, 6, 5, 1, 8), (1, 1, 1, 2, 1), U65_DEDICATED),  # the width
    ((1, 4, 5, 6), (1, 2, 1, 1), U55_128),  # a 4-D tile: boxes one after the other
    ((1, 4, 5, 6), (1, 1, 1, 3), U65_DEDICATED),  # the depth
    ((1, 1, 4, 6, 8), (1, 2, 1, 1, 1), U55_128),  # a new outer axis of H: the map twice, one after the other
])
def test_a_tile_of_one_axis_runs_as_copies(tmp_path, shape, multiples, scenario):
    x = fm("x", shape)
    y = fm("y", tuple(d * m for d, m in zip(shape, multiples)))
    tile = op("TILE", [x, i32("multiples", list(multiples))], [y], 0)
    npu, got, expected = _run_both(tmp_path, Graph("tile", (tile,), (x,), (y,)), scenario)
    assert got.shape == expected.shape and np.array_equal(got, expected)
    assert len(npu) == max(multiples)


def test_a_pack_along_axis_3_writes_its_5d_map_on_the_npu(tmp_path):
    a, b = fm("a", (1, 6, 5, 8)), fm("b", (1, 6, 5, 8))
    packed = fm("packed", (1, 6, 5, 2, 8))
    pack = op("PACK", [a, b], [packed], 0, axis=3, values_count=2)
    npu, got, expected = _run_both(tmp_path, Graph("pack", (pack,), (a, b), (packed,)), U55_128)
    assert got.shape == expected.shape and np.array_equal(got, expected) and len(npu) == 2


def test_a_tile_within_a_merged_axis_stays_on_the_cpu():
    from npuplan.lowering.support import unsupported_reason

    x, y = fm("x", (1, 4, 3, 5, 8)), fm("y", (1, 4, 6, 5, 8))  # the inner part of H, of size 3
    reason = unsupported_reason(op("TILE", [x, i32("m", [1, 1, 2, 1, 1])], [y], 0))
    assert reason is not None and "axis" in reason
    assert unsupported_reason(op("TILE", [x, i32("m2", [1, 2, 1, 1, 2])], [fm("y2", (1, 8, 3, 5, 16))], 0))


def test_a_batched_mean_over_rows_and_columns_runs_per_batch_element(tmp_path):
    """Each element's mean reads its rows where they lie: the emitter scales by the box it reads
    (``emit.mean``), not by the whole stacked map."""
    from npuplan.ir.types import Quantization

    x, y = fm("x", (4, 8, 8, 16)), fm("y", (4, 16), quant=Quantization((0.02,), (3,)))
    mean = op("MEAN", [x, i32("axes", [1, 2])], [y], 0, keep_dims=False)
    npu, got, expected = _run_both(tmp_path, Graph("mean", (mean,), (x,), (y,)), U55_128)
    assert got.shape == expected.shape and np.array_equal(got, expected)
    assert all(o.ifm_shape.n == o.ofm_shape.n == 1 for o in npu)


@pytest.mark.parametrize("first,second,scenario", [(1, 2, U55_128), (2, 0, U65_DEDICATED)])
def test_slices_at_a_batch_offset_are_read_where_they_lie(tmp_path, first, second, scenario):
    # PyTorch's fused QKV (3 x T x 1 x D) cut at batch offsets: the MAXIMUM reads each head in place,
    # batch element n at n x H rows of bytes (before: "reads at a batch offset (not emitted)", CPU)
    x = fm("x", (3, 6, 2, 16))
    a, b, y = fm("a", (1, 6, 2, 16)), fm("b", (1, 6, 2, 16)), fm("y", (1, 6, 2, 16))
    ops = [op("SLICE", [x, i32(f"begin{k}", [k, 0, 0, 0]), i32(f"size{k}", [1, 6, 2, 16])], [t], i)
           for i, (k, t) in enumerate(((first, a), (second, b)))]
    ops.append(op("MAXIMUM", [a, b], [y], 2))
    npu, got, expected = _run_both(tmp_path, Graph("heads", tuple(ops), (x,), (y,)), scenario)
    assert np.array_equal(got, expected)
    assert [o.tflite_type for o in npu] == ["MAXIMUM"] and npu[0].ifm_read_offset.n in (first, second)


def test_a_strided_slice_at_a_batch_offset_is_stepped_over_where_it_lies(tmp_path):
    # every other row and column of batch element 2, read by a pointwise convolution through the strides
    x, s, y = fm("x", (3, 6, 4, 16)), fm("s", (1, 3, 2, 16)), fm("y", (1, 3, 2, 8))
    ops = [op("STRIDED_SLICE", [x, i32("begin", [2, 0, 0, 0]), i32("end", [3, 6, 4, 16]), i32("strides", [1, 2, 2, 1])],
              [s], 0, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, offset=False),
           conv(s, y, 1, index=1)]
    npu, got, expected = _run_both(tmp_path, Graph("stepped", tuple(ops), (x,), (y,)), U55_128)
    assert np.array_equal(got, expected)
    assert [o.tflite_type for o in npu] == ["CONV_2D"] and npu[0].ifm_step == (2, 2) and npu[0].ifm_read_offset.n == 2
