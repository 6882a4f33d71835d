"""Corrupt quantization and oversized plans found by ``bench/fuzz.py --emit-tflite``: each is a
CPU fallback or a one-line refusal, never an internal error (exit status 4) or a warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from npuplan.errors import EmitError
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.lut_tables import activation_table


def test_a_leaky_relu_whose_scale_ratio_overflows_has_no_table_and_no_warning():
    """struct_tiny_yolo_160 (seed 91): an input scale of 1e38 over an output scale of 1e-38."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = activation_table("LEAKY_RELU", DataType.INT8, Quantization((1e38,), (0,)),
                                 Quantization((1e-38,), (0,)), {"alpha": 0.2})
    assert table is None


def test_a_scratch_area_beyond_int32_is_refused_in_one_line():
    """struct_tiny_yolo_160 (seed 91): a fuzzed shape planned a 2.5 GiB arena, which the writer
    could not declare (OverflowError)."""
    from npuplan.emit.model import check_declarable

    check_declarable(flash_bytes=1 << 20, scratch_bytes=(1 << 31) - 1, fast_scratch_bytes=0)
    with pytest.raises(EmitError, match="scratch area needs 2684354560 bytes"):
        check_declarable(flash_bytes=1 << 20, scratch_bytes=2684354560, fast_scratch_bytes=0)


def test_a_convolution_whose_output_scale_overflows_stays_on_the_cpu(tmp_path):
    """bytes_ds_cnn_kws (seed 91): a weight scale of 1e30 made the output stage's scale too large
    ('scale ... is too large for the output stage', an internal error)."""
    from npuplan.api import plan_and_emit
    from npuplan.io.tflite_write import write_tflite
    from npuplan.regstream import validate_tflite

    q = Quantization((0.05,), (3,))
    x, y, z = (Tensor(n, (1, 8, 8, 8), DataType.INT8, q) for n in ("x", "y", "z"))
    w = np.ones((8, 1, 1, 8), dtype=np.int8)
    b = np.zeros(8, dtype=np.int32)
    w.flags.writeable = b.flags.writeable = False
    conv = Op("CONV_2D", (x, Tensor("w", w.shape, DataType.INT8, Quantization((1e30,), (0,)), w),
                          Tensor("b", b.shape, DataType.INT32, None, b)), (y,),
              frozen_options({"padding": "SAME", "stride_h": 1, "stride_w": 1, "dilation_h_factor": 1,
                              "dilation_w_factor": 1, "fused_activation_function": "NONE"}), 0)
    add = Op("ADD", (y, y), (z,), frozen_options({"fused_activation_function": "NONE"}), 1)
    path = tmp_path / "bad_scale.tflite"
    path.write_bytes(write_tflite(Model("bad_scale", (Graph("main", (conv, add), (x,), (z,)),))))
    planned, emitted = plan_and_emit(path)
    assert [o.tflite_type for o in planned.lowered.cpu_ops] == ["CONV_2D"]
    assert any("output stage cannot express its scale" in note for note in emitted.notes)
    assert validate_tflite(emitted.data).npu_operations == emitted.npu_operations
