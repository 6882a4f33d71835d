"""``lowering.stride_rows``: a convolution of height stride above 3 whose windows overlap or pad runs
one output row at a time on the NPU; LiteRT (the functional reference) agrees with the emitted file."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.ir.types import DataType
from npuplan.lowering.patch_rows import split_patch_rows
from npuplan.lowering.stride_rows import strided_rows
from tests.unit.lowering._build import const, fm, graph, model, op


def _strided(size: int, channels: int, kernel: int, stride: int, filters: int, padding: str):
    out = -(-size // stride) if padding == "SAME" else (size - kernel) // stride + 1
    x, y = fm("x", (1, size, size, channels)), fm("y", (1, out, out, filters))
    w = const("w", np.random.default_rng(size + kernel).integers(-127, 128, (filters, kernel, kernel, channels)))
    b = const("b", np.arange(filters) * 30 - 100, DataType.INT32, None)
    conv = op("CONV_2D", [x, w, b], [y], 0, padding=padding, stride_h=stride, stride_w=stride, dilation_h_factor=1,
              dilation_w_factor=1, fused_activation_function="RELU")
    return graph([conv], [x], [y])


def test_an_overlapping_same_convolution_is_a_pad_a_slice_and_a_convolution_per_row():
    g = _strided(32, 3, 7, 4, 16, "SAME")
    ops = strided_rows(g.ops[0])
    assert ops is not None
    types = [o.type for o in ops]
    assert types == ["PAD"] + ["SLICE"] * 8 + ["CONV_2D"] * 8 + ["CONCATENATION"]
    # SAME: 3 rows and columns of padding (1 before, 2 after), one more column so the width divides by 4
    assert ops[0].outputs[0].shape == (1, 35, 36, 3)
    begins = [int(o.inputs[1].data[1]) for o in ops if o.type == "SLICE"]
    assert begins == [0, 4, 8, 12, 16, 20, 24, 28] and all(o.outputs[0].shape == (1, 7, 36, 3) for o in ops[1:9])
    assert all(o.options["stride_h"] == 1 and o.options["padding"] == "VALID" for o in ops if o.type == "CONV_2D")
    assert ops[-1].outputs[0] is g.outputs[0]


def test_a_valid_convolution_needs_no_pad_and_a_hardware_stride_is_left_alone():
    ops = strided_rows(_strided(30, 8, 5, 4, 8, "VALID").ops[0])
    assert ops is not None and ops[0].type == "SLICE"
    assert strided_rows(_strided(30, 8, 5, 3, 8, "VALID").ops[0]) is None
    patch = _strided(32, 3, 4, 4, 8, "VALID")
    assert [o.type for o in split_patch_rows(patch)[0].ops] == ["RESHAPE", "CONV_2D", "RESHAPE"]  # patch_rows'


@pytest.mark.parametrize("size,channels,kernel,stride,filters,padding", [
    (32, 3, 7, 4, 16, "SAME"),
    (30, 8, 5, 4, 8, "VALID"),
    (27, 3, 7, 5, 8, "SAME"),
])
def test_the_emitted_rows_agree_with_litert(size, channels, kernel, stride, filters, padding, tmp_path):
    pytest.importorskip("ai_edge_litert", reason="needs LiteRT: pip install 'npuplan[run]'")
    from npuplan.io.tflite_write import write_tflite
    from npuplan.run import check_model

    path = tmp_path / "strided.tflite"
    path.write_bytes(write_tflite(model(_strided(size, channels, kernel, stride, filters, padding))))
    result = check_model(path, samples=2, seed=0, reference_kernels=True)
    assert not result.plan.lowered.cpu_ops
    assert all(d.agrees for d in result.diffs), [str(d) for d in result.diffs]


def test_a_hostile_stride_or_an_output_its_padding_does_not_give_is_left_alone():
    # a fuzzed file's stride of 2**30 + 2 asked for a PAD of 8e9 rows (an int32 overflow)
    g = _strided(32, 3, 3, 4, 8, "SAME")
    conv = g.ops[0]
    from npuplan.ir.graph import frozen_options
    from dataclasses import replace
    hostile = replace(conv, options=frozen_options({**conv.options, "stride_h": 1073741826}))
    assert strided_rows(hostile) is None
    wrong = replace(conv, outputs=(fm("y", (1, 9, 8, 8)),))  # SAME at stride 4 gives 8 rows
    assert strided_rows(wrong) is None and strided_rows(conv) is not None
