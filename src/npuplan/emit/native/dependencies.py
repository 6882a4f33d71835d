"""Ordering the operations: the KERNEL_WAIT / DMA_WAIT each needs before it starts, and BLOCKDEP,
how many OFM blocks of the previous block operation may still be in flight when this one starts.

Waits: the NPU runs up to ``max_outstanding_kernels`` block operations and the DMA up to
``max_outstanding_dma`` transfers at once. Before an operation starts, it waits for the newest
outstanding operation of the other kind whose accesses conflict with its own (and so for all
older ones too): the wait's count is how many newer ones may stay outstanding.

BLOCKDEP: when this operation's IFM is (part of) the previous operation's OFM, the first few
jobs (IFM blocks) this one reads are checked against the last few OFM blocks the previous one
writes; the count of earlier, non-overlapping jobs bounds how far they may overlap in time.
"""

from __future__ import annotations

from typing import NamedTuple

from npuplan.emit.native.accesses import Accesses, Span, any_overlap, area_spans
from npuplan.emit.native.hardware import MAX_BLOCKDEP, NativeArch
from npuplan.emit.native.view import Fm

Point = tuple[int, int, int]  # x, y, z (column, row, channel)


class Waits:
    """The outstanding operations of each kind, and the waits new ones need."""

    def __init__(self, arch: NativeArch) -> None:
        self.kernels: list[Accesses] = []
        self.dmas: list[Accesses] = []
        self.max_kernels, self.max_dmas = arch.max_outstanding_kernels, arch.max_outstanding_dma

    def before(self, accesses: Accesses, *, dma: bool) -> int:
        """Start an operation: how many operations of the other kind may stay outstanding when it
        starts (-1: no wait), the waited-for ones (and older) no longer outstanding."""
        mine, others, cap = (self.dmas, self.kernels, self.max_dmas) if dma else (self.kernels, self.dmas,
                                                                                  self.max_kernels)
        mine.append(accesses)
        if len(mine) > cap:
            del mine[0]
        for newer, other in enumerate(reversed(others)):
            if other.conflicts(accesses):
                del others[:len(others) - newer]
                return newer
        return -1


class BlockOp(NamedTuple):
    """What BLOCKDEP reads of a block operation."""

    ifm: Fm
    ifm2: Fm | None  # None without a second feature map (or with a scalar)
    ofm: Fm
    ifm_spans: list[Span]
    ifm2_spans: list[Span]
    ofm_spans: list[Span]
    block: Point  # OFM block width, height, depth
    kernel: tuple[int, int, int, int, int, int]  # width, height, stride x, y, dilation x, y
    pad_left: int
    pad_right: int
    ifm_block_depth: int  # a convolution's IFM block depth, else the OFM's depth
    lut: bool
    streams: tuple[tuple[int, int, int], ...]  # the weight and scale streams read (region, address, length)


def _block_at(size: Point, block: Point, offset: int) -> Point | None:
    """The first element of block number ``offset`` (from the end if negative) of a volume of
    ``size`` walked depth first, then along x, then y; None past the end."""
    wb, hb, db = -(-size[0] // block[0]), -(-size[1] // block[1]), -(-size[2] // block[2])
    total = wb * hb * db
    index = total + offset if offset < 0 else offset
    if index >= total:
        return None
    return block[0] * ((index // db) % wb), block[1] * (index // (db * wb)), block[2] * (index % db)


def _ifm_block(arch: NativeArch, op: BlockOp) -> Point:
    """The IFM block one job reads (within the largest sub-kernel, micro-block rounded)."""
    kw, kh, sx, sy, dx, dy = op.kernel
    ub, cap = arch.accelerator.ifm_ublock, arch.accelerator.ofm_block_max
    w = (op.block[0] - 1) * sx + min(cap.width, (kw - 1) * dx + 1)
    h = (op.block[1] - 1) * sy + min(cap.height, (kh - 1) * dy + 1)
    return -(-w // ub.width) * ub.width, -(-h // ub.height) * ub.height, op.ifm_block_depth


def _job_input(op: BlockOp, ifm_block: Point, job: int) -> tuple[Point, Point] | None:
    """The IFM box (start, end) job number ``job`` of ``op`` reads; None past the last job.
    (The row coordinate is offset by the right padding, as the reference computes it.)"""
    depth_blocks = -(-op.ifm.depth // op.ifm_block_depth)
    ofm = op.ofm
    at = _block_at((ofm.width, ofm.height, ofm.depth), op.block, job // depth_blocks)
    if at is None:
        return None
    sx, sy = op.kernel[2], op.kernel[3]
    start = (max(0, at[0] * sx - op.pad_left), max(0, at[1] * sy - op.pad_right),
             (job % depth_blocks) * ifm_block[2])
    return start, (start[0] + ifm_block[0], start[1] + ifm_block[1], start[2] + ifm_block[2])


def _job_output(op: BlockOp, back: int) -> tuple[Point, Point] | None:
    """The OFM box of the ``back``-th last OFM block ``op`` writes."""
    ofm = op.ofm
    at = _block_at((ofm.width, ofm.height, ofm.depth), op.block, -1 - back)
    if at is None:
        return None
    return at, (at[0] + op.block[0], at[1] + op.block[1], at[2] + op.block[2])


def _same_layout(a: Fm, b: Fm) -> bool:
    return (a.height, a.width, a.depth, a.height_0, a.height_1, a.width_0, a.bases) == (
        b.height, b.width, b.depth, b.height_0, b.height_1, b.width_0, b.bases)


def _boxes_meet(fm: Fm, box: tuple[Point, Point], prev_ofm: Fm, prev_box: tuple[Point, Point]) -> bool:
    """Whether the IFM box reads bytes the previous OFM box writes."""
    if _same_layout(fm, prev_ofm):
        return all(min(box[1][k], prev_box[1][k]) - max(box[0][k], prev_box[0][k]) > 0 for k in range(3))
    return any_overlap(area_spans(fm, *box), area_spans(prev_ofm, *prev_box))


def blockdep(arch: NativeArch, prev: BlockOp | None, op: BlockOp) -> int:
    """BLOCKDEP for ``op`` after ``prev`` (the previous block operation, None for the first)."""
    if prev is None or (prev.lut and arch.shram_reserved_unused_banks == 0 and not op.lut):
        return 0
    ifm_hit = any_overlap(prev.ofm_spans, op.ifm_spans)
    ifm2_hit = op.ifm2 is not None and any_overlap(prev.ofm_spans, op.ifm2_spans)
    if ifm_hit == ifm2_hit:
        return 0 if ifm_hit else MAX_BLOCKDEP
    if ifm2_hit and op.ifm2 is not None and op.ifm2.elements < op.ifm.elements:
        return 0  # the previous OFM is the broadcast operand
    fm = op.ifm if ifm_hit else op.ifm2
    assert fm is not None
    ifm_block = _ifm_block(arch, op)
    result, elapsed = MAX_BLOCKDEP, 0
    for job in range(MAX_BLOCKDEP):
        box = _job_input(op, ifm_block, job)
        if box is None:
            break
        outstanding = 0
        for back in range(MAX_BLOCKDEP):
            prev_box = _job_output(prev, back)
            if prev_box is None or _boxes_meet(fm, box, prev.ofm, prev_box) or outstanding > MAX_BLOCKDEP:
                break
            outstanding += 1
        result = min(result, elapsed + outstanding)
        elapsed += 1
        if elapsed > MAX_BLOCKDEP:
            break
    return result
