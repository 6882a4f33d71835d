"""NPU_OP_CONV and NPU_OP_DEPTHWISE: the IFM window each OFM element reads (stride, dilation,
padding with the IFM zero point, 2x upscaling), the multiply-accumulate, and the per-channel
bias and scale of the scale stream.

Kernel registers: KERNEL_HEIGHT_M1/WIDTH_M1 hold the dilated extent less one; KERNEL_STRIDE bit 0
(1) the X (Y) stride's low bit less one, bits 6-8 (9-11) its high bits, bit 3 (4) a 2x X (Y)
dilation. IFM_UPSCALE: 1 repeats each element 2x2 (nearest), 2 puts each element at the even
position of a 2x2 block of zeros.

A vector product (fully connected) is a 1x1 convolution. The accumulator is 32-bit, 40-bit for
ACC_FORMAT 1 (16-bit IFMs); it wraps at its width.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from npuplan.errors import ValidationError
from npuplan.records import record
from npuplan.sim.output_stage import OutputStage, zero_point
from npuplan.sim.rounding import rescale, wrap

if TYPE_CHECKING:
    from npuplan.sim.scales import ChannelScales

UPSCALE_NEAREST, UPSCALE_ZEROS = 1, 2
EXACT_FLOAT_BITS = 52  # a float64 sum of products below 2**52 is exact
ACC_BITS = {0: 32, 1: 40}


@record
class Kernel:
    """An operation's window geometry from its registers (extents are the dilated ones)."""

    height: int
    width: int
    stride_y: int
    stride_x: int
    dilation_y: int
    dilation_x: int
    pad_top: int
    pad_left: int
    pad_bottom: int
    pad_right: int
    upscale: int
    ofm_height: int
    ofm_width: int

    @classmethod
    def of(cls, regs: Mapping[str, int]) -> Kernel:
        stride = regs.get("KERNEL_STRIDE", 0)
        return cls(height=regs.get("KERNEL_HEIGHT_M1", 0) + 1, width=regs.get("KERNEL_WIDTH_M1", 0) + 1,
                   stride_y=((stride >> 1) & 1) + ((stride >> 9) & 0x7) * 2 + 1,
                   stride_x=(stride & 1) + ((stride >> 6) & 0x7) * 2 + 1,
                   dilation_y=((stride >> 4) & 1) + 1, dilation_x=((stride >> 3) & 1) + 1,
                   pad_top=regs.get("IFM_PAD_TOP", 0), pad_left=regs.get("IFM_PAD_LEFT", 0),
                   pad_bottom=regs.get("IFM_PAD_BOTTOM", 0), pad_right=regs.get("IFM_PAD_RIGHT", 0),
                   upscale=regs.get("IFM_UPSCALE", 0) & 0x3,
                   ofm_height=regs.get("OFM_HEIGHT_M1", 0) + 1, ofm_width=regs.get("OFM_WIDTH_M1", 0) + 1)

    @property
    def positions(self) -> list[tuple[int, int]]:
        """The (y, x) offsets of the kernel's taps in the padded IFM."""
        return [(y, x) for y in range(0, self.height, self.dilation_y) for x in range(0, self.width, self.dilation_x)]

    @property
    def rows(self) -> int:
        """IFM rows the OFM reads, padding included."""
        return (self.ofm_height - 1) * self.stride_y + self.height

    @property
    def columns(self) -> int:
        return (self.ofm_width - 1) * self.stride_x + self.width

    def tap(self, padded: np.ndarray, y: int, x: int) -> np.ndarray:
        """The IFM values tap (y, x) of every OFM element reads: (ofm_h, ofm_w, depth)."""
        return padded[y:y + (self.ofm_height - 1) * self.stride_y + 1:self.stride_y,
                      x:x + (self.ofm_width - 1) * self.stride_x + 1:self.stride_x]


