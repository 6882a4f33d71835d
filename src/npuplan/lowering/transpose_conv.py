"""TRANSPOSE_CONV: a convolution over the IFM upscaled by the stride (Vela's
``Conv2DBackpropInputSwitchedBias``).

With stride 2 the hardware upscales the IFM while reading it ("transpose" resampling: each IFM
row and column followed by a zero one) and runs a stride-1 convolution with the filter flipped in
height and width; with stride 1 it is a plain stride-1 convolution with the flipped filter. The
padding is the one that makes the convolution produce the TFLite output (Vela's upscaled padding
for stride 2; SAME or VALID padding of the stride-1 op otherwise).
"""

from __future__ import annotations

import numpy as np

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import BlockType, Kernel, NpuOp, Padding, Resampling
from npuplan.lowering._util import fused_activation, same_padding

OP_TYPE = "Conv2DBackpropInputSwitchedBias"


def operands(op: Op) -> tuple[Tensor, Tensor, Tensor | None]:
    """(IFM, weights O x H x W x I, bias or None): TFLite puts the output shape first."""
    ifm, weights = op.inputs[2], op.inputs[1]
    assert ifm is not None and weights is not None
    bias = op.inputs[3] if len(op.inputs) > 3 else None
    return ifm, weights, bias


def as_conv(op: Op) -> Op:
    """``op`` with its inputs in CONV_2D order (IFM, weights, bias), for the shared weight checks."""
    ifm, weights, bias = operands(op)
    return Op(op.type, (ifm, weights, bias), op.outputs, op.options, op.index)


def geometry_reason(op: Op) -> str | None:
    """Why Vela would not run this transpose convolution's geometry on the NPU, or None."""
    ifm, weights, _ = operands(op)
    ofm = op.outputs[0]
    if len(ifm.shape) != 4 or len(ofm.shape) != 4 or len(weights.shape) != 4:
        return "IFM, OFM and weights must be 4D"
    sh, sw = int(op.options.get("stride_h", 1)), int(op.options.get("stride_w", 1))
    _, kh, kw, _ = weights.shape
    ih, iw, oh, ow = ifm.shape[1], ifm.shape[2], ofm.shape[1], ofm.shape[2]
    if not ((sw, sh) in ((1, 1), (2, 2)) or ((sw, sh) == (2, 1) and ih == 1 and kh == 1)):
        return ("Stride values WxH must be 1x1 or 2x2 (2x1 only when IFM height and kernel height are 1)"
                f" (stride {sw}x{sh}, IFM height {ih}, kernel height {kh})")
    if op.options.get("padding") == "SAME" and (oh, ow) != (ih * sh, iw * sw):
        return f"SAME padding: OFM dimensions must equal IFM dimensions multiplied by stride ({[oh, ow]} vs {[ih, iw]})"
    if op.options.get("padding") == "VALID" and (oh, ow) != (ih * sh + max(kh - sh, 0), iw * sw + max(kw - sw, 0)):
        return ("VALID padding: OFM dimensions must equal IFM dimensions multiplied by stride, plus the kernel"
                f" size less the stride ({[oh, ow]} vs IFM {[ih, iw]}, kernel {kh}x{kw})")
    return None


def upscaled_padding(same: bool, kernel_hw: tuple[int, int], factor_hw: tuple[int, int]) -> Padding:
    """Padding of the stride-1 convolution over the upscaled IFM (Vela's rule for transpose
    resampling): the trailing side gets what the upscaled zeros do not already provide."""
    (kh, kw), (fh, fw) = kernel_hw, factor_hw
    if same:
        bottom, right = max(kh // fh - 1, 0), max(kw // fw - 1, 0)
        return Padding(top=max(kh - 1 - bottom, 0), left=max(kw - 1 - right, 0), bottom=bottom, right=right)
    return Padding(top=kh - 1, left=kw - 1, bottom=max(kh - 2, 0), right=max(kw - 2, 0))


def _stride1_padding(same: bool, kernel_hw: tuple[int, int], ifm_hw: tuple[int, int]) -> Padding:
    if same:
        top, bottom = same_padding(ifm_hw[0], 1, kernel_hw[0])
        left, right = same_padding(ifm_hw[1], 1, kernel_hw[1])
        return Padding(top=top, left=left, bottom=bottom, right=right)
    return Padding(top=kernel_hw[0] - 1, left=kernel_hw[1] - 1, bottom=kernel_hw[0] - 1, right=kernel_hw[1] - 1)


def convert_transpose_conv(op: Op) -> tuple[NpuOp, ...]:
    """TRANSPOSE_CONV -> one Conv2DBackpropInputSwitchedBias (weights flipped in H and W)."""
    ifm, weights, bias = operands(op)
    assert weights.data is not None
    ofm = op.outputs[0]
    ifm_shape, ofm_shape = ifm.shape4d, ofm.shape4d
    _, kh, kw, _ = weights.shape
    same = op.options.get("padding") == "SAME"
    upscaled = int(op.options.get("stride_h", 1)) > 1 or int(op.options.get("stride_w", 1)) > 1
    factors = (max(1, ofm_shape.h // ifm_shape.h), max(1, ofm_shape.w // ifm_shape.w))
    if upscaled:
        padding = upscaled_padding(same, (kh, kw), factors)
    else:
        padding = _stride1_padding(same, (kh, kw), (ifm_shape.h, ifm_shape.w))
    flipped = np.ascontiguousarray(weights.data[:, ::-1, ::-1, :])
    flipped.flags.writeable = False
    return (
        NpuOp(
            name=str(op.options.get("npu_name", op.name)), tflite_type=op.type, op_type=OP_TYPE,
            block_type=BlockType.CONV, ifm=ifm, ifm_shape=ifm_shape, ofm=ofm, ofm_shape=ofm_shape,
            weights=flipped, weight_tensor=weights, bias=bias.data if bias is not None else None,
            bias_tensor=bias, kernel=Kernel(kh, kw, padding=padding), activation=fused_activation(op.options),
            source_index=op.index, resampling=Resampling.TRANSPOSE if upscaled else Resampling.NONE,
        ),
    )

