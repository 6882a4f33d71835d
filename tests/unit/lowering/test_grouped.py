"""Convolutions over groups of channels: a grouped CONV_2D as one convolution per group, and a
depthwise convolution with a depth multiplier over several input channels as convolutions over
groups of 8 input channels, each reading and writing at a depth offset."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from npuplan.api import plan
from npuplan.commands import validate_plan
from npuplan.hw.accelerator import accelerator
from npuplan.io.tflite_write import write_tflite
from npuplan.ir.lowered import BlockType
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType
from npuplan.lowering import lower

from ._build import WQ, const, fm, graph, model, op


def _network(channels: int, multiplier: int = 2):
    x, y = fm("x", (1, 8, 8, channels)), fm("y", (1, 8, 8, channels * multiplier))
    values = np.arange(9 * channels * multiplier).reshape(1, 3, 3, channels * multiplier) % 13 - 6
    w = const("w", values, DataType.INT8, WQ)
    b = const("b", np.arange(channels * multiplier), DataType.INT32, None)
    dw = op("DEPTHWISE_CONV_2D", [x, w, b], [y], 0, padding="SAME", stride_h=1, stride_w=1, depth_multiplier=multiplier,
            dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="RELU")
    return model(graph([dw], [x], [y])), values


def test_groups_of_8_input_channels_with_block_diagonal_weights() -> None:
    m, values = _network(20)
    lg = lower(m, accelerator("ethos-u55-128"))
    assert not lg.cpu_ops
    first, second, third = lg.npu_ops
    assert (first.block_type, first.op_type) == (BlockType.CONV, "Conv2DBias")
    assert (first.ifm_shape, first.ofm_shape) == (Shape4D(1, 8, 8, 8), Shape4D(1, 8, 8, 16))
    assert (second.ifm_read_offset, second.ofm_write_offset) == (Shape4D(0, 0, 0, 8), Shape4D(0, 0, 0, 16))
    assert (third.ifm_read_offset, third.ofm_write_offset) == (Shape4D(0, 0, 0, 16), Shape4D(0, 0, 0, 32))
    assert third.ofm_write_shape == Shape4D(1, 8, 8, 8) and third.weights is not None
    assert third.weights.shape == (8, 3, 3, 4) and third.bias is not None and list(third.bias) == list(range(32, 40))
    for j in range(8):  # output 32 + j filters input 16 + j // 2 only
        assert (third.weights[j, :, :, j // 2] == values[0, :, :, 32 + j]).all()
        assert not np.delete(third.weights[j], j // 2, axis=-1).any()
    assert second.weights is not None and second.weights.shape == (16, 3, 3, 8)


def test_one_group_is_one_convolution_and_plans_validate(tmp_path: Path) -> None:
    (conv,) = lower(_network(8, 3)[0], accelerator("ethos-u55-128")).npu_ops
    assert conv.ifm_read_offset is None and conv.ofm_write_offset is None and conv.weights is not None
    assert conv.weights.shape == (24, 3, 3, 8)
    for channels in (8, 20):
        path = tmp_path / f"dw_{channels}.tflite"
        path.write_bytes(write_tflite(_network(channels)[0]))
        for optimise in ("Performance", "Size"):
            result = plan(path, optimise=optimise)
            validate_plan(result)
            assert not result.lowered.cpu_ops


def _grouped(channels: int = 16, per_group: int = 4, outs: int = 32):
    x, y = fm("x", (1, 8, 8, channels)), fm("y", (1, 8, 8, outs))
    values = np.arange(outs * 9 * per_group).reshape(outs, 3, 3, per_group) % 11 - 5
    w = const("w", values, DataType.INT8, WQ)
    b = const("b", np.arange(outs), DataType.INT32, None)
    conv = op("CONV_2D", [x, w, b], [y], 0, padding="SAME", stride_h=1, stride_w=1, dilation_h_factor=1,
              dilation_w_factor=1, fused_activation_function="RELU")
    return model(graph([conv], [x], [y])), values


def test_a_grouped_conv_is_one_convolution_per_group_and_plans_validate(tmp_path: Path) -> None:
    m, values = _grouped()
    ops = lower(m, accelerator("ethos-u55-128")).npu_ops
    assert len(ops) == 4 and all(o.op_type == "Conv2DBias" for o in ops)
    assert [o.ifm_read_offset for o in ops] == [Shape4D(0, 0, 0, 4 * g) for g in range(4)]
    assert [o.ofm_write_offset for o in ops] == [Shape4D(0, 0, 0, 8 * g) for g in range(4)]
    assert all(o.ifm_shape.c == 4 and o.ofm_write_shape == Shape4D(1, 8, 8, 8) for o in ops)
    assert ops[2].weights is not None and (ops[2].weights == values[16:24]).all()
    assert ops[2].bias is not None and list(ops[2].bias) == list(range(16, 24))
    path = tmp_path / "grouped.tflite"
    path.write_bytes(write_tflite(m))
    for optimise in ("Performance", "Size"):
        result = plan(path, optimise=optimise)
        validate_plan(result)
        assert not result.lowered.cpu_ops


def test_weights_whose_input_depth_does_not_divide_the_ifm_depth_stay_on_the_cpu() -> None:
    (cpu,) = lower(_grouped(channels=10)[0], accelerator("ethos-u55-128")).ops
    assert "input channels must divide the IFM's 10" in cpu.reason  # type: ignore[union-attr]