def upscaled(values: np.ndarray, mode: int, fill: int) -> np.ndarray:
    """The IFM as the kernel sees it after IFM_UPSCALE (``fill`` between elements for ZEROS)."""
    if mode == UPSCALE_NEAREST:
        return np.repeat(np.repeat(values, 2, axis=0), 2, axis=1)
    if mode == UPSCALE_ZEROS:
        out = np.full((values.shape[0] * 2, values.shape[1] * 2, values.shape[2]), fill, dtype=values.dtype)
        out[0::2, 0::2] = values
        return out
    return values


def padded(values: np.ndarray, kernel: Kernel, fill: int) -> np.ndarray:
    """The IFM box upscaled and padded with ``fill`` to the rows and columns the kernel reads
    (an upscaled box's last row or column beyond them dropped)."""
    image = upscaled(values, kernel.upscale, fill)
    rows = kernel.rows - kernel.pad_top - kernel.pad_bottom
    columns = kernel.columns - kernel.pad_left - kernel.pad_right
    image = image[:max(rows, 0), :max(columns, 0)]
    if image.shape[0] < rows or image.shape[1] < columns:
        raise ValidationError(f"IFM box {values.shape[:2]} is smaller than the {rows}x{columns} the kernel reads")
    return np.pad(image, ((kernel.pad_top, kernel.pad_bottom), (kernel.pad_left, kernel.pad_right), (0, 0)),
                  constant_values=fill)


def _dot(taps: np.ndarray, weights: np.ndarray, exact: bool) -> np.ndarray:
    """(ofm_h, ofm_w, c) x (oc, c) -> (ofm_h, ofm_w, oc), exactly: one 2-D float64 product where
    every sum stays below 2**52 (a stacked 3-D product is many times slower), else in int64."""
    h, w, c = taps.shape
    if exact:
        product = taps.reshape(h * w, c).astype(np.float64) @ np.ascontiguousarray(weights.T, dtype=np.float64)
        return np.rint(product).astype(np.int64).reshape(h, w, -1)
    return np.einsum("hwc,oc->hwo", taps, weights)


def accumulate(ifm: np.ndarray, weights: np.ndarray, kernel: Kernel, *, depthwise: bool) -> np.ndarray:
    """The sum of products (int64) of the zero-point-corrected IFM (padding 0) and the weights."""
    image = padded(ifm, kernel, 0)
    taps = kernel.positions
    if depthwise:
        depth = weights.shape[0]
        acc = np.zeros((kernel.ofm_height, kernel.ofm_width, depth), dtype=np.int64)
        for k, (y, x) in enumerate(taps):
            ky, kx = divmod(k, len(range(0, kernel.width, kernel.dilation_x)))
            acc += kernel.tap(image, y, x)[..., :depth] * weights[:, ky, kx, 0]
        return acc
    largest = int(np.max(np.abs(image))) if image.size else 0
    bits = largest.bit_length() + int(np.max(np.abs(weights), initial=0)).bit_length() + \
        (image.shape[2] * len(taps)).bit_length()
    acc = np.zeros((kernel.ofm_height, kernel.ofm_width, weights.shape[0]), dtype=np.int64)
    columns = len(range(0, kernel.width, kernel.dilation_x))
    for k, (y, x) in enumerate(taps):
        ky, kx = divmod(k, columns)
        acc += _dot(kernel.tap(image, y, x), weights[:, ky, kx, :], bits < EXACT_FLOAT_BITS)
    return acc


def compute(regs: Mapping[str, int], ifm: np.ndarray, weights: np.ndarray, scales: ChannelScales,
            stage: OutputStage, *, depthwise: bool) -> np.ndarray:
    """The convolution's rescaled result, per OFM channel: (acc + bias) * scale >> shift."""
    kernel = Kernel.of(regs)
    acc = accumulate(ifm - zero_point(regs, "IFM"), weights, kernel, depthwise=depthwise)
    acc = wrap(acc, ACC_BITS.get(regs.get("ACC_FORMAT", 0) & 0x3, 32))
    depth = acc.shape[2]
    bias = np.asarray(scales.bias, dtype=np.int64)[:depth]
    total = acc + bias
    return rescale(total, np.asarray(scales.scale, dtype=np.int64)[:depth],
                   np.asarray(scales.shift, dtype=np.int64)[:depth], stage.rounding)
