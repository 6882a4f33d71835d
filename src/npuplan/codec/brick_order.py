"""The order the NPU reads a core's weights in (the "brick" order), as the weight stream lists them.

Format facts (the datapath's traversal, which the encoded stream must follow):

- OFM blocks of ``ofm_block_depth`` channels, outermost; inside each, OFM micro-blocks of
  ``ofm_ublock_depth`` channels (the last micro-block of a block may reach into the next block's
  channels, which it then repeats; channels past the OFM depth read as zero);
- IFM blocks: depth-first 32 channels deep (16 for 16-bit IFMs), always whole (zeros past the IFM
  depth); part-kernel-first 16 deep, cut at the IFM depth and rounded up to IFM micro-blocks;
  depthwise one IFM channel per OFM channel;
- sub-kernels of at most 8x8 elements (4 along a dilated axis), row-major in the kernel; each
  sub-kernel's elements row-major, padded with zero elements to a multiple of 4 (depthwise; and
  part-kernel-first with 8-bit IFMs) or 2 (part-kernel-first, 16-bit IFMs);
- loop order, outermost first: OFM block, IFM block, sub-kernel row, sub-kernel column, then
  depth-first: OFM micro-block, element, IFM micro-block, OFM channel, IFM channel;
  part-kernel-first: IFM micro-block, OFM micro-block, element, OFM channel, IFM channel;
  depthwise: OFM micro-block, element, OFM channel.

The order depends on the geometry alone, so it is computed once per geometry as gather indices
into the flattened OHWI volume (index ``volume.size`` stands for an inserted zero).
"""

from __future__ import annotations

import functools

import numpy as np

from npuplan.records import record

SUB_KERNEL_MAX = 8
DEPTH_FIRST_IFM_BLOCK = 32
DEPTH_FIRST_IFM_BLOCK_16_BIT = 16
PART_KERNEL_IFM_BLOCK = 16
DEPTHWISE_ELEMENT_MULTIPLE = 4
PART_KERNEL_ELEMENT_MULTIPLE = {8: 4, 16: 2}
_INDEX_MEMO = 32


@record
class BrickGeometry:
    """Everything the brick order depends on: the OHWI volume's shape, the accelerator's micro-block
    depths (channels), the OFM block depth (channels), IFM element bits, dilation (x, y; 1 or 2),
    depthwise and part-kernel-first traversal."""

    shape: tuple[int, int, int, int]
    ofm_ublock_depth: int
    ifm_ublock_depth: int
    ofm_block_depth: int
    ifm_bits: int = 8
    dilation_xy: tuple[int, int] = (1, 1)
    depthwise: bool = False
    part_kernel_first: bool = False


