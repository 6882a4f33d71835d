"""Operators the deploy path emits that it once left on the CPU (issue 25: Vela 5.2.0 runs them on
the NPU): a half-pixel x2 RESIZE_BILINEAR (four 2x2 depthwise convolutions over the input padded
with its own edges, each writing every other row and column) and ARG_MAX along the depth (a
shift by 7 bits plus each channel's reversed index, a max pool whose 16-bit table keeps the
index, a widening cast; into int64 as two 32-bit halves). The resize's other form, its phases
written to an intermediate map then copied, is chosen where the output lies in slow memory. Each emitted file runs on the
simulator bit for bit as LiteRT runs the model (the functional reference)."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.ir.graph import Graph
from npuplan.ir.types import DataType, Quantization
from tests.unit.emit.conftest import U55_128, U65_DEDICATED
from tests.unit.emit.test_grouped_convs import _run_both
from tests.unit.lowering._build import const, fm, op


@pytest.mark.parametrize("shape,zero_point,scenario", [
    ((1, 6, 7, 8), -3, U55_128),
    ((1, 5, 4, 20), 17, U55_128),  # two bricks of channels, a positive zero point
    ((1, 8, 8, 16), -128, U65_DEDICATED),
    ((1, 3, 9, 3), 0, U65_DEDICATED),
])
def test_a_half_pixel_bilinear_resize_runs_on_the_npu_as_litert_runs_it(tmp_path, shape, zero_point, scenario):
    q = Quantization(scale=(0.05,), zero_point=(zero_point,))
    x = fm("x", shape, quant=q)
    _, h, w, c = shape
    y = fm("y", (1, 2 * h, 2 * w, c), quant=q)
    size = const("size", [2 * h, 2 * w], DataType.INT32, None)
    graph = Graph("bilinear", (op("RESIZE_BILINEAR", [x, size], [y], 0, align_corners=False,
                                  half_pixel_centers=True),), (x,), (y,))
    ops, got, expected = _run_both(tmp_path, graph, scenario)
    phases = [o for o in ops if o.edge_padding]
    assert len(phases) == 4 and {(o.ofm_write_offset.h, o.ofm_write_offset.w) for o in phases} == {
        (0, 0), (0, 1), (1, 0), (1, 1)}
    # the output in the U65's slow arena: the phases write a fast intermediate, one copy the output
    staged = any(o.name.endswith("_staged_avgpool") for o in ops)
    assert staged == (scenario is U65_DEDICATED)
    assert got.shape == expected.shape and np.array_equal(got, expected)


@pytest.mark.parametrize("shape,zero_point,out,scenario", [
    ((1, 6, 7, 8), -3, DataType.INT32, U55_128),
    ((1, 5, 4, 20), 127, DataType.INT32, U55_128),  # the largest zero point: values less it down to -255
    ((1, 8, 8, 3), -128, DataType.INT64, U65_DEDICATED),  # TensorFlow's default index type
    ((1, 4, 9, 127), 0, DataType.INT32, U65_DEDICATED),  # the deepest the 7-bit index holds
    ((1, 7, 5, 33), 5, DataType.INT64, U55_128),
])
def test_an_argmax_runs_on_the_npu_as_litert_runs_it(tmp_path, shape, zero_point, out, scenario):
    x = fm("x", shape, quant=Quantization(scale=(0.05,), zero_point=(zero_point,)))
    y = fm("y", shape[:-1], out, quant=None)
    axis = const("axis", [len(shape) - 1], DataType.INT32, None)
    graph = Graph("argmax", (op("ARG_MAX", [x, axis], [y], 0, output_type=2 if out == DataType.INT32 else 4),),
                  (x,), (y,))
    ops, got, expected = _run_both(tmp_path, graph, scenario)
    widen = "DepthwiseConv2DBias" if out == DataType.INT32 else "Conv2DBias"  # an int64's halves: two channels
    assert [o.op_type for o in ops] == ["DepthwiseConv2DBias", "MaxPool", widen]
    assert got.dtype == expected.dtype and np.array_equal(got, expected)


def test_an_argmax_picks_the_lowest_index_among_equal_values(tmp_path):
    """Ties: TFLite's ARG_MAX takes the first largest value; a few values make ties everywhere."""
    from npuplan.api import plan_and_emit
    from npuplan.io.tflite_write import write_tflite
    from npuplan.ir.graph import Model
    from npuplan.run.litert import ReferenceModel
    from npuplan.run.runner import CompiledModel

    x = fm("x", (1, 4, 5, 12), quant=Quantization(scale=(0.05,), zero_point=(3,)))
    y = fm("y", (1, 4, 5), DataType.INT32, quant=None)
    axis = const("axis", [3], DataType.INT32, None)
    graph = Graph("ties", (op("ARG_MAX", [x, axis], [y], 0, output_type=2),), (x,), (y,))
    data = write_tflite(Model(graph.name, (graph,)))
    (tmp_path / "ties.tflite").write_bytes(data)
    planned, emitted = plan_and_emit(tmp_path / "ties.tflite", **U55_128)
    assert not planned.lowered.cpu_ops
    values = np.random.default_rng(5).choice(np.array([-128, 0, 127], dtype=np.int8), size=(1, 4, 5, 12))
    got = CompiledModel(emitted.data).invoke([values])[0]
    assert np.array_equal(got, ReferenceModel(data, label="ties").invoke([values])[0])
    assert np.array_equal(got, np.argmax(values, axis=-1))


