"""Kernel ops keep the OFM view their kernel makes when they write a reshaped tensor."""

from __future__ import annotations

import numpy as np

from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType
from npuplan.lowering.ofm_views import kernel_ofm_views


def _conv_writing(ofm_shape: tuple[int, ...]) -> NpuOp:
    ifm = Tensor("x", (1, 16, 1, 8), DataType.INT8)
    ofm = Tensor("y", ofm_shape, DataType.INT8)
    return NpuOp(name="y", tflite_type="CONV_2D", op_type="Conv2DBias", block_type=BlockType.CONV, ifm=ifm,
                 ifm_shape=ifm.shape4d, ofm=ofm, ofm_shape=ofm.shape4d,
                 weights=np.zeros((8, 1, 1, 8), np.int8), bias=np.zeros(8, np.int32))


def test_a_squeezed_output_is_written_in_the_kernel_s_rows() -> None:
    (op,) = kernel_ofm_views((_conv_writing((1, 16, 8)),))  # squeezed: 4D 1x1x16x8
    assert isinstance(op, NpuOp) and op.ofm_shape == Shape4D(1, 16, 1, 8)


def test_an_op_writing_its_own_shape_is_left_alone() -> None:
    op = _conv_writing((1, 16, 1, 8))
    assert kernel_ofm_views((op,)) == (op,)
