"""End-to-end lowering of tiny graphs and of the shipped models."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from npuplan.hw.accelerator import accelerator
from npuplan.io.tflite import read_tflite
from npuplan.ir.lowered import Activation, BlockType, CpuOp, NpuOp, Padding, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType
from npuplan.lowering import lower
from npuplan.lowering.softmax import softmax_steps

from ._build import conv, const, fm, graph, model, op

DATA = Path(__file__).resolve().parents[2] / "data"
U55_128 = accelerator("ethos-u55-128")


def test_conv_fields_and_same_padding() -> None:
    x, y = fm("x", (1, 9, 9, 4)), fm("y", (1, 5, 5, 8))
    lg = lower(model(graph([conv(x, y, 3, stride=2, act="RELU6")], [x], [y])), U55_128)
    (npu,) = lg.npu_ops
    assert (npu.op_type, npu.block_type, npu.tflite_type) == ("Conv2DBias", BlockType.CONV, "CONV_2D")
    assert npu.ifm_shape == Shape4D(1, 9, 9, 4) and npu.ofm_shape == Shape4D(1, 5, 5, 8)
    assert npu.kernel.padding == Padding(1, 1, 1, 1) and npu.kernel.stride_y == 2
    assert npu.weights is not None and npu.weights.shape == (8, 3, 3, 4)
    assert npu.bias is not None and npu.activation is Activation.RELU6 and npu.name == "y"


def test_same_padding_asymmetric() -> None:
    x, y = fm("x", (1, 8, 8, 4)), fm("y", (1, 4, 4, 8))
    (npu,) = lower(model(graph([conv(x, y, 3, stride=2)], [x], [y])), U55_128).npu_ops
    assert npu.kernel.padding == Padding(top=0, left=0, bottom=1, right=1)


def test_1x1_conv_on_1x1_ifm_becomes_fully_connected() -> None:
    x, y = fm("x", (1, 1, 1, 16)), fm("y", (1, 1, 1, 8))
    (npu,) = lower(model(graph([conv(x, y, 1)], [x], [y])), U55_128).npu_ops
    assert npu.op_type == "FullyConnected" and npu.block_type == BlockType.VECTOR_PRODUCT
    assert npu.name == "y_fc"


def test_float_model_goes_to_cpu_with_reason() -> None:
    a, b = fm("a", (1, 4), DataType.FLOAT32, None), fm("b", (1, 4), DataType.FLOAT32, None)
    lg = lower(model(graph([op("ADD", [a, a], [b])], [a], [b])), U55_128)
    (cpu,) = lg.ops
    assert isinstance(cpu, CpuOp) and "Tensors must be of type" in cpu.reason


def test_mean_is_depthwise_then_mul() -> None:
    x, y = fm("x", (1, 7, 7, 32)), fm("y", (1, 32))
    axes = const("axes", [1, 2], DataType.INT32, None)
    ops = lower(model(graph([op("MEAN", [x, axes], [y], keep_dims=False)], [x], [y])), U55_128).npu_ops
    assert [o.op_type for o in ops] == ["DepthwiseConv2DBias", "Mul"]
    assert ops[0].kernel.height == 7 and ops[0].kernel.width == 7 and ops[1].ofm is y


def test_large_mean_is_split_and_summed() -> None:
    x, y = fm("x", (1, 190, 64, 1)), fm("y", (1, 1, 1, 1))
    axes = const("axes", [1, 2], DataType.INT32, None)
    ops = lower(model(graph([op("MEAN", [x, axes], [y], keep_dims=True)], [x], [y])), U55_128).npu_ops
    assert [o.op_type for o in ops] == ["DepthwiseConv2DBias"] * 3 + ["Add", "Add", "Mul"]
    assert [o.kernel.height for o in ops[:3]] == [64, 64, 62]


def test_int8_softmax_is_31_ops() -> None:
    x, y = fm("x", (1, 10)), fm("y", (1, 10))
    ops = lower(model(graph([op("SOFTMAX", [x], [y], beta=1.0)], [x], [y])), U55_128).npu_ops
    assert len(ops) == 31 == len(softmax_steps(DataType.INT8))
    assert ops[0].op_type == "MaxPool" and ops[3].block_type == BlockType.REDUCE_SUM
    assert ops[-1].ofm is y and ops[1].activation is Activation.LUT


def test_pad_before_maxpool_is_five_copies() -> None:
    x, p, y = fm("x", (1, 8, 8, 4)), fm("p", (1, 10, 10, 4)), fm("y", (1, 4, 4, 4))
    pads = const("pads", [[0, 0], [1, 1], [1, 1], [0, 0]], DataType.INT32, None)
    g = graph([op("PAD", [x, pads], [p]), op("MAX_POOL_2D", [p], [y], padding="VALID", filter_height=3,
               filter_width=3, stride_h=2, stride_w=2, fused_activation_function="NONE")], [x], [y])
    ops = lower(model(g), U55_128).npu_ops
    assert [o.name for o in ops] == ["p_main", "p_top", "p_bottom", "p_left", "p_right", "y"]
    assert ops[0].ofm_write_offset == Shape4D(0, 1, 1, 0) and ops[4].ofm_write_offset == Shape4D(0, 0, 9, 0)
    assert [o.ofm_write_shape for o in ops[:5]] == [Shape4D(1, 8, 8, 4), Shape4D(1, 1, 8, 4), Shape4D(1, 1, 8, 4),
                                                    Shape4D(1, 10, 1, 4), Shape4D(1, 10, 1, 4)]
    assert ops[5].pool is PoolKind.MAX and ops[5].ofm_write_shape is None


def test_concat_writes_at_offsets() -> None:
    a, b, c = fm("a", (1, 4, 4, 3)), fm("b", (1, 4, 4, 5)), fm("c", (1, 4, 4, 8))
    ops = lower(model(graph([op("CONCATENATION", [a, b], [c], axis=3)], [a, b], [c])), U55_128).npu_ops
    assert [o.ofm_write_offset for o in ops] == [Shape4D(0, 0, 0, 0), Shape4D(0, 0, 0, 3)]


def test_ds_cnn_counts_and_removed() -> None:
    lg = lower(read_tflite(DATA / "ds_cnn_kws.tflite"), U55_128)
    assert (len(lg.npu_ops), len(lg.cpu_ops), lg.tflite_op_count) == (42, 0, 16)
    # the Keras flatten's shape arithmetic is folded, and the RESHAPE it fed is then a no-op
    reasons = [reason.split(" ")[0] for _, reason in lg.removed]
    assert reasons[:4] == ["SHAPE", "STRIDED_SLICE", "PACK", "RESHAPE"]
    first = lg.npu_ops[0]
    assert isinstance(first, NpuOp) and first.name == "functional_1/re_lu_1/Relu;functional_1/conv2d_1/convolution"
    dw = lg.npu_ops[1]
    assert dw.weights is not None and dw.weights.shape[0] == 1 and np.issubdtype(dw.weights.dtype, np.integer)


def test_shipped_model_counts() -> None:
    expected = {"autoencoder_ad": (10, 0), "resnet8_cifar": (45, 0), "mobilenet_v1_025_96": (61, 0)}
    for name, counts in expected.items():
        lg = lower(read_tflite(DATA / f"{name}.tflite"), U55_128)
        assert (len(lg.npu_ops), len(lg.cpu_ops)) == counts, name


def test_mean_over_unit_axes_is_removed() -> None:
    x, m, y = fm("x", (1, 1, 1, 8)), fm("m", (1, 8)), fm("y", (1, 8))
    axes = const("axes", [1, 2], DataType.INT32, None)
    g = graph([op("MEAN", [x, axes], [m], keep_dims=False), op("ADD", [m, m], [y])], [x], [y])
    lg = lower(model(g), U55_128)
    assert [o.op_type for o in lg.npu_ops] == ["Add"] and lg.npu_ops[0].ifm is x
    assert lg.removed and "MEAN" in lg.removed[0][1]


def test_unfused_hard_swish_is_lut_add_on_u55_64() -> None:
    x, y, z = fm("x", (1, 8, 8, 4)), fm("y", (1, 8, 8, 8)), fm("z", (1, 8, 8, 8))
    g = graph([conv(x, y), op("HARD_SWISH", [y], [z], 1)], [x], [z])
    ops = lower(model(g), accelerator("ethos-u55-64")).npu_ops
    assert [o.op_type for o in ops] == ["Conv2DBias", "Add"]
    assert ops[1].activation is Activation.LUT and ops[1].name == "z_lut_hardswish"
    fused = lower(model(g), U55_128).npu_ops
    assert len(fused) == 1 and fused[0].activation is Activation.LUT and fused[0].name == "y"
