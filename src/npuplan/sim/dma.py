"""The NPU's DMA: copies bytes between regions, or into the internal memory's lookup tables.

Register facts (the Ethos-U register map): ``DMA0_SRC_REGION``/``DMA0_DST_REGION`` hold the region
in bits 0-7, bit 8 set for the NPU's internal memory (the shared buffer, SHRAM) and the stride mode
in bits 9-10 (0: 1-D, 1: 2-D, 2: 3-D). In 1-D mode ``DMA0_LEN`` bytes are contiguous. In 2-D and
3-D mode ``DMA0_LEN`` is the bytes of one row, ``DMA0_SIZE0`` the rows of a plane and (3-D)
``DMA0_SIZE1`` the planes; a strided side skips ``DMA0_SKIP0`` bytes after each row and
``DMA0_SKIP1`` after each plane, a 1-D side reads or writes the same bytes back to back (Vela's
Ethos-U65 generator writes ``SKIP0 = row stride - LEN`` and ``SKIP1 = plane stride - LEN * SIZE0``
with a 1-D source and ``SKIP0 = 0``, the only case it emits).

A DMA into internal memory addresses SHRAM bytes; the only SHRAM it may write is the lookup-table
window of the configuration (``sim.lut_memory``: the top 2 KiB, per accelerator), which it marks
loaded.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from npuplan.errors import ValidationError
from npuplan.records import record
from npuplan.sim.lut_memory import LutMemory

_INTERNAL = 1 << 8
_MODES = {0: 1, 1: 2, 2: 3}  # stride mode -> dimensions


@record
class DmaSide:
    """One side of a transfer: region (None: internal memory), start address and stride mode."""

    region: int | None
    address: int
    dimensions: int


def dma_side(regs: Mapping[str, int], prefix: str) -> DmaSide:
    """The source (``prefix`` "DMA0_SRC") or destination ("DMA0_DST") of the next DMA."""
    param = regs.get(f"{prefix}_REGION", 0)
    mode = (param >> 9) & 0x3
    if mode not in _MODES:
        raise ValidationError(f"{prefix}_REGION {param:#x}: stride mode {mode} is not 1-D, 2-D or 3-D")
    return DmaSide(None if param & _INTERNAL else param & 0xFF, regs.get(prefix, 0), _MODES[mode])


def side_offsets(side: DmaSide, regs: Mapping[str, int], rows: int, planes: int) -> np.ndarray:
    """The byte address of every byte the side transfers, in transfer order."""
    length = regs.get("DMA0_LEN", 0)
    total = length * rows * planes
    if side.dimensions == 1:
        return side.address + np.arange(total, dtype=np.int64)
    row_stride = length + regs.get("DMA0_SKIP0", 0)
    plane_stride = rows * row_stride + regs.get("DMA0_SKIP1", 0) if side.dimensions == 3 else 0
    return (side.address + np.arange(planes, dtype=np.int64)[:, None, None] * plane_stride
            + np.arange(rows, dtype=np.int64)[None, :, None] * row_stride
            + np.arange(length, dtype=np.int64)[None, None, :]).reshape(-1)


def transfer_shape(regs: Mapping[str, int], src: DmaSide, dst: DmaSide) -> tuple[int, int]:
    """(rows, planes) of the transfer: from SIZE0/SIZE1 when either side is strided."""
    dimensions = max(src.dimensions, dst.dimensions)
    rows = regs.get("DMA0_SIZE0", 1) if dimensions >= 2 else 1
    planes = regs.get("DMA0_SIZE1", 1) if dimensions == 3 else 1
    return rows, planes


def _memory(regions: Mapping[int, np.ndarray], lut: LutMemory, side: DmaSide, label: str) -> np.ndarray:
    if side.region is None:
        return lut.data
    region = regions.get(side.region)
    if region is None:
        raise ValidationError(f"DMA {label} uses region {side.region}, which the operator does not provide")
    return region


def _span(side: DmaSide, lo: int, hi: int, memory: np.ndarray, lut: LutMemory, label: str) -> int:
    """Checks bytes ``lo..hi`` of the side's addresses; returns what to subtract from them to index
    ``memory`` (the table window's base for internal memory)."""
    if side.region is None:
        start, _ = lut.offsets(lo, hi, label)
        if label == "source":
            lut.table(start, hi - lo, "DMA source")
        return lut.window.base
    if lo < 0 or hi > memory.size:
        raise ValidationError(f"DMA {label} bytes {lo}..{hi} lie outside its region ({memory.size} bytes)")
    return 0


def run_dma(regions: Mapping[int, np.ndarray], lut: LutMemory, regs: Mapping[str, int]) -> None:
    """Executes the DMA the registers describe; ``lut`` is the table window of SHRAM."""
    src, dst = dma_side(regs, "DMA0_SRC"), dma_side(regs, "DMA0_DST")
    rows, planes = transfer_shape(regs, src, dst)
    source, target = _memory(regions, lut, src, "source"), _memory(regions, lut, dst, "destination")
    if src.dimensions == dst.dimensions == 1:  # one contiguous run each side: no offset arrays
        length = regs.get("DMA0_LEN", 0)
        if not length:
            return
        lo_r = src.address - _span(src, src.address, src.address + length, source, lut, "source")
        lo_w = dst.address - _span(dst, dst.address, dst.address + length, target, lut, "destination")
        _writable(target)
        target[lo_w:lo_w + length] = source[lo_r:lo_r + length].copy()
        if dst.region is None:
            lut.loaded[lo_w:lo_w + length] = True
        return
    reads = side_offsets(src, regs, rows, planes)
    writes = side_offsets(dst, regs, rows, planes)
    if not writes.size:
        return
    reads = reads - _span(src, int(reads.min()), int(reads.max()) + 1, source, lut, "source")
    writes = writes - _span(dst, int(writes.min()), int(writes.max()) + 1, target, lut, "destination")
    _writable(target)
    target[writes] = source[reads]
    if dst.region is None:
        lut.loaded[writes] = True


def _writable(target: np.ndarray) -> None:
    if not target.flags.writeable:
        raise ValidationError("DMA destination is a read-only region")
