from __future__ import annotations

import numpy as np

from npuplan.ir.types import DataType
from npuplan.lowering.support import unsupported_reason

from ._build import conv, const, fm, op


def test_int8_conv_is_supported() -> None:
    assert unsupported_reason(conv(fm("a", (1, 8, 8, 4)), fm("b", (1, 8, 8, 8)))) is None


def test_stride_4_is_rejected_with_reason() -> None:
    reason = unsupported_reason(conv(fm("a", (1, 16, 16, 4)), fm("b", (1, 4, 4, 8)), stride=4))
    assert reason is not None and "Stride" in reason and "4x4" in reason


def test_float_tensors_are_rejected() -> None:
    a = fm("a", (1, 8, 8, 4), DataType.FLOAT32, None)
    reason = unsupported_reason(op("ADD", [a, a], [fm("b", (1, 8, 8, 4), DataType.FLOAT32, None)]))
    assert reason is not None and "Tensors must be of type" in reason


def test_batch_above_one_is_rejected() -> None:
    reason = unsupported_reason(conv(fm("a", (2, 8, 8, 4)), fm("b", (2, 8, 8, 8))))
    assert reason == "IFM Tensor batch size must be 1 (it is 2)"


def test_dynamic_scalar_and_non_constant_shape() -> None:
    scalar = fm("s", ())
    assert "dynamic" in str(unsupported_reason(op("PACK", [scalar], [fm("p", (2,))])))
    shape = fm("shape", (2,), DataType.INT32)
    reason = unsupported_reason(op("RESHAPE", [fm("a", (1, 1, 1, 64)), shape], [fm("b", (1, 64))]))
    assert reason is not None and reason.startswith("Shape must be constant")


def test_unknown_op_type() -> None:
    assert unsupported_reason(op("GATHER", [fm("a", (4,))], [fm("b", (4,))])) == "GATHER is not supported on the NPU"


def test_kernel_too_tall() -> None:
    a, b = fm("a", (1, 100, 8, 1)), fm("b", (1, 30, 8, 1))
    w = const("w", np.ones((1, 71, 1, 1)))
    reason = unsupported_reason(op("CONV_2D", [a, w, None], [b], padding="VALID", stride_h=1, stride_w=1))
    assert reason is not None and "Dilated kernel height" in reason


def test_a_feature_map_of_scale_0_keeps_its_ops_on_the_cpu() -> None:
    """TensorFlow quantizes an all-zero tensor (a GRU's initial state, a FILL of zeros) with scale 0:
    the ops touching it stay on the CPU with the reason, instead of the model being refused."""
    from npuplan.hw.accelerator import accelerator
    from npuplan.ir.lowered import CpuOp
    from npuplan.ir.types import Quantization
    from npuplan.lowering import lower

    from ._build import graph, model

    zero_scale = Quantization(scale=(0.0,), zero_point=(0,))
    x, z, y = fm("x", (1, 4, 4, 8)), fm("z", (1, 4, 4, 8), quant=zero_scale), fm("y", (1, 4, 4, 8))
    mul = op("MUL", [x, z], [y], 0, fused_activation_function="NONE")
    assert unsupported_reason(mul) == "Quantization scales must not be 0: z"
    (cpu,) = lower(model(graph([mul], [x, z], [y])), accelerator("ethos-u55-128")).ops
    assert isinstance(cpu, CpuOp) and "scales must not be 0" in cpu.reason
    assert unsupported_reason(op("MUL", [x, x], [y], 0, fused_activation_function="NONE")) is None


