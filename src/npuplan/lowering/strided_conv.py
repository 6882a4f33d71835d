"""Fold a strided first convolution's width stride into depth (Vela's strided-conv optimisation).

A CONV_2D that is the network's first operator, with stride_w > 1 and a shallow IFM, or any CONV_2D
whose width stride exceeds the hardware's 3, is
rewritten as a convolution over an IFM reshaped W x C -> (W / r) x (C * r): the filter is
zero-padded along its width (so the hardware padding stays the same) and reshaped the same
way, and the width stride drops to stride_w / r. Vela does this so that the shallow first
layer uses more of the MAC array; its MAC count and weight stream change accordingly.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from npuplan.ir.lowered import BlockType, Kernel, NpuOp, Padding

HW_STRIDES = (2, 3)
MAX_FOLDED_DEPTH = 8  # fold only while the reshaped IFM stays this shallow (or the stride exceeds 3)


def hw_padding_total(in_size: int, stride: int, kernel: int) -> int:
    """Total hardware padding along one axis for SAME padding, as the hardware computes it."""
    if in_size % stride == 0:
        return max(kernel - stride, 0)
    return max(kernel - in_size % stride, 0)


def resize_factor(ifm_width: int, stride_x: int) -> tuple[int, int]:
    """(r, stride after folding): r divides the IFM width and leaves a hardware stride."""
    factor = stride_x
    if ifm_width % factor != 0:
        usable = [s for s in HW_STRIDES if factor % s == 0 and ifm_width % (stride_x // s) == 0]
        reduced = factor // usable[0] if usable else factor
        factor = reduced if reduced != factor else 1
    return factor, stride_x // factor


def filter_padding(same: bool, hw_pad_x: int, final_stride: int, factor: int, kernel_w: int,
                   ifm_width: int) -> tuple[int, int]:
    """Zero columns (left, right) to add to the filter so the folded op pads the IFM the same."""
    size, left, right = 0, 0, 0
    if same:
        if ifm_width % (final_stride * factor) == 0:
            expected = hw_pad_x + final_stride
        else:
            expected = hw_pad_x + (ifm_width // factor) % final_stride
        size = expected * factor - kernel_w
        left = size // 2 if hw_pad_x == 0 else size // hw_pad_x * (hw_pad_x // 2)
        right = size - left
    if kernel_w % factor != 0 and (size == 0 or hw_pad_x == 0):
        left, right = 0, factor - kernel_w % factor
    return left, right


def fold_plan(ifm_width: int, ifm_depth: int, kernel_width: int, stride_x: int, *, padding_mode: str,
              dilation_x: int, first: bool) -> tuple[int, int, int, int] | None:
    """(factor r, width stride after folding, zero filter columns left, right), or None when the
    fold does not apply. Vela folds the network's first convolution, and any later one whose width
    stride the hardware cannot take (above 3)."""
    if padding_mode not in ("SAME", "VALID") or dilation_x != 1 or stride_x <= 1:
        return None
    if not first and stride_x <= HW_STRIDES[-1]:
        return None
    factor, final_stride = resize_factor(ifm_width, stride_x)
    if factor == 1 or not (ifm_depth * factor <= MAX_FOLDED_DEPTH or stride_x > 3):
        return None
    same = padding_mode == "SAME"
    hw_pad_x = hw_padding_total(ifm_width, stride_x, kernel_width)
    left, right = filter_padding(same, hw_pad_x, final_stride, factor, kernel_width, ifm_width)
    if same and hw_pad_x != hw_padding_total(ifm_width // factor, final_stride, (kernel_width + 1 + left + right) // factor):
        return None
    return factor, final_stride, left, right


def fold_stride_into_depth(op: NpuOp, *, padding_mode: str, weight_zero_point: int = 0) -> NpuOp:
    """The rewritten op, or ``op`` unchanged when the rewrite does not apply.

    ``padding_mode`` is the TFLite padding ("SAME"/"VALID"; anything else, e.g. a folded PAD,
    disables the rewrite); ``weight_zero_point`` fills the added filter columns.
    """
    k = op.kernel
    ifm = op.ifm_shape
    if op.block_type is not BlockType.CONV or op.weights is None:
        return op
    plan = fold_plan(ifm.w, ifm.c, k.width, k.stride_x, padding_mode=padding_mode, dilation_x=k.dilation_x,
                     first=op.source_index == 0)
    if plan is None:
        return op
    factor, final_stride, left, right = plan
    same = padding_mode == "SAME"
    weights = np.pad(op.weights, ((0, 0), (0, 0), (left, right), (0, 0)), constant_values=weight_zero_point)
    o, kh, kw, ic = weights.shape
    weights = weights.reshape(o, kh, kw // factor, ic * factor)
    new_ifm = ifm.with_w(ifm.w // factor).with_c(ifm.c * factor)
    new_w = kw // factor
    pad = k.padding
    if same:
        total = hw_padding_total(new_ifm.w, final_stride, new_w)
        pl, pr = total // 2, total - total // 2
        pad = Padding(top=pad.top, left=pl, bottom=pad.bottom, right=pr)
    kernel = Kernel(k.height, new_w, k.stride_y, final_stride, k.dilation_y, 1, pad)
    return replace(op, ifm_shape=new_ifm, weights=weights, kernel=kernel)
