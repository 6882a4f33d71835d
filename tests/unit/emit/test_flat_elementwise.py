"""An elementwise op over same-shaped maps whose depth fills no brick runs over a 16-deep view of
the same bytes (as Vela's default core runs it), when that plan is better (fewer cycles, then less
SRAM; issue 25)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.ofm_views import flat_depth, flat_elementwise_views
from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.ir.shape import Shape4D
from tests.unit.emit.conftest import emit_graph
from tests.unit.lowering._build import const, fm, graph, op

pytest.importorskip("ethosu.vela.api", reason="the deploy extra (ethos-u-vela) is not installed")


def _add(shape: tuple[int, ...]) -> NpuOp:
    a, b, y = fm("a", shape), fm("b", shape), fm("y", shape)
    s = a.shape4d
    return NpuOp("y", "ADD", "Add", BlockType.ELEMENTWISE, a, s, y, s, ifm2=b, ifm2_shape=s, elementwise="ADD")


def test_the_view_is_16_deep_and_as_square_as_the_elements_allow():
    (flat,) = flat_elementwise_views((_add((1, 8, 8, 4)),))
    assert flat.ofm_shape == flat.ifm_shape == flat.ifm2_shape == Shape4D(1, 4, 4, 16)
    (wide,) = flat_elementwise_views((_add((1, 6, 10, 8)),))
    assert wide.ofm_shape == Shape4D(1, 5, 6, 16)
    kept = (_add((1, 8, 8, 16)), _add((1, 1, 1, 7)))  # whole bricks already; no deeper divisor fills them better
    assert flat_elementwise_views(kept) == kept


def test_elements_that_fill_no_whole_brick_run_over_the_divisor_filling_the_bricks_best():
    # 45 elements: 15 deep fills 94% of each brick (45 deep as much: the shallower is kept), 3 deep 19%
    (flat,) = flat_elementwise_views((_add((1, 5, 3, 3)),))
    assert flat.ofm_shape == flat.ifm_shape == flat.ifm2_shape == Shape4D(1, 1, 3, 15)
    five = (_add((1, 3, 3, 5)),)  # 5 deep fills 31% of each brick already: kept
    assert flat_elementwise_views(five) == five
    # a 45x51x3 image (zoo6 mixed_strides_uint8_45, 6885 = 3^4 * 5 * 17 elements): 15 deep, not 3
    assert flat_depth(Shape4D(1, 45, 51, 3)) == 15
    assert flat_depth(Shape4D(1, 1, 1, 7)) is None and flat_depth(Shape4D(1, 4, 4, 3)) == 16


def test_a_flat_add_computes_what_litert_computes(tmp_path):
    pytest.importorskip("ai_edge_litert", reason='LiteRT (the "run" extra) is the reference')
    from npuplan.run import CompiledModel, ReferenceModel, compare_runs

    rng = np.random.default_rng(5)
    x, c, s = fm("x", (1, 8, 8, 8)), fm("c", (1, 8, 8, 8), quant=Quantization((0.07,), (2,))), fm("s", (1, 8, 8, 8))
    g = graph([_conv1x1(x, c, rng, 0), op("ADD", [c, x], [s], 1, fused_activation_function="NONE")], [x], [s])
    planned, emitted, report = emit_graph(tmp_path, g)
    add = next(o for o in planned.lowered.npu_ops if o.tflite_type == "ADD")
    # the 16-deep view is as fast as the 8-deep add in bricks, in half the SRAM; so is the 8-deep add
    # over maps kept NHWC (packed), which the planner takes first on equal cycles and fewer map bytes
    packed = "feature maps of unaligned depth kept NHWC" in planned.schedule.notes
    assert add.ofm_shape == Shape4D(1, 4, 8, 16) or packed
    assert planned.schedule.sram_peak_bytes == 1024
    assert report.npu_operations == emitted.npu_operations
    diffs = compare_runs(CompiledModel(emitted.data), ReferenceModel((tmp_path / f"{g.name}.tflite").read_bytes(),
                                                                  reference_kernels=True),
                         samples=2, seed=0)
    # against LiteRT's reference kernels (TFLite Micro's): its optimised 1x1 conv rounds 2 of these
    # 1,024 elements otherwise, in Vela's file too
    assert all(d.differing == 0 for d in diffs), [str(d) for d in diffs]


def _add_beside_a_conv_concatenated(rng: np.random.Generator):
    """x -> CONV_2D -> c; ADD(c, x) -> s; x -> CONV_2D -> d; CONCATENATION(s, d) along depth: the
    ADD's output is a slice of the concatenation, 8 deep (the elementwise form's case)."""
    q = Quantization((0.07,), (2,))
    x, c, s, d = fm("x", (1, 8, 8, 8)), fm("c", (1, 8, 8, 8), quant=q), fm("s", (1, 8, 8, 8)), fm("d", (1, 8, 8, 8))
    y = fm("y", (1, 8, 8, 16))
    ops = [_conv1x1(x, c, rng, 0), op("ADD", [c, x], [s], 1, fused_activation_function="NONE"), _conv1x1(x, d, rng, 2),
           op("CONCATENATION", [s, d], [y], 3, axis=3, fused_activation_function="NONE")]
    return graph(ops, [x], [y])


def _conv1x1(x, y, rng: np.random.Generator, index: int):
    w = const(f"{y.name}_w", rng.integers(-30, 30, (y.shape[-1], 1, 1, x.shape[-1])))
    b = const(f"{y.name}_b", rng.integers(-40, 40, y.shape[-1]), DataType.INT32, None)
    return op("CONV_2D", [x, w, b], [y], index, padding="VALID", stride_h=1, stride_w=1, dilation_h_factor=1,
              dilation_w_factor=1, fused_activation_function="NONE")


def test_a_flat_add_whose_output_is_concatenated_keeps_its_copy():
    # its 16-deep view is not its slice's box (a slice's channel offset is no offset in that view):
    # the concatenation copies the ADD's own map, while a convolution writes its slice in place
    from npuplan.hw.accelerator import accelerator
    from npuplan.lowering.lower import lower
    from tests.unit.lowering._build import model

    lowered = lower(model(_add_beside_a_conv_concatenated(np.random.default_rng(5))), accelerator("ethos-u55-128"),
                    concat_writes=True, vela_forms=True, deployable=True)
    add = next(o for o in lowered.npu_ops if o.tflite_type == "ADD")
    assert add.ofm_shape == Shape4D(1, 4, 8, 16) and add.ofm_write_offset is None and add.ofm.name == "s"
    assert sorted(o.tflite_type for o in lowered.npu_ops if o.ofm.name == "y") == ["CONCATENATION", "CONV_2D"]


def _requantised_input(h: int = 32, w: int = 32):
    """uint8 HxWx3 -> QUANTIZE to int8 -> 1x1 CONV_2D: the rescale (a 1x1 average pool) is 3 deep."""
    rng = np.random.default_rng(7)
    u = fm("u", (1, h, w, 3), DataType.UINT8, Quantization((0.0295,), (122,)))
    x, y = fm("x", (1, h, w, 3), quant=Quantization((0.0295,), (-6,))), fm("y", (1, h, w, 8))
    return graph([op("QUANTIZE", [u], [x], 0), _conv1x1(x, y, rng, 1)], [u], [y])


@pytest.mark.parametrize(("height", "width", "view"), [
    # Vela's default core rescales such an input over a 16-deep view (cnn_uint8_32: 4384 cycles
    # on the U55-128 against 8273 for the 3-deep pool)
    (32, 32, Shape4D(1, 12, 16, 16)),
    # 765 = 3^2 * 5 * 17 elements, no multiple of 16: 15 deep (zoo6 mixed_strides_uint8_45, a 45x51x3
    # image: the 3-deep pool took 18801 of the network's 37826 cycles on the U55-128)
    (15, 17, Shape4D(1, 3, 17, 15)),
])
def test_a_requantising_pool_runs_flat_and_computes_what_litert_computes(tmp_path, height, width, view):
    pytest.importorskip("ai_edge_litert", reason='LiteRT (the "run" extra) is the reference')
    from npuplan.run import CompiledModel, ReferenceModel, compare_runs

    g = _requantised_input(height, width)
    planned, emitted, report = emit_graph(tmp_path, g)
    pool = next(o for o in planned.lowered.npu_ops if o.tflite_type == "QUANTIZE")
    assert pool.ofm_shape == pool.ifm_shape == view
    assert report.npu_operations == emitted.npu_operations
    diffs = compare_runs(CompiledModel(emitted.data), ReferenceModel((tmp_path / f"{g.name}.tflite").read_bytes(),
                                                                  reference_kernels=True),
                         samples=2, seed=0)
    assert all(d.differing == 0 for d in diffs), [str(d) for d in diffs]


def test_a_pool_over_channels_of_their_own_scale_keeps_its_view():
    from npuplan.ir.lowered import PoolKind

    x = fm("x", (1, 8, 8, 3))
    y = fm("y", (1, 8, 8, 3), quant=Quantization((0.1, 0.2, 0.3), (0, 0, 0), axis=3))
    s = x.shape4d
    pool = NpuOp("y", "QUANTIZE", "AvgPool", BlockType.POOLING, x, s, y, s, pool=PoolKind.AVERAGE)
    assert flat_elementwise_views((pool,)) == (pool,)
    plain = replace(pool, ofm=fm("z", (1, 8, 8, 3)))
    (flat,) = flat_elementwise_views((plain,))
    assert flat.ofm_shape == flat.ifm_shape == Shape4D(1, 3, 4, 16) and flat.ifm2_shape is None