def test_mean_over_depth_reads_the_depth_laid_along_the_width() -> None:
    """Over depth alone a 16-bit 8x8x16 map is read as 64 rows of 16 (its NHWC bytes), so every
    pixel is summed (op_layernorm_map; moving depth into a height of 1 summed 8 of the 64); an
    8-bit one is summed by a 1x1 convolution of ones into one channel, every pixel at once; over
    height and depth without width no window is contiguous."""
    from npuplan.ir.lowered import BlockType
    from npuplan.ir.shape import Shape4D
    from npuplan.lowering.mean import convert_mean

    axes = const("axes", [3], DataType.INT32, None)
    mean16 = op("MEAN", [fm("a", (1, 8, 8, 16), DataType.INT16), axes], [fm("b", (1, 8, 8, 1), DataType.INT16)],
                keep_dims=True)
    assert unsupported_reason(mean16) is None
    first = convert_mean(mean16)[0]
    assert first.ifm_shape == Shape4D(1, 64, 16, 1) and (first.kernel.height, first.kernel.width) == (1, 16)
    assert first.ofm_shape == Shape4D(1, 64, 1, 1)
    mean = op("MEAN", [fm("a", (1, 8, 8, 16)), axes], [fm("b", (1, 8, 8, 1))], keep_dims=True)
    first, scaled = convert_mean(mean)
    assert first.block_type is BlockType.CONV and first.ifm_shape == Shape4D(1, 8, 8, 16)
    assert first.weights is not None and first.weights.shape == (1, 1, 1, 16) and (first.weights == 1).all()
    assert first.ofm_shape == Shape4D(1, 8, 8, 1) and first.ofm.dtype == DataType.INT32
    assert scaled.ifm is first.ofm and scaled.elementwise == "MUL"
    both = const("both", [1, 3], DataType.INT32, None)
    reason = unsupported_reason(op("MEAN", [fm("a", (1, 8, 8, 16)), both], [fm("b", (1, 1, 8, 1))], keep_dims=True))
    assert reason is not None and "width" in reason
    assert unsupported_reason(op("MEAN", [fm("a", (1, 8, 1, 16)), both], [fm("b", (1, 1, 1, 1))],
                                 keep_dims=True)) is None



def test_a_pad_whose_output_shape_disagrees_with_its_padding_stays_on_the_cpu() -> None:
    """A corrupt file's padding (here 2**28 channels) must not reach the lowering's fills."""
    pads = const("pads", [[0, 0], [1, 1], [1, 1], [0, 1 << 28]], DataType.INT32, None)
    reason = unsupported_reason(op("PAD", [fm("a", (1, 4, 4, 8)), pads], [fm("b", (1, 6, 6, 8))]))
    assert reason is not None and "plus the padding" in reason
    negative = const("neg", [[0, 0], [-1, 1], [1, 1], [0, 0]], DataType.INT32, None)
    assert "negative" in str(unsupported_reason(op("PAD", [fm("a", (1, 4, 4, 8)), negative], [fm("b", (1, 4, 6, 8))])))


def test_int32_minimum_and_maximum_stay_on_the_cpu_as_both_vela_cores_keep_them() -> None:
    """Vela's legacy core runs int32 only for ADD, SUB, MUL (and copies); its default core says
    "32-bit feature-maps are not supported" of MINIMUM/MAXIMUM. ADD stays on the NPU (the default
    core runs it)."""
    from npuplan.ir.types import Quantization

    q = Quantization((1.0,), (0,))
    for kind in ("MINIMUM", "MAXIMUM"):
        a, b, y = (fm(n, (1, 4, 4, 8), DataType.INT32, q) for n in "aby")
        reason = unsupported_reason(op(kind, [a, b], [y]))
        assert reason is not None and "int32" in reason, kind
    a, b, y = (fm(n, (1, 4, 4, 8), DataType.INT32, q) for n in "aby")
    assert unsupported_reason(op("ADD", [a, b], [y], fused_activation_function="NONE")) is None


def test_a_maximum_rescaling_its_operands_stays_on_the_cpu_and_one_that_does_not_runs() -> None:
    """The NPU compares the operands less their zero points, unscaled: MAXIMUM/MINIMUM of operands
    quantized otherwise than the output would not compute TFLite's result (Vela's legacy core:
    "Both Input quantization parameters must match OFM quantization parameters")."""
    from npuplan.ir.types import Quantization

    same, other = Quantization((0.05,), (3,)), Quantization((0.1,), (3,))
    for kind in ("MAXIMUM", "MINIMUM"):
        a, b, y = fm("a", (1, 4, 4, 8), quant=same), fm("b", (1, 4, 4, 8), quant=other), fm("y", (1, 4, 4, 8), quant=same)
        assert unsupported_reason(op(kind, [a, b], [y])) == "Both Input quantization parameters must match OFM quantization parameters"
        assert unsupported_reason(op(kind, [a, fm("c", (1, 4, 4, 8), quant=same)], [y])) is None


def test_a_width_stride_above_3_that_folds_into_depth_is_supported() -> None:
    w = const("w", np.ones((3, 1, 8, 1)))
    b = const("b", np.zeros(3), DataType.INT32, None)
    conv_1d = op("CONV_2D", [fm("a", (1, 1, 64, 1)), w, b], [fm("b", (1, 1, 15, 3))], 2, padding="VALID",
                 stride_h=1, stride_w=4, dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="NONE")
    assert unsupported_reason(conv_1d) is None