def test_an_int16_half_pixel_bilinear_resize_runs_on_the_npu_as_litert_runs_it(tmp_path):
    from npuplan.api import plan_and_emit
    from npuplan.io.tflite_write import write_tflite
    from npuplan.ir.graph import Model
    from npuplan.run.litert import ReferenceModel
    from npuplan.run.runner import CompiledModel

    q = Quantization(scale=(0.001,), zero_point=(0,))
    x, y = fm("x", (1, 5, 6, 8), DataType.INT16, quant=q), fm("y", (1, 10, 12, 8), DataType.INT16, quant=q)
    size = const("size", [10, 12], DataType.INT32, None)
    graph = Graph("bilinear16", (op("RESIZE_BILINEAR", [x, size], [y], 0, align_corners=False,
                                    half_pixel_centers=True),), (x,), (y,))
    data = write_tflite(Model(graph.name, (graph,)))
    (tmp_path / "b16.tflite").write_bytes(data)
    planned, emitted = plan_and_emit(tmp_path / "b16.tflite", **U55_128)
    assert not planned.lowered.cpu_ops
    values = np.random.default_rng(1).integers(-32768, 32768, (1, 5, 6, 8), dtype=np.int16)
    got = CompiledModel(emitted.data).invoke([values])[0]
    assert np.array_equal(got, ReferenceModel(data, label="bilinear16").invoke([values])[0])


@pytest.mark.parametrize("scenario", [U55_128, U65_DEDICATED])
def test_a_pool_writes_the_bricks_a_half_pixel_resize_reads(tmp_path, scenario):
    """The max pool before the resize (exact, unlike a convolution's rounding) writes its map in
    bricks, padded with its edges by the phases' re-based tiles: no copy of it
    (``lowering.edge_copies``), the same outputs as LiteRT's."""
    q = Quantization(scale=(0.05,), zero_point=(3,))
    x, y, z = fm("x", (1, 6, 7, 8), quant=q), fm("y", (1, 6, 7, 8), quant=q), fm("z", (1, 12, 14, 8), quant=q)
    pool = op("MAX_POOL_2D", [x], [y], 0, padding="SAME", stride_h=1, stride_w=1, filter_height=3, filter_width=3,
              fused_activation_function="NONE")
    size = const("size", [12, 14], DataType.INT32, None)
    resize = op("RESIZE_BILINEAR", [y, size], [z], 1, align_corners=False, half_pixel_centers=True)
    ops, got, expected = _run_both(tmp_path, Graph("pool_bilinear", (pool, resize), (x,), (z,)), scenario)
    assert not any(o.name.endswith("_rb_init_avgpool") for o in ops)
    assert sum(o.ifm is ops[0].ofm for o in ops if o.edge_padding) == 4
    assert len(np.unique(expected)) > 16 and np.array_equal(got, expected)
