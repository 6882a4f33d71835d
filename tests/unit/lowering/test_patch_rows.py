"""``lowering.patch_rows``: a patchify convolution (height stride above 3, kernel = stride) runs on
the NPU per row of patches; LiteRT (the functional reference) agrees with the emitted file."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from npuplan.hw.accelerator import accelerator
from npuplan.ir.shape import Shape4D, keeps_rows
from npuplan.ir.types import DataType
from npuplan.lowering.lower import lower
from npuplan.lowering.patch_rows import patch_stride, split_patch_rows
from tests.unit.lowering._build import const, fm, graph, model, op


def _patchify(size: int, channels: int, patch: int, filters: int, *, padding: str = "VALID",
              patch_w: int | None = None, height: int | None = None):
    pw = patch_w or patch
    h = height or size
    rows, columns = (-(-h // patch), -(-size // pw)) if padding == "SAME" else (h // patch, size // pw)
    x, y = fm("x", (1, h, size, channels)), fm("y", (1, rows, columns, filters))
    w = const("w", np.random.default_rng(size).integers(-127, 128, (filters, patch, pw, channels)))
    b = const("b", np.arange(filters) * 40 - 200, DataType.INT32, None)
    conv = op("CONV_2D", [x, w, b], [y], 0, padding=padding, stride_h=patch, stride_w=pw, dilation_h_factor=1,
              dilation_w_factor=1, fused_activation_function="RELU")
    return graph([conv], [x], [y])


def test_a_patchify_convolution_is_a_batch_of_rows_of_patches():
    g = _patchify(32, 3, 4, 16)
    assert patch_stride(g.ops[0]) == 4
    rewritten, changed = split_patch_rows(g)
    assert changed and [o.type for o in rewritten.ops] == ["RESHAPE", "CONV_2D", "RESHAPE"]
    conv = rewritten.ops[1]
    # each patch's 4 columns x 3 channels are one pixel's 12 channels, the kernel 4 x 1 at stride 1
    assert conv.inputs[0].shape == (8, 4, 8, 12) and conv.outputs[0].shape == (8, 1, 8, 16)
    assert conv.inputs[1].shape == (16, 4, 1, 12)
    assert np.array_equal(conv.inputs[1].data.reshape(16, 4, 4, 3), g.ops[0].inputs[1].data)
    assert (conv.options["stride_h"], conv.options["stride_w"], conv.options["padding"]) == (1, 1, "VALID")
    assert rewritten.ops[-1].outputs[0] is g.outputs[0]


def test_what_the_hardware_runs_is_left_alone_and_what_is_no_patch_goes_to_stride_rows():
    hardware = _patchify(32, 3, 3, 8, height=33)  # stride 3: the hardware's own
    assert patch_stride(hardware.ops[0]) == 0 and split_patch_rows(hardware) == (hardware, False)
    for g in (_patchify(32, 3, 4, 8, height=30),  # 30 rows: not whole rows of patches
              _patchify(30, 3, 4, 8, padding="SAME", height=32)):  # SAME padding 2 columns
        assert patch_stride(g.ops[0]) == 0
        rewritten, changed = split_patch_rows(g)
        assert changed and "SLICE" in [o.type for o in rewritten.ops]  # stride_rows: one row at a time


def test_the_patch_rows_lower_to_npu_convolutions_of_one_output_row_reading_in_place():
    lowered = lower(model(_patchify(16, 3, 4, 8)), accelerator("ethos-u55-128"), deployable=True)
    assert not lowered.cpu_ops
    convs = [o for o in lowered.npu_ops if o.tflite_type == "CONV_2D"]
    assert len(convs) == 4 and all(o.ofm_shape.h == 1 and o.kernel.stride_y <= 3 for o in convs)
    assert not any(o.tflite_type == "SPLIT" for o in lowered.npu_ops)  # the rows read where they lie
    assert [o.ifm_read_offset.h for o in convs] == [12, 8, 4, 0]


def test_the_network_input_is_read_where_it_lies_through_the_rows_of_patches_view():
    # the rows-of-patches view (16 x 4 x 12) keeps the input's rows (16 x 16 x 3: 48 bytes each):
    # no copy of the input, each convolution reads its 4 rows of it in that view
    g = _patchify(16, 3, 4, 8)
    for deployable in (False, True):
        lowered = lower(model(g), accelerator("ethos-u55-128"), deployable=deployable)
        assert not any(o.tflite_type == "RESHAPE" and o.ifm.name == "x" for o in lowered.npu_ops)
        convs = [o for o in lowered.npu_ops if o.tflite_type == "CONV_2D"]
        assert {o.ifm.name for o in convs} == {"x"} and {o.ifm_frame for o in convs} == {Shape4D(1, 16, 4, 12)}
        assert sorted(o.ifm_read_offset.h for o in convs) == [0, 4, 8, 12]


def test_without_framed_reads_the_rows_are_read_from_a_copy_of_the_input():
    # the other form the planner prices: one copy (brick format, long bursts) the rows are read from
    lowered = lower(model(_patchify(16, 3, 4, 8)), accelerator("ethos-u65-256"), framed_reads=False)
    copies = [o for o in lowered.npu_ops if o.tflite_type == "RESHAPE" and o.ifm.name == "x"]
    convs = [o for o in lowered.npu_ops if o.tflite_type == "CONV_2D"]
    assert len(copies) == 1 and {o.ifm.name for o in convs} == {copies[0].ofm.name}
    assert all(o.ifm_frame is None for o in convs)


def test_a_view_that_does_not_keep_the_rows_is_not_a_frame():
    assert keeps_rows(Shape4D(1, 16, 4, 12), Shape4D(1, 16, 16, 3))
    assert not keeps_rows(Shape4D(1, 8, 8, 12), Shape4D(1, 16, 16, 3))  # two rows of the map in one
    assert not keeps_rows(Shape4D(2, 8, 16, 3), Shape4D(1, 16, 16, 3))  # batches


def test_a_kernel_narrower_than_its_width_stride_is_left_to_strided_conv():
    g = _patchify(32, 3, 4, 8, patch_w=8)
    g = replace(g, ops=(replace(g.ops[0], inputs=(g.ops[0].inputs[0], const("w", np.ones((8, 4, 4, 3))),
                                                   g.ops[0].inputs[2])),))
    rewritten, changed = split_patch_rows(g)
    assert changed and rewritten.ops[1].inputs[0].shape == (8, 4, 32, 3) and rewritten.ops[1].options["stride_w"] == 8


@pytest.mark.parametrize("size,channels,patch,filters,padding,patch_w", [
    (16, 3, 4, 8, "VALID", None),
    (16, 8, 8, 16, "SAME", None),
    (16, 4, 4, 8, "VALID", 8),
])
def test_the_emitted_patch_rows_agree_with_litert(size, channels, patch, filters, padding, patch_w, tmp_path):
    pytest.importorskip("ai_edge_litert", reason="needs LiteRT: pip install 'npuplan[run]'")
    from npuplan.io.tflite_write import write_tflite
    from npuplan.run import check_model

    path = tmp_path / "patchify.tflite"
    path.write_bytes(write_tflite(model(_patchify(size, channels, patch, filters, padding=padding, patch_w=patch_w))))
    result = check_model(path, samples=2, seed=0, reference_kernels=True)
    assert not result.plan.lowered.cpu_ops
    assert all(d.agrees for d in result.diffs), [str(d) for d in result.diffs]
