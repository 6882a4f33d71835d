"""A STRIDED_SLICE stepping over rows and columns read in place by the 1x1 kernel after it (a
strided view of the slice's source, as Vela reads it through the IFM strides): the same outputs as
LiteRT's reference kernels, and no copy left."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from npuplan.hw.accelerator import accelerator
from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
from npuplan.ir.lowered import BlockType
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering import lower

_Q = Quantization((0.05,), (-3,))


def _const(name: str, values: np.ndarray, dtype: DataType, quant: Quantization | None) -> Tensor:
    values = values.astype(np.dtype(dtype.value))
    values.flags.writeable = False
    return Tensor(name, values.shape, dtype, quant, values)


def _model(kernel: str) -> Model:
    """x (1 x 13 x 14 x 10) -> STRIDED_SLICE rows 1:12:2, columns 0:14:3, channels 2:7 -> a 1x1
    CONV_2D (or MAX_POOL_2D) -> y."""
    rng = np.random.default_rng(7)
    x = Tensor("x", (1, 13, 14, 10), DataType.INT8, _Q)
    s = Tensor("s", (1, 6, 5, 5), DataType.INT8, _Q)
    i32 = lambda name, v: _const(name, np.array(v), DataType.INT32, None)  # noqa: E731
    ops = [Op("STRIDED_SLICE", (x, i32("b", [0, 1, 0, 2]), i32("e", [1, 12, 14, 7]), i32("st", [1, 2, 3, 1])), (s,),
              frozen_options({}), 0)]
    if kernel == "conv":
        y = Tensor("y", (1, 6, 5, 3), DataType.INT8, Quantization((0.11,), (4,)))
        w = _const("w", rng.integers(-127, 128, (3, 1, 1, 5)), DataType.INT8, Quantization((0.02,), (0,)))
        b = _const("bias", rng.integers(-300, 300, 3), DataType.INT32, Quantization((0.001,), (0,)))
        ops.append(Op("CONV_2D", (s, w, b), (y,), frozen_options(
            {"padding": "SAME", "stride_h": 1, "stride_w": 1, "dilation_h_factor": 1, "dilation_w_factor": 1,
             "fused_activation_function": "NONE"}), 1))
    else:
        y = Tensor("y", (1, 6, 5, 5), DataType.INT8, _Q)
        ops.append(Op("MAX_POOL_2D", (s,), (y,), frozen_options(
            {"padding": "VALID", "stride_h": 1, "stride_w": 1, "filter_height": 1, "filter_width": 1,
             "fused_activation_function": "NONE"}), 1))
    return Model("strided_read", (Graph("main", tuple(ops), (x,), (y,)),))


@pytest.mark.parametrize("kernel", ["conv", "pool"])
def test_the_kernel_after_a_strided_slice_steps_over_its_source(kernel: str) -> None:
    (npu,) = lower(_model(kernel), accelerator("ethos-u55-128")).npu_ops
    assert npu.block_type is (BlockType.CONV if kernel == "conv" else BlockType.POOLING)
    assert npu.ifm.name == "x" and npu.ifm_read_offset == Shape4D(0, 1, 0, 2)
    assert npu.ifm_shape == Shape4D(1, 6, 5, 5) and npu.ifm_step == (2, 3)
    assert (npu.kernel.stride_y, npu.kernel.stride_x) == (1, 1)
    assert npu.ofm_shape == Shape4D(1, 6, 5, 3 if kernel == "conv" else 5)


@pytest.mark.parametrize("kernel", ["conv", "pool"])
@pytest.mark.parametrize("accel", ["ethos-u55-128", "ethos-u65-256"])
def test_a_strided_read_computes_what_litert_does(tmp_path: Path, kernel: str, accel: str) -> None:
    pytest.importorskip("ai_edge_litert", reason="needs LiteRT: pip install 'npuplan[run]'")
    from npuplan.run import check_model

    path = tmp_path / "strided_read.tflite"
    path.write_bytes(write_tflite(_model(kernel)))
    result = check_model(path, samples=2, seed=0, reference_kernels=True, accelerator_config=accel)
    assert all(d.agrees for d in result.diffs), [str(d) for d in result.diffs]