def _ceil(n: int, m: int) -> int:
    return -(-n // m)


def _sub_kernels(size: int, most: int) -> list[tuple[int, int]]:
    """(start, length) of each sub-kernel along one kernel axis."""
    return [(start, min(most, size - start)) for start in range(0, size, most)]


def _element_multiple(geom: BrickGeometry) -> int:
    if geom.depthwise:
        return DEPTHWISE_ELEMENT_MULTIPLE
    if geom.part_kernel_first:
        return PART_KERNEL_ELEMENT_MULTIPLE.get(geom.ifm_bits, 1)
    return 1


def _elements(geom: BrickGeometry) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per sub-kernel (rows, columns) and element slot: kernel row, kernel column, whether the slot
    is walked (padded element count) and whether it holds a kernel element; each ``[sy, sx, el]``."""
    _, height, width, _ = geom.shape
    rows = _sub_kernels(height, SUB_KERNEL_MAX // geom.dilation_xy[1])
    cols = _sub_kernels(width, SUB_KERNEL_MAX // geom.dilation_xy[0])
    multiple = _element_multiple(geom)
    r0 = np.array([r for r, _ in rows])[:, None, None]
    rh = np.array([h for _, h in rows])[:, None, None]
    c0 = np.array([c for c, _ in cols])[None, :, None]
    cw = np.array([w for _, w in cols])[None, :, None]
    slots = max(_ceil(h * w, multiple) * multiple for _, h in rows for _, w in cols)
    el = np.arange(slots)[None, None, :]
    walked = el < _ceil_array(rh * cw, multiple) * multiple
    real = el < rh * cw
    return r0 + el // cw, c0 + el % cw, walked, real


def _ceil_array(n: np.ndarray, m: int) -> np.ndarray:
    return -(-n // m)


def _ofm_axes(geom: BrickGeometry) -> tuple[np.ndarray, np.ndarray]:
    """OFM channel and whether its micro-block is walked, each ``[ob, ou, oz]``."""
    depth, block, oub = geom.shape[0], max(1, geom.ofm_block_depth), geom.ofm_ublock_depth
    block = min(block, depth)
    starts = np.arange(0, depth, block)[:, None, None]
    ublocks = np.arange(_ceil(block, oub))[None, :, None]
    channel = starts + ublocks * oub + np.arange(oub)[None, None, :]
    walked = ublocks * oub < np.minimum(block, depth - starts)
    return channel, walked


def _ifm_axes(geom: BrickGeometry) -> tuple[np.ndarray, np.ndarray]:
    """IFM channel and whether its micro-block is walked, each ``[ib, iu, iz]``."""
    depth, iub = geom.shape[3], geom.ifm_ublock_depth
    if geom.depthwise:
        return np.zeros((1, 1, 1), dtype=np.int64), np.ones((1, 1, 1), dtype=bool)
    if geom.part_kernel_first:
        block = PART_KERNEL_IFM_BLOCK
    else:
        block = DEPTH_FIRST_IFM_BLOCK_16_BIT if geom.ifm_bits == 16 else DEPTH_FIRST_IFM_BLOCK
    starts = np.arange(0, max(depth, 1), block)[:, None, None]
    ublocks = np.arange(_ceil(block, iub))[None, :, None]
    channel = starts + ublocks * iub + np.arange(iub)[None, None, :]
    if geom.part_kernel_first:
        walked = ublocks * iub < np.minimum(block, depth - starts)
    else:
        walked = np.ones_like(ublocks * starts, dtype=bool)
    return channel, walked


@functools.lru_cache(maxsize=_INDEX_MEMO)
def brick_indices(geom: BrickGeometry) -> np.ndarray:
    """Gather indices (int32, read-only) into the flattened OHWI volume of ``geom.shape`` giving
    the stream's values in the NPU's order; ``volume.size`` marks a zero the order inserts."""
    depth, height, width, ifm_depth = geom.shape
    ofm, ofm_walked = _ofm_axes(geom)  # [ob, ou, oz]
    ifm, ifm_walked = _ifm_axes(geom)  # [ib, iu, iz]
    ky, kx, el_walked, el_real = _elements(geom)  # [sy, sx, el]
    # 32-bit indices (a volume holds fewer than 2**31 weights): half the bytes through the broadcasts
    ofm, ifm, ky, kx = (a.astype(np.int32) for a in (ofm, ifm, ky, kx))
    # one axis per loop, in the depth-first order: ob ib sy sx ou el iu oz iz
    o = ofm[:, None, None, None, :, None, None, :, None]
    ow = ofm_walked[:, None, None, None, :, None, None, :, None]
    i = ifm[None, :, None, None, None, None, :, None, :]
    iw = ifm_walked[None, :, None, None, None, None, :, None, :]
    y, x = ky[None, None, :, :, None, :, None, None, None], kx[None, None, :, :, None, :, None, None, None]
    ew = el_walked[None, None, :, :, None, :, None, None, None]
    er = el_real[None, None, :, :, None, :, None, None, None]
    index = ((o * height + np.minimum(y, height - 1)) * width + np.minimum(x, width - 1)) * ifm_depth + i
    real = (o < depth) & (i < ifm_depth) & er
    index, walked = np.broadcast_arrays(np.where(real, index, depth * height * width * ifm_depth), ow & iw & ew)
    if geom.part_kernel_first and not geom.depthwise:  # IFM micro-blocks outside the OFM ones
        order = (0, 1, 2, 3, 6, 4, 5, 7, 8)
        index, walked = index.transpose(order), walked.transpose(order)
    found = index[walked].astype(np.int32, copy=False)
    found.flags.writeable = False
    return found


def brick_order(volume: np.ndarray, geom: BrickGeometry) -> np.ndarray:
    """``volume`` (OHWI, of shape ``geom.shape``) as the stream lists it (1-D, zeros inserted)."""
    flat = np.asarray(volume).reshape(-1)
    if not _inserts_zeros(geom):  # gather in place
        return flat[brick_indices(geom)]
    return np.concatenate([flat, np.zeros(1, dtype=volume.dtype)])[brick_indices(geom)]


@functools.lru_cache(maxsize=_INDEX_MEMO)
def _inserts_zeros(geom: BrickGeometry) -> bool:
    """Whether the order of ``geom`` inserts zeros (channels or elements the volume lacks)."""
    indices = brick_indices(geom)
    return bool(indices.size) and int(indices.max()) >= int(np.prod(geom.shape))
