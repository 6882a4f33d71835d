"""End-to-end lowering of tiny graphs and of the shipped models."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from npuplan.hw.accelerator import accelerator
from npuplan.hw.block_config import choose_block_config
from npuplan.io.tflite import read_tflite
from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import Activation, BlockType, CpuOp, NpuOp, Padding, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering import lower
from npuplan.lowering.softmax import softmax_steps

from ._build import WQ, conv, const, fm, graph, model, op

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


def test_int8_softmax_is_28_ops() -> None:
    x, y = fm("x", (1, 10)), fm("y", (1, 10))
    ops = lower(model(graph([op("SOFTMAX", [x], [y], beta=1.0)], [x], [y])), U55_128).npu_ops
    assert len(ops) == 28 == len(softmax_steps(DataType.INT8))
    assert ops[0].op_type == "MaxPool" and ops[3].block_type == BlockType.REDUCE_SUM
    assert ops[-1].ofm is y and ops[1].activation is Activation.LUT
    assert ops[1].lut is not None and ops[1].lut.dtype == np.int32 and ops[1].lut.shape == (256,)
    # the final scaling multiplies the exponentials (step 1), as Vela's does; the SHR'd copy of
    # them (step 2) only feeds the sum; the constant operands stay first (no reversal)
    assert ops[25].ifm is ops[1].ofm and ops[3].ifm is ops[2].ofm and ops[25].ifm2 is ops[24].ofm
    assert ops[5].ifm.is_constant and not ops[5].reversed_operands and ops[27].ifm2 is ops[5].ofm


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


def test_pad_of_the_depth_adds_near_and_far_fills() -> None:
    """Padding the depth (as Vela legacy runs it): the main copy at the near depth, the height and
    width fills over the input's depth, then two fills of the whole map's near and far channels."""
    x, p = fm("x", (1, 8, 8, 8)), fm("p", (1, 9, 8, 13))
    pads = const("pads", [[0, 0], [1, 0], [0, 0], [2, 3]], DataType.INT32, None)
    ops = lower(model(graph([op("PAD", [x, pads], [p])], [x], [p])), U55_128).npu_ops
    assert [o.name for o in ops] == ["p_main", "p_top", "p_near", "p_far"]
    assert [o.ofm_write_offset for o in ops] == [Shape4D(0, 1, 0, 2), Shape4D(0, 0, 0, 2), Shape4D(0, 0, 0, 0),
                                                 Shape4D(0, 0, 0, 10)]
    assert [o.ofm_write_shape for o in ops] == [Shape4D(1, 8, 8, 8), Shape4D(1, 1, 8, 8), Shape4D(1, 9, 8, 2),
                                                Shape4D(1, 9, 8, 3)]


def test_concat_writes_at_offsets() -> None:
    a, b, c = fm("a", (1, 4, 4, 3)), fm("b", (1, 4, 4, 5)), fm("c", (1, 4, 4, 8))
    ops = lower(model(graph([op("CONCATENATION", [a, b], [c], axis=3)], [a, b], [c])), U55_128).npu_ops
    assert [o.ofm_write_offset for o in ops] == [Shape4D(0, 0, 0, 0), Shape4D(0, 0, 0, 3)]


def test_ds_cnn_counts_and_removed() -> None:
    lg = lower(read_tflite(DATA / "ds_cnn_kws.tflite"), U55_128)
    # the flatten's shape arithmetic (SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE) folds away
    assert (len(lg.npu_ops), len(lg.cpu_ops), lg.tflite_op_count) == (39, 0, 16)  # SOFTMAX: 28 ops
    reasons = [reason for _, reason in lg.removed]
    assert any("SHAPE" in r for r in reasons)
    assert any(r.startswith("STRIDED_SLICE of constants") for r in reasons)
    assert any(r.startswith("PACK of constants") for r in reasons)
    first = lg.npu_ops[0]
    assert isinstance(first, NpuOp) and first.name == "functional_1/re_lu_1/Relu;functional_1/conv2d_1/convolution"
    dw = lg.npu_ops[1]
    assert dw.weights is not None and dw.weights.shape[0] == 1 and np.issubdtype(dw.weights.dtype, np.integer)


def test_shipped_model_counts() -> None:
    expected = {"autoencoder_ad": (10, 0), "resnet8_cifar": (42, 0), "mobilenet_v1_025_96": (58, 0)}  # SOFTMAX: 28 ops
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


def test_int16_tanh_and_sigmoid_are_the_hardware_functions_in_their_own_pool() -> None:
    """int16 TANH/LOGISTIC: the NPU's own functions (no table to load), each in a 1x1 average pool
    named as Vela names it and never fused into the producer; int8 ones are fused LUTs."""
    from npuplan.schedule.pricing.cost_adapter import lut_access

    for kind, activation in (("TANH", Activation.TANH), ("LOGISTIC", Activation.SIGMOID)):
        x, y, z = fm("x", (1, 8, 8, 4), DataType.INT16), fm("y", (1, 8, 8, 8), DataType.INT16), \
            fm("z", (1, 8, 8, 8), DataType.INT16)
        ops = lower(model(graph([conv(x, y), op(kind, [y], [z], 1)], [x], [z])), U55_128).npu_ops
        assert [(o.op_type, o.name, o.activation) for o in ops] == [
            ("Conv2DBias", "y", Activation.NONE), ("AvgPool", "z_avgpool", activation)]
        assert lut_access(ops[1], None) is None  # type: ignore[arg-type]
        x8, y8, z8 = fm("x", (1, 8, 8, 4)), fm("y", (1, 8, 8, 8)), fm("z", (1, 8, 8, 8))
        (fused,) = lower(model(graph([conv(x8, y8), op(kind, [y8], [z8], 1)], [x8], [z8])), U55_128).npu_ops
        assert fused.activation is Activation.LUT


def _unary(kind: str, dtype: DataType = DataType.INT8, **options: object):
    x, y = fm("x", (1, 6, 6, 8), dtype), fm("y", (1, 6, 6, 8), dtype)
    return lower(model(graph([op(kind, [x], [y], 0, **options)], [x], [y])), U55_128)


def test_table_lookup_unary_ops_become_add_with_lut() -> None:
    for kind, suffix in (("LEAKY_RELU", "lrelu"), ("EXP", "exp"), ("RSQRT", "rsqrt"), ("GELU", "gelu"), ("LOG", "log")):
        lg = _unary(kind, alpha=0.1)
        (npu,) = lg.npu_ops
        assert (npu.op_type, npu.block_type, npu.activation) == ("Add", BlockType.ELEMENTWISE, Activation.LUT)
        assert npu.name == f"y_lut_{suffix}" and npu.ifm2_shape == Shape4D() and not lg.cpu_ops


def test_table_lookup_types_outside_their_tables_stay_on_cpu() -> None:
    (cpu,) = _unary("RSQRT", DataType.INT16).ops
    assert isinstance(cpu, CpuOp) and "IFM must be int8 for RSQRT" in cpu.reason
    ops = _unary("LEAKY_RELU", DataType.INT16, alpha=0.1).npu_ops  # 16 bits: elementwise ops, as Vela
    assert [o.op_type for o in ops] == ["Mul", "Maximum"]
    ops = _unary("LEAKY_RELU", DataType.INT16, alpha=1.5).npu_ops
    assert [o.op_type for o in ops] == ["Minimum", "Mul", "AvgPool", "Add"]
    assert isinstance(_unary("EXP", DataType.INT16).ops[0], NpuOp)


def test_leaky_relu_fuses_into_the_conv_before_it_on_u55_128() -> None:
    x, y, z = fm("x", (1, 8, 8, 4)), fm("y", (1, 8, 8, 8)), fm("z", (1, 8, 8, 8))
    lg = lower(model(graph([conv(x, y), op("LEAKY_RELU", [y], [z], 1, alpha=0.1)], [x], [z])), U55_128)
    (npu,) = lg.npu_ops
    assert npu.op_type == "Conv2DBias" and npu.activation is Activation.LUT and npu.ofm is z
    (small,) = [o for o in lower(model(graph([conv(x, y), op("LEAKY_RELU", [y], [z], 1, alpha=0.1)], [x], [z])),
                                 accelerator("ethos-u55-64")).npu_ops if o.op_type == "Add"]
    assert small.name == "z_lut_lrelu"


def test_concatenation_copies_are_named_as_vela_names_them() -> None:
    a, b, y = fm("a", (1, 4, 4, 8)), fm("b", (1, 4, 4, 8)), fm("y", (1, 4, 4, 16))
    ops = lower(model(graph([op("CONCATENATION", [a, b], [y], 0, axis=3)], [a, b], [y])), U55_128).npu_ops
    assert [o.name for o in ops] == ["y0_avgpool", "y1_avgpool"]
    assert [o.ofm_write_shape for o in ops] == [Shape4D(1, 4, 4, 8)] * 2


def test_requantize_is_a_rescaling_copy_and_float_quantize_stays_on_cpu() -> None:
    x, y = fm("x", (1, 4, 4, 8)), fm("y", (1, 4, 4, 8), DataType.INT16)
    (npu,) = lower(model(graph([op("QUANTIZE", [x], [y], 0)], [x], [y])), U55_128).npu_ops
    assert (npu.op_type, npu.ofm) == ("AvgPool", y)
    f = fm("f", (1, 4, 4, 8), DataType.FLOAT32, None)
    (cpu,) = lower(model(graph([op("QUANTIZE", [f], [x], 0)], [f], [x])), U55_128).ops
    assert isinstance(cpu, CpuOp)


def test_a_reshape_before_a_mean_keeps_the_rank_the_mean_counts_axes_in() -> None:
    """MEAN over axis 1 of a 3-D tensor must not be rewired to the 4-D tensor before the reshape
    (its axis 1 there has size 1: the mean would vanish as a no-op)."""
    x, y, r, m = fm("x", (1, 1, 32, 8)), fm("y", (1, 1, 32, 8)), fm("r", (1, 32, 8)), fm("m", (1, 8))
    ops = [conv(x, y), op("RESHAPE", [y, const("s", [1, 32, 8], DataType.INT32, None)], [r], 1),
           op("MEAN", [r, const("axes", [1], DataType.INT32, None)], [m], 2, keep_dims=False)]
    lg = lower(model(graph(ops, [x], [m])), U55_128)
    assert [o.op_type for o in lg.npu_ops] == ["Conv2DBias", "DepthwiseConv2DBias", "Mul"]
    assert lg.npu_ops[0].ofm is r and not lg.cpu_ops


def test_max_of_x_and_x_times_alpha_is_a_leaky_relu() -> None:
    x, y, p, z = fm("x", (1, 8, 8, 4)), fm("y", (1, 8, 8, 8)), fm("p", (1, 8, 8, 8)), fm("z", (1, 8, 8, 8))
    alpha = const("alpha", 30, DataType.INT8, Quantization((0.01,), (0,)))
    ops = [conv(x, y), op("MUL", [y, alpha], [p], 1, fused_activation_function="NONE"),
           op("MAXIMUM", [y, p], [z], 2)]
    lg = lower(model(graph(ops, [x], [z])), U55_128)
    (npu,) = lg.npu_ops
    assert npu.activation is Activation.LUT and npu.ofm is z
    assert any("one LEAKY_RELU (alpha 0.3)" in reason for _, reason in lg.removed)


def test_concat_writes_let_producers_write_their_slices_in_place() -> None:
    x, a, b, y = fm("x", (1, 8, 8, 4)), fm("a", (1, 8, 8, 8)), fm("b", (1, 8, 8, 8)), fm("y", (1, 8, 8, 16))
    ops = [conv(x, a, index=0), conv(x, b, index=1), op("CONCATENATION", [a, b], [y], 2, axis=3)]
    m = model(graph(ops, [x], [y]))
    # each copy runs just after its input's branch, as Vela packs its passes
    assert [o.op_type for o in lower(m, U55_128).npu_ops] == ["Conv2DBias", "AvgPool", "Conv2DBias", "AvgPool"]
    first, second = sorted(lower(m, U55_128, concat_writes=True).npu_ops, key=lambda o: o.ofm_write_offset.c)
    assert first.ofm is y and second.ofm is y
    assert first.ofm_write_offset == Shape4D(0, 0, 0, 0) and second.ofm_write_offset == Shape4D(0, 0, 0, 8)
    assert second.ofm_write_shape == second.ofm_shape == Shape4D(1, 8, 8, 8)


def test_axes_out_of_range_stay_on_cpu_with_a_reason() -> None:
    """Found by the structure-aware fuzzer: a MEAN of a scalar took an axis modulo rank 0."""
    s, y = const("s", 5), fm("y", (1,))
    (cpu,) = lower(model(graph([op("MEAN", [s, const("axes", [1], DataType.INT32, None)], [y], 0)], [], [y])),
                   U55_128).ops
    assert isinstance(cpu, CpuOp) and "Axis indices must be in the range" in cpu.reason
    x, a, b = fm("x", (1, 4, 4, 8)), fm("a", (1, 4, 4, 4)), fm("b", (1, 4, 4, 3))
    split = op("SPLIT", [const("axis", 3, DataType.INT32, None), x], [a, b], 0, num_splits=2)
    (cpu,) = lower(model(graph([split], [x], [a, b])), U55_128).ops
    assert isinstance(cpu, CpuOp) and "add up to the input" in cpu.reason


def test_dilations_above_2_spread_the_kernel_as_the_hardware_runs_it() -> None:
    x, y = fm("x", (1, 16, 16, 4)), fm("y", (1, 16, 16, 8))
    for rate, size, hardware in ((3, 7, 1), (4, 5, 2), (2, 3, 2)):
        c = conv(x, y)
        c = type(c)(c.type, c.inputs, c.outputs, {**dict(c.options), "dilation_h_factor": rate,
                                                 "dilation_w_factor": rate}, c.index)
        (npu,) = lower(model(graph([c], [x], [y])), U55_128).npu_ops
        k = npu.kernel
        assert (k.height, k.width, k.dilation_y, k.dilation_x) == (size, size, hardware, hardware)
        assert k.dilated_height == 2 * rate + 1 and npu.weights is not None and npu.weights.shape[1] == size
        assert int(np.count_nonzero(npu.weights)) == 8 * 9 * 4  # the 3x3 taps, zeros in between


def test_sum_is_a_mean_and_reduce_max_over_the_plane_is_a_max_pool() -> None:
    x, y = fm("x", (1, 6, 5, 8)), fm("y", (1, 1, 1, 8))
    axes = const("axes", [1, 2], DataType.INT32, None)
    ops = lower(model(graph([op("SUM", [x, axes], [y], 0, keep_dims=True)], [x], [y])), U55_128).npu_ops
    assert [o.op_type for o in ops] == ["DepthwiseConv2DBias", "Mul"]
    (pool,) = lower(model(graph([op("REDUCE_MAX", [x, axes], [y], 0, keep_dims=True)], [x], [y])), U55_128).npu_ops
    assert (pool.op_type, pool.kernel.height, pool.kernel.width) == ("MaxPool", 6, 5)


def test_sum_over_depth_is_one_convolution_of_ones_as_mean_is() -> None:
    """An 8-bit SUM over depth multiplies whole IFM blocks of channels by ones in a 1x1
    convolution (one output channel), as MEAN over depth does, not a 1 x C depthwise kernel over a
    map of depth 1 that sums one pixel a step."""
    x, y = fm("x", (1, 16, 16, 8)), fm("y", (1, 16, 16, 1))
    axis = const("axis", [3], DataType.INT32, None)
    for kind in ("SUM", "MEAN"):
        ops = lower(model(graph([op(kind, [x, axis], [y], 0, keep_dims=True)], [x], [y])), U55_128).npu_ops
        assert [o.op_type for o in ops] == ["Conv2DBias", "Mul"]
        assert ops[0].kernel.elements == 1 and ops[0].ofm_shape == Shape4D(1, 16, 16, 1)


def test_in_vela_forms_a_sum_over_depth_is_one_convolution_into_its_output() -> None:
    """Vela's default core runs a SUM as one convolution whose output stage scales the sums: the
    planner prices that form beside the int32 sums and their Mul; a MEAN keeps its division."""
    from npuplan.lowering.lower import may_take_vela_forms

    x, y = fm("x", (1, 16, 16, 8)), fm("y", (1, 16, 16, 1))
    axis = const("axis", [3], DataType.INT32, None)
    for kind, types in (("SUM", ["Conv2DBias"]), ("MEAN", ["Conv2DBias", "Mul"])):
        g = model(graph([op(kind, [x, axis], [y], 0, keep_dims=True, fused_activation_function="RELU")], [x], [y]))
        assert may_take_vela_forms(lower(g, U55_128), U55_128) == (kind == "SUM")
        ops = lower(g, U55_128, vela_forms=True).npu_ops
        assert [o.op_type for o in ops] == types and ops[-1].ofm is y
        assert ops[0].activation is (Activation.RELU if kind == "SUM" else Activation.NONE)


def test_reduce_max_over_depth_or_one_axis_is_a_max_pool_over_a_view() -> None:
    """Over depth, the map's NHWC bytes are seen with the depth along the width (a 1 x C kernel);
    over one axis of a 3-D tensor (GlobalMaxPooling1D), a 1 x L kernel. Height and depth without
    width are not contiguous and stay on the CPU."""
    x = fm("x", (1, 6, 5, 8))
    cases = [((1, 6, 5, 8), [3], (1, 6, 5, 1), Shape4D(1, 30, 8, 1), (1, 8), Shape4D(1, 30, 1, 1)),
             ((1, 300, 24), [1], (1, 24), Shape4D(1, 1, 300, 24), (1, 300), Shape4D(1, 1, 1, 24))]
    for shape, axes, out, view, kernel, out_view in cases:
        x, y = fm("x", shape), fm("y", out)
        axis = const("axis", axes, DataType.INT32, None)
        (pool,) = lower(model(graph([op("REDUCE_MAX", [x, axis], [y], 0)], [x], [y])), U55_128).npu_ops
        assert (pool.op_type, pool.ifm_shape, (pool.kernel.height, pool.kernel.width)) == ("MaxPool", view, kernel)
        assert pool.ofm_shape == out_view
    x, z = fm("x", (1, 6, 5, 8)), fm("z", (1, 1, 5, 1))
    axis = const("axis", [1, 3], DataType.INT32, None)
    (cpu,) = lower(model(graph([op("REDUCE_MAX", [x, axis], [z], 0)], [x], [z])), U55_128).ops
    assert isinstance(cpu, CpuOp) and "contiguous" in cpu.reason


def test_reduce_max_over_width_and_depth_pools_the_width_at_full_depth_first() -> None:
    """Over width and depth (and height), a pool over the width at the map's depth (one step a
    micro-block of channels), then one over the depth left, laid along the width; the first keeps
    the IFM's quantization, so only the second rescales."""
    for axes, rows in (([2, 3], 6), ([1, 2, 3], 1)):
        x, y = fm("x", (1, 6, 5, 8)), fm("y", (1, rows, 1, 1))
        axis = const("axis", axes, DataType.INT32, None)
        width, depth = lower(model(graph([op("REDUCE_MAX", [x, axis], [y], 0)], [x], [y])), U55_128).npu_ops
        assert (width.ifm, width.ifm_shape, width.kernel.height, width.kernel.width) == (x, Shape4D(1, 6, 5, 8), 6 // rows, 5)
        assert width.ofm_shape == Shape4D(1, rows, 1, 8) and width.ofm.quant == x.quant
        assert (depth.ifm, depth.ifm_shape, depth.kernel.width, depth.ofm) == (width.ofm, Shape4D(1, rows, 8, 1), 8, y)
        assert depth.ofm_shape == Shape4D(1, rows, 1, 1)
    x, z = fm("x", (1, 6, 5, 8)), fm("z", (1, 1, 5, 1))
    axis = const("axis", [1, 3], DataType.INT32, None)
    (cpu,) = lower(model(graph([op("REDUCE_MAX", [x, axis], [z], 0)], [x], [z])), U55_128).ops
    assert isinstance(cpu, CpuOp) and "contiguous" in cpu.reason


def test_reduce_min_is_a_max_pool_between_two_integer_inversions() -> None:
    """min(x) = c - max(c - x) (as Vela's default core runs it): a Sub from the scalar c, REDUCE_MAX's
    pool over the same view, a Sub from c into the OFM; c = -1 - zero point, so q -> -1 - q."""
    x, y = fm("x", (1, 6, 5, 8)), fm("y", (1, 1, 1, 8))
    axes = const("axes", [1, 2], DataType.INT32, None)
    invert, pool, back = lower(model(graph([op("REDUCE_MIN", [x, axes], [y], 0, keep_dims=True)], [x], [y])),
                               U55_128).npu_ops
    assert [o.op_type for o in (invert, pool, back)] == ["Sub", "MaxPool", "Sub"]
    # the feature map is read as the IFM, the scalar as IFM2 (the hardware's reversed operands)
    assert invert.ifm is x and invert.ifm2 is not None and invert.ifm2.data is not None and int(invert.ifm2.data) == -1 - (-3)
    assert (pool.ifm, pool.kernel.height, pool.kernel.width) == (invert.ofm, 6, 5)
    assert back.ifm is pool.ofm and back.ifm2 is invert.ifm2 and back.ofm is y
    requantized = fm("r", (1, 1, 1, 8), quant=Quantization(scale=(0.1,), zero_point=(0,)))
    (cpu,) = lower(model(graph([op("REDUCE_MIN", [x, axes], [requantized], 0)], [x], [requantized])), U55_128).ops
    assert isinstance(cpu, CpuOp) and "same type and quantization" in cpu.reason


def test_conv_weights_of_the_wrong_rank_or_channels_stay_on_cpu() -> None:
    """Found by bench/fuzz.py (seed 4242): 3-D conv weights reached the converter."""
    x, y = fm("x", (1, 8, 8, 4)), fm("y", (1, 8, 8, 8))
    c = conv(x, y)
    flat = const("w3", np.ones((8, 3, 12)), DataType.INT8, WQ)
    (cpu,) = lower(model(graph([type(c)(c.type, (x, flat, c.inputs[2]), c.outputs, c.options, 0)], [x], [y])),
                   U55_128).ops
    assert isinstance(cpu, CpuOp) and "must be 4D" in cpu.reason
    wide = const("w9", np.ones((9, 3, 3, 4)), DataType.INT8, WQ)
    (cpu,) = lower(model(graph([type(c)(c.type, (x, wide, c.inputs[2]), c.outputs, c.options, 0)], [x], [y])),
                   U55_128).ops
    assert isinstance(cpu, CpuOp) and "output channels" in cpu.reason


def test_pool_whose_one_window_is_the_whole_ifm_strides_by_one() -> None:
    """A 42x9 average pool striding 42x9 over a 42x9 IFM (Keras' pool of a whole map): with its
    file stride no OFM block's IFM block fits the U65-256's shared buffer; stride 1 fits."""
    x, y = fm("x", (1, 42, 9, 20)), fm("y", (1, 1, 1, 20))
    pool = op("AVERAGE_POOL_2D", [x], [y], 0, padding="VALID", stride_h=42, stride_w=9, filter_height=42,
              filter_width=9, fused_activation_function="NONE")
    u65 = accelerator("ethos-u65-256")
    (npu,) = lower(model(graph([pool], [x], [y])), u65).npu_ops
    assert (npu.kernel.height, npu.kernel.width, npu.kernel.stride_y, npu.kernel.stride_x) == (42, 9, 1, 1)
    assert npu.kernel.padding == Padding(0, 0, 0, 0)
    assert choose_block_config(npu, u65).ofm_block.height == 2
    same = op("AVERAGE_POOL_2D", [x], [y], 0, padding="SAME", stride_h=42, stride_w=9, filter_height=42,
              filter_width=9, fused_activation_function="NONE")
    (npu,) = lower(model(graph([same], [x], [y])), u65).npu_ops
    assert npu.kernel.stride_y == 1 and npu.kernel.padding == Padding(0, 0, 0, 0)  # SAME pads nothing here
    half = op("AVERAGE_POOL_2D", [fm("x2", (1, 84, 9, 20))], [fm("y2", (1, 2, 1, 20))], 0, padding="VALID",
              stride_h=42, stride_w=9, filter_height=42, filter_width=9, fused_activation_function="NONE")
    (npu,) = lower(model(graph([half], list(half.inputs), list(half.outputs))), U55_128).npu_ops
    assert (npu.kernel.stride_y, npu.kernel.stride_x) == (42, 9)  # two windows: the stride moves them


def test_a_deployable_lut_fuses_into_the_conv_with_its_table_and_input_quantization() -> None:
    """As Vela fuses it: the conv's output stage writes the activation's input quantization
    (``lut_input_quant``) and the table maps that to the activation's output; on the 64-MAC
    Ethos-U55 (no spare SHRAM banks) it stays an ADD of zero with the table."""
    x, y = fm("x", (1, 8, 8, 4)), fm("y", (1, 8, 8, 8))
    z = Tensor("z", (1, 8, 8, 8), DataType.INT8, Quantization((1 / 128,), (-5,)))
    g = graph([conv(x, y), op("HARD_SWISH", [y], [z], 1)], [x], [z])
    (npu,) = lower(model(g), U55_128, deployable=True).npu_ops
    assert npu.op_type == "Conv2DBias" and npu.activation is Activation.LUT and npu.ofm is z
    assert npu.lut is not None and npu.lut_input_quant == y.quant and npu.output_stage_quant == y.quant
    standalone = lower(model(g), accelerator("ethos-u55-64"), deployable=True).npu_ops
    assert [o.op_type for o in standalone] == ["Conv2DBias", "Add"]
    assert standalone[1].lut_input_quant is None and standalone[1].output_stage_quant == y.quant
    assert np.array_equal(standalone[1].lut, npu.lut)


def test_a_deployable_lut_after_a_pool_stays_its_own_operation() -> None:
    """The emitter fuses tables into convolutions and binary elementwise ops only."""
    x, y, z = fm("x", (1, 8, 8, 8)), fm("y", (1, 4, 4, 8)), fm("z", (1, 4, 4, 8))
    pool = op("MAX_POOL_2D", [x], [y], 0, padding="VALID", stride_w=2, stride_h=2, filter_width=2,
              filter_height=2, fused_activation_function="NONE")
    ops = lower(model(graph([pool, op("HARD_SWISH", [y], [z], 1)], [x], [z])), U55_128, deployable=True).npu_ops
    assert [o.op_type for o in ops] == ["MaxPool", "Add"] and ops[1].lut is not None


def test_a_whole_map_mean_sums_rows_in_parallel_when_asked() -> None:
    """MEAN over 16x16: one depthwise op summing 16 rows of 16 into int32, four Adds of halves read
    at row offsets, the Mul; without ``parallel_means`` one 16x16 kernel into one position."""
    x, y = fm("x", (1, 16, 16, 8)), fm("y", (1, 1, 1, 8))
    axes = const("axes", [1, 2], DataType.INT32, None)
    m = model(graph([op("MEAN", [x, axes], [y], keep_dims=True)], [x], [y]))
    assert [o.op_type for o in lower(m, U55_128).npu_ops] == ["DepthwiseConv2DBias", "Mul"]
    ops = lower(m, U55_128, parallel_means=True).npu_ops
    assert [o.op_type for o in ops] == ["DepthwiseConv2DBias", "Add", "Add", "Add", "Add", "Mul"]
    assert ops[0].ifm_shape == Shape4D(1, 16, 16, 8) and ops[0].kernel.width == 16
    assert ops[0].ofm_shape == Shape4D(1, 16, 1, 8) and ops[0].ofm.dtype is DataType.INT32
    assert [o.ifm2_read_offset.h for o in ops[1:5]] == [8, 4, 2, 1]
    assert ops[5].ifm is ops[4].ofm and ops[5].ifm_shape == Shape4D(1, 1, 1, 8)
