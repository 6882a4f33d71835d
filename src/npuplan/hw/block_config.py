"""Choosing the OFM block (and so the SHRAM layout) for one NPU operation.

The search is Vela 5.2.0's (legacy core): walk OFM block depths in micro-block steps (rounded to
the 16-channel split depth while below the OFM depth), and every height x width in micro-block
steps up to the OFM size (capped at 32 x 64 x 128); keep blocks whose IFM and accumulator buffers
fit the shared buffer; score each by the IFM and weight elements fetched per OFM element (for
elementwise ops: the number of blocks), halve the score when two IFM blocks hold the whole IFM,
and keep the cheapest (ties: the later candidate, and for blocks up to 4x4 the one whose IFM block
covers the IFM in fewer pieces). A row of blocks none of which can cost as little as the best so
far (by a floor on their costs, with room for float rounding) is not costed: the choice is the same.
Results are cached on the op geometry, not on object identity.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator
from functools import lru_cache
from operator import itemgetter
from typing import NamedTuple

from npuplan._compat import StrEnum
from npuplan.errors import NpuplanError
from npuplan.hw.accelerator import Accelerator, Block
from npuplan.hw.shram import AccType, ElementwiseUse, ShramBudget, ShramLayout, try_layout
from npuplan.ir.lowered import Activation, BlockType, Kernel, NpuOp, Resampling
from npuplan.ir.shape import Shape4D
from npuplan.records import record
from npuplan.units import div_round_up, round_up


class NoBlockConfig(NpuplanError):
    """No OFM block fits the shared buffer for this operation."""


@record
class KernelGeometry:
    """The parts of a kernel the block search depends on (padding does not matter)."""

    height: int = 1
    width: int = 1
    stride_y: int = 1
    stride_x: int = 1
    dilation_y: int = 1
    dilation_x: int = 1

    @classmethod
    def of(cls, kernel: Kernel) -> "KernelGeometry":
        k = kernel
        return cls(k.height, k.width, k.stride_y, k.stride_x, k.dilation_y, k.dilation_x)

    @property
    def area_height(self) -> int:
        """Dilated kernel height in IFM rows."""
        return (self.height - 1) * self.dilation_y + 1

    @property
    def area_width(self) -> int:
        """Dilated kernel width in IFM columns."""
        return (self.width - 1) * self.dilation_x + 1


@record
class BlockQuery:
    """Everything ``find_block_config`` depends on; hashable, so results are cached on it.

    ``ifm``/``ifm2``/``ofm`` are the shapes of the stripe being computed; ``lut_banks`` is 2 when
    the activation uses the LUT; ``scaled`` is True when IFM(s) and OFM are quantized.
    """

    block_type: BlockType
    ofm: Shape4D
    ifm: Shape4D
    ifm2: Shape4D | None
    kernel: KernelGeometry
    ifm_bits: int = 8
    uses_scalar: bool = False
    lut_banks: int = 0
    scaled: bool = True
    resampling: Resampling = Resampling.NONE


@record
class BlockConfig:
    """The chosen block: OFM block (h, w, c), the IFM block feeding it, the SHRAM layout.

    ``ofm_block`` is the block as Vela reports it (before the Conv1D height clamp on 2-high
    micro-blocks); ``vela_repr`` is Vela's ``[ofm_h, ofm_w, ifm_c, ofm_c]``.
    """

    ofm_block: Block
    ifm_block: Block
    layout: ShramLayout
    acc_type: AccType
    is_partkernel: bool

    @property
    def vela_repr(self) -> tuple[int, int, int, int]:
        return (self.ofm_block.height, self.ofm_block.width, self.ifm_block.depth, self.ofm_block.depth)


# ---------------------------------------------------------------- geometry helpers


def _required(size: int, stride: int, border: int, resampling: Resampling) -> int:
    upscale = 1 if resampling is Resampling.NONE else 2
    nearest = 1 if resampling is Resampling.NEAREST else 0
    return math.ceil(((size - 1) * stride + border + nearest) / upscale)


def ifm_area_required(ofm_h: int, ofm_w: int, kernel: KernelGeometry, resampling: Resampling) -> tuple[int, int]:
    """IFM rows and columns needed to produce ``ofm_h`` x ``ofm_w`` outputs (no micro-block rounding)."""
    return (
        _required(ofm_h, kernel.stride_y, kernel.area_height, resampling),
        _required(ofm_w, kernel.stride_x, kernel.area_width, resampling),
    )


def ifm_block_for(
    ofm_block: Block, kernel: KernelGeometry, accel: Accelerator, resampling: Resampling = Resampling.NONE
) -> Block:
    """IFM block (h, w, depth = OFM block depth) feeding ``ofm_block``, per sub-kernel (<= 8x8).

    Height and width are rounded up to the OFM micro-block, as the hardware does.
    """
    return Block(
        _ifm_rows(ofm_block.height, kernel, accel, resampling),
        _ifm_cols(ofm_block.width, kernel, accel, resampling),
        ofm_block.depth,
    )


def _ifm_rows(ofm_rows: int, kernel: KernelGeometry, accel: Accelerator, resampling: Resampling) -> int:
    """``ifm_block_for``'s height."""
    rows = _required(ofm_rows, kernel.stride_y, min(kernel.area_height, accel.sub_kernel_max.height), resampling)
    return round_up(rows, accel.ofm_ublock.height)


def _ifm_cols(ofm_cols: int, kernel: KernelGeometry, accel: Accelerator, resampling: Resampling) -> int:
    """``ifm_block_for``'s width."""
    cols = _required(ofm_cols, kernel.stride_x, min(kernel.area_width, accel.sub_kernel_max.width), resampling)
    return round_up(cols, accel.ofm_ublock.width)


def ifm_block_depth(accel: Accelerator, ifm_depth: int, ifm_bits: int, is_partkernel: bool) -> int:
    """IFM block depth for convolutions and vector products (channels per IFM block)."""
    if ifm_bits == 16:
        return round_up(min(ifm_depth, 16), 4)
    return round_up(min(ifm_depth, 16 if is_partkernel else 32), accel.ifm_ublock.depth)


def uses_part_kernel(ifm_depth: int, ifm_bits: int, kernel: KernelGeometry) -> bool:
    """True when part-kernel-first traversal uses the MACs better than depth-first."""
    if ifm_depth <= 8:
        return True
    kernel_elements = kernel.width * kernel.height
    depth_use = ifm_depth / round_up(ifm_depth, 32 if ifm_bits == 8 else 16)
    part_use = (ifm_depth * kernel_elements) / (
        round_up(ifm_depth, 8) * round_up(kernel_elements, 4 if ifm_bits == 8 else 2)
    )
    return part_use > depth_use


def acc_type_for(block_type: BlockType, ifm_bits: int, scaled: bool) -> AccType:
    """40-bit accumulators for scaled 16-bit ops other than pooling, else 32-bit."""
    if ifm_bits == 16 and block_type is not BlockType.POOLING and scaled:
        return AccType.ACC40
    return AccType.ACC32


def _clamp_conv1d(ofm: Shape4D, kernel: KernelGeometry, accel: Accelerator, block: Block) -> Block:
    """On 2-high micro-blocks a 1-high OFM with a 1-high kernel uses a 1-high block (Conv1D)."""
    if _is_conv1d(ofm.h, kernel, accel):
        return Block(min(block.height, ofm.h), block.width, block.depth)
    return block


def _is_conv1d(ofm_h: int, kernel: KernelGeometry, accel: Accelerator) -> bool:
    """``_clamp_conv1d``'s case."""
    return ofm_h == 1 and kernel.height == 1 and accel.ofm_ublock.height == 2


# ---------------------------------------------------------------- the search


class _OpTraits(NamedTuple):
    """Per-query facts shared by every candidate block."""

    ifm: Shape4D  # the larger of IFM and IFM2 (elementwise)
    ew: ElementwiseUse
    is_depthwise: bool
    equal_depth: bool  # the IFM block has the OFM block's depth
    is_partkernel: bool
    acc: AccType
    ifm_depth_block: int
    ifm_repeats: int
    weight_fetch_wh: int


def _traits(q: BlockQuery, accel: Accelerator) -> _OpTraits:
    ifm = q.ifm2 if q.ifm2 is not None and q.ifm2.elements > q.ifm.elements else q.ifm
    ew = ElementwiseUse.NONE
    if q.block_type is BlockType.ELEMENTWISE:
        ew = ElementwiseUse.SCALAR if q.uses_scalar else ElementwiseUse.FULL
    is_dw = q.block_type is BlockType.DEPTHWISE
    is_conv = q.block_type is BlockType.CONV or is_dw
    partkernel = is_conv and uses_part_kernel(ifm.c, q.ifm_bits, q.kernel)
    k, sub = q.kernel, accel.sub_kernel_max
    return _OpTraits(
        ifm=ifm,
        ew=ew,
        is_depthwise=is_dw,
        equal_depth=ew is not ElementwiseUse.NONE or q.block_type is BlockType.POOLING or is_dw,
        is_partkernel=partkernel,
        acc=acc_type_for(q.block_type, q.ifm_bits, q.scaled),
        ifm_depth_block=ifm_block_depth(accel, ifm.c, q.ifm_bits, partkernel),
        ifm_repeats=div_round_up(k.area_width, sub.width) * div_round_up(k.area_height, sub.height),
        weight_fetch_wh=k.area_width * k.area_height if is_conv else 0,
    )


class _Span(NamedTuple):
    """One OFM block height (or width) of the search and what follows from it along that axis."""

    size: int  # OFM block rows (columns)
    fitted: int  # the same with the Conv1D clamp applied (see ``_clamp_conv1d``)
    ifm: int  # IFM block rows (columns) feeding it, rounded to the micro-block
    full: int  # OFM blocks of ``fitted`` size along the axis, rounded up
    blocks: float  # the same, not rounded


def _span(size: int, fitted: int, ifm: int, ofm_size: int) -> _Span:
    return _Span(size, fitted, ifm, div_round_up(ofm_size, fitted), ofm_size / fitted)


def _axes(q: BlockQuery, accel: Accelerator) -> tuple[tuple[_Span, ...], tuple[_Span, ...]]:
    """The candidate heights and widths: micro-block steps up to the OFM size (capped)."""
    return _heights(q.ofm.h, q.kernel, accel, q.resampling), _widths(q.ofm.w, q.kernel, accel, q.resampling)


@lru_cache(maxsize=4096)
def _heights(ofm_h: int, kernel: KernelGeometry, accel: Accelerator, mode: Resampling) -> tuple[_Span, ...]:
    """``_axes``' heights (the stripes of one op share them when their heights do)."""
    ub, cap = accel.ofm_ublock, accel.ofm_block_max
    heights = range(ub.height, round_up(min(ofm_h, cap.height), ub.height) + 1, ub.height)
    conv1d = _is_conv1d(ofm_h, kernel, accel)
    return tuple(_span(h, min(h, ofm_h) if conv1d else h, _ifm_rows(h, kernel, accel, mode), ofm_h) for h in heights)


@lru_cache(maxsize=4096)
def _widths(ofm_w: int, kernel: KernelGeometry, accel: Accelerator, mode: Resampling) -> tuple[_Span, ...]:
    """``_axes``' widths (every stripe of an op shares them)."""
    ub, cap = accel.ofm_ublock, accel.ofm_block_max
    widths = range(ub.width, round_up(min(ofm_w, cap.width), ub.width) + 1, ub.width)
    return tuple(_span(w, w, _ifm_cols(w, kernel, accel, mode), ofm_w) for w in widths)


class _Row(NamedTuple):
    """The blocks of one height and depth that the search scores (``cols``: the first ``fit``
    columns, less those Vela skips)."""

    row: _Span
    cols: tuple[_Span, ...]
    fit: int
    depth: int
    ifm_depth: int


def _relative_costs(q: BlockQuery, t: _OpTraits, row: _Span, cols: tuple[_Span, ...], depth: int, ifm_depth: int) -> list[float]:
    """Per block of ``row`` x ``cols`` x ``depth``: IFM + weight elements fetched per OFM element
    (elementwise: OFM blocks needed). The float products are grouped as Vela groups them (integer
    ones any way), so the costs are Vela's to the last bit."""
    ofm, ifm = q.ofm, t.ifm
    ofm_elements, ifm_elements = ofm.elements, ifm.elements
    if t.ew is not ElementwiseUse.NONE:
        costs = [max(ofm_elements / (row.size * col.size * depth), 1) for col in cols]
    else:
        weights_per_col = t.weight_fetch_wh * ifm.c * row.full
        depth_factor = 1 if t.is_depthwise else depth * (ofm.c / depth)  # weight refetch per depth block
        ifm_per_col = row.ifm * ifm.c * t.ifm_repeats
        refetch = 1 if t.equal_depth else div_round_up(ofm.c, depth)  # IFM fetched per OFM depth block
        costs = [
            (col.ifm * ifm_per_col * (col.blocks * row.blocks) * refetch + weights_per_col * col.full * depth_factor)
            / ofm_elements
            for col in cols
        ]
    # Two IFM blocks hold the whole IFM: no refetching at all.
    double_block = row.ifm * ifm_depth * 2
    return [cost / 2 if ifm_elements < col.ifm * double_block else cost for cost, col in zip(costs, cols)]


def _coverage(ifm: Shape4D, row: _Span, col: _Span) -> float:
    """How many IFM blocks it takes to tile the IFM plane."""
    return (ifm.w * ifm.h) / (min(ifm.w, col.ifm) * min(ifm.h, row.ifm))


def _depths(q: BlockQuery, accel: Accelerator, max_depth: int) -> list[int]:
    ub_d, split = accel.ofm_ublock.depth, accel.ofm_split_depth
    depth = max(ub_d, min(max_depth, split))
    if depth < q.ofm.c:
        depth = round_up(depth, split)
    out = []
    while depth <= max_depth:
        out.append(depth)
        depth += ub_d
        if depth < q.ofm.c:
            depth = round_up(depth, split)
    return out


def _fitting(
    q: BlockQuery, t: _OpTraits, budget: ShramBudget, rows: tuple[_Span, ...], cols: tuple[_Span, ...],
    depths: list[int],
) -> Iterator[_Row]:
    """The blocks Vela scores, depth by depth and row by row: those that fit, except that a block
    is skipped when its transpose was tried earlier at that depth and did not fit (Vela's shortcut).

    SHRAM use only grows with the depth, the height and the width, so the blocks that fit in a
    row are its first ``fit`` columns, no more than in the row above or at the depth before."""
    fit_before = [len(cols)] * len(rows)  # each row's fitting columns at the depth before
    for depth in depths:
        yield from _fitting_at(q, t, budget, rows, cols, depth, fit_before)


def _fitting_at(
    q: BlockQuery, t: _OpTraits, budget: ShramBudget, rows: tuple[_Span, ...], cols: tuple[_Span, ...], depth: int,
    fit_before: list[int],
) -> Iterator[_Row]:
    """``_fitting`` at one depth; ``fit_before`` (each row's fitting columns at a shallower depth)
    is updated to this one. Vela tries each row's columns up to its first misfit that is not
    skipped (wider ones are recorded as misfits too)."""
    ifm_depth = depth if t.equal_depth else t.ifm_depth_block
    ifm_pixel, acc_pixel = budget.ifm_pixel_bytes(ifm_depth), budget.acc_pixel_bytes(depth)
    width_sizes = {col.size for col in cols}
    first_misfit: dict[int, int] = {}  # row size -> the first width Vela tried there that did not fit
    fit = len(cols)
    for i, row in enumerate(rows):
        fit = min(fit, fit_before[i])
        while fit and not budget.fits(row.ifm * cols[fit - 1].ifm * ifm_pixel, row.fitted * cols[fit - 1].fitted * acc_pixel):
            fit -= 1
        fit_before[i] = fit
        if not fit:
            return  # nothing fits in this row or any later one
        skipped = _transposed_misfits(first_misfit, row.size) if first_misfit and row.size in width_sizes else None
        if skipped:
            misfit = next((col.size for col in cols[fit:] if col.size not in skipped), None)
            tried = tuple(col for col in cols[:fit] if col.size not in skipped)
        else:
            misfit = cols[fit].size if fit < len(cols) else None
            tried = cols[:fit]
        if misfit is not None:
            first_misfit[row.size] = misfit
        yield _Row(row, tried, fit, depth, ifm_depth)


def _transposed_misfits(first_misfit: dict[int, int], height: int) -> frozenset[int]:
    """The widths whose transpose (a block ``height`` wide) an earlier row tried and found too big."""
    return frozenset(w for w, misfit in first_misfit.items() if w < height and misfit <= height)


class _Floors(NamedTuple):
    """Per count ``n`` of leading columns: the least ``col.ifm * col.blocks`` and the least
    ``col.full`` over them (the column factors of ``_relative_costs``)."""

    ifm_blocks: tuple[float, ...]
    full: tuple[int, ...]


@lru_cache(maxsize=4096)
def _floors(ofm_w: int, kernel: KernelGeometry, accel: Accelerator, mode: Resampling) -> _Floors:
    """``_Floors`` of ``_widths``."""
    ifm_blocks, full = [math.inf], [1 << 62]
    for col in _widths(ofm_w, kernel, accel, mode):
        ifm_blocks.append(min(ifm_blocks[-1], col.ifm * col.blocks))
        full.append(min(full[-1], col.full))
    return _Floors(tuple(ifm_blocks), tuple(full))


# Relative slack of ``_cost_floor`` for float rounding: the costs and the floor are products of a
# few floats each, so each is within a few ulps (~1e-15) of its exact value
_ROUNDING = 1e-9


def _cost_floor(q: BlockQuery, t: _OpTraits, floors: _Floors, r: _Row) -> float:
    """No more than any of ``_relative_costs`` of ``r``'s blocks, less ``_ROUNDING``: the column
    factors replaced by their least over the first ``r.fit`` columns (the tried ones are among
    them), halved when the widest of them would be."""
    row, widest = r.row, r.cols[-1] if r.cols else None
    if widest is None:
        return math.inf
    ofm_elements = q.ofm.elements
    if t.ew is not ElementwiseUse.NONE:
        floor = max(ofm_elements / (row.size * widest.size * r.depth), 1)
    else:
        ifm = t.ifm
        depth_factor = 1 if t.is_depthwise else r.depth * (q.ofm.c / r.depth)
        refetch = 1 if t.equal_depth else div_round_up(q.ofm.c, r.depth)
        floor = (floors.ifm_blocks[r.fit] * (row.ifm * ifm.c * t.ifm_repeats) * row.blocks * refetch
                 + floors.full[r.fit] * (t.weight_fetch_wh * ifm.c * row.full) * depth_factor) / ofm_elements
    if t.ifm.elements < widest.ifm * row.ifm * r.ifm_depth * 2:
        floor /= 2
    return floor * (1 - _ROUNDING)


def _cheapest(q: BlockQuery, t: _OpTraits, accel: Accelerator, rows: Iterator[_Row]) -> tuple[_Row, _Span] | None:
    """The cheapest block (its row and column) in search order; on a tie the later one when it is
    at most 4x4 and its IFM block covers the IFM in no more pieces. Rows whose every block costs
    more than the best so far (by ``_cost_floor``) are not costed."""
    floors = _floors(q.ofm.w, q.kernel, accel, q.resampling)
    best: tuple[_Row, _Span] | None = None
    best_cost, best_coverage = math.inf, math.inf
    for r in rows:
        if best is not None and _cost_floor(q, t, floors, r) > best_cost:
            continue
        costs = _relative_costs(q, t, r.row, r.cols, r.depth, r.ifm_depth)
        if min(costs, default=math.inf) > best_cost:
            continue
        for col, cost in zip(r.cols, costs):
            if cost > best_cost:
                continue
            if cost == best_cost:
                if not (r.row.size <= 4 and col.size <= 4):
                    continue
                coverage = _coverage(t.ifm, r.row, col)
                if not coverage <= best_coverage:
                    continue
                best_coverage = coverage
            else:
                best_coverage = math.inf
            best_cost, best = cost, (r, col)
    return best


class _Scored(NamedTuple):
    """The blocks Vela scores for a query (``_fitting`` at every depth), with what they were found by."""

    traits: _OpTraits
    budget: ShramBudget
    rows: tuple[_Row, ...]


@lru_cache(maxsize=1024)
def _scored_rows(q: BlockQuery, accel: Accelerator) -> _Scored:
    """``_fitting``'s rows of ``q`` at every depth, listed once: ``find_block_config`` scores them
    and ``least_padded_block_configs`` looks among them (at one depth, the rows found at it: the
    blocks that fit there do not depend on the depths tried before, ``_fitting``)."""
    t = _traits(q, accel)
    rows, cols = _axes(q, accel)
    budget = ShramBudget.of(accel, t.ew, q.ifm_bits, t.acc, q.lut_banks)
    max_depth = round_up(min(q.ofm.c, accel.ofm_block_max.depth), accel.ofm_ublock.depth)
    return _Scored(t, budget, tuple(_fitting(q, t, budget, rows, cols, _depths(q, accel, max_depth))))


@lru_cache(maxsize=65536)
def find_block_config(q: BlockQuery, accel: Accelerator) -> BlockConfig | None:
    """The cheapest fitting block for ``q`` on ``accel`` (None when nothing fits)."""
    t, budget, rows = _scored_rows(q, accel)
    best = _cheapest(q, t, accel, iter(rows))
    if best is None:
        return None
    r, col = best
    ofm_block = Block(r.row.size, col.size, r.depth)
    ifm_block = Block(r.row.ifm, col.ifm, r.ifm_depth)
    layout = budget.layout(Block(r.row.fitted, col.fitted, r.depth), ifm_block)
    assert layout is not None  # the search only proposes fitting blocks
    return BlockConfig(ofm_block, ifm_block, layout, t.acc, t.is_partkernel)


@lru_cache(maxsize=65536)
def least_padded_block_configs(q: BlockQuery, accel: Accelerator, *, count: int = 2,
                               depth: int | None = None) -> tuple[BlockConfig, ...]:
    """Up to ``count`` fitting blocks for ``q`` that tile the OFM with the fewest padded elements
    (then the fewest blocks), only ``depth`` deep when given: candidates for a planner that prices
    blocks with its cost model.
    ``find_block_config`` scores blocks as Vela does, by elements fetched per OFM element with
    the blocks along each axis not rounded up, so a 14x14 block of a 16x16 map (four blocks, 3x
    the map's elements computed) ties with 8x16 (two blocks, none padded); and a 16-deep block of
    an 8-deep map writes 16-byte bursts to each pixel of an NHWC map."""
    t, budget, rows = _scored_rows(q, accel)
    def scored() -> Iterator[tuple[tuple[int, int], _Row, _Span]]:
        for r in rows if depth is None else (r for r in rows if r.depth == depth):
            depth_blocks = div_round_up(q.ofm.c, r.depth)
            row_padded, row_blocks = r.row.full * r.row.fitted * depth_blocks * r.depth, r.row.full * depth_blocks
            for col in r.cols:
                yield (row_padded * col.full * col.fitted, row_blocks * col.full), r, col
    out: list[BlockConfig] = []
    # the first ``count`` by score, in search order among equals (``nsmallest`` is a stable sort's head)
    for _, r, col in heapq.nsmallest(count, scored(), key=itemgetter(0)):
        ifm_block = Block(r.row.ifm, col.ifm, r.ifm_depth)
        layout = budget.layout(Block(r.row.fitted, col.fitted, r.depth), ifm_block)
        if layout is not None:
            out.append(BlockConfig(Block(r.row.size, col.size, r.depth), ifm_block, layout, t.acc, t.is_partkernel))
    return tuple(out)


def try_block_config(q: BlockQuery, accel: Accelerator, ofm_block: Block, *, is_partkernel: bool) -> BlockConfig | None:
    """``ofm_block`` as a block config for ``q`` if it is valid and fits, else None (forced blocks)."""
    ub, cap = accel.ofm_ublock, accel.ofm_block_max
    dims = zip(
        (ofm_block.height, ofm_block.width, ofm_block.depth), (cap.height, cap.width, cap.depth), (ub.height, ub.width, ub.depth)
    )
    if not all(0 < b <= m and b % u == 0 for b, m, u in dims):
        return None
    t = _traits(q, accel)
    depth_block = ifm_block_depth(accel, t.ifm.c, q.ifm_bits, is_partkernel)
    ifm_block = ifm_block_for(ofm_block, q.kernel, accel, q.resampling)
    if not t.equal_depth:
        ifm_block = Block(ifm_block.height, ifm_block.width, depth_block)
    fitted = _clamp_conv1d(q.ofm, q.kernel, accel, ofm_block)
    layout = try_layout(accel, t.ew, fitted, ifm_block, q.ifm_bits, t.acc, q.lut_banks)
    if layout is None:
        return None
    return BlockConfig(ofm_block, ifm_block, layout, t.acc, is_partkernel)


# ---------------------------------------------------------------- from an NpuOp


def lut_banks_for(op: NpuOp) -> int:
    """2 when the activation is a table lookup (int8 tanh/sigmoid are LUTs too), else 0."""
    if op.activation is Activation.LUT:
        return 2
    if op.activation in (Activation.TANH, Activation.SIGMOID) and op.ifm.dtype.bits == 8:
        return 2
    return 0


def resampling_for(op: NpuOp) -> Resampling:
    """How the op upscales its IFM while reading it (set by lowering: resizes, transpose convs)."""
    return op.resampling


def query_for(
    op: NpuOp, *, ofm_box: Shape4D | None = None, resampling: Resampling | None = None, by_box: bool = False
) -> BlockQuery:
    """The block-search inputs of ``op`` computing ``ofm_box`` (default: the whole OFM); a copy's
    blocks are sized by the OFM tensor it writes into (Vela legacy), or with ``by_box`` by the box it
    writes (Vela's default core: a depth-8 slice of a concatenation gets depth-8 blocks)."""
    mode = resampling_for(op) if resampling is None else resampling
    kernel = KernelGeometry.of(op.kernel)
    ifm, ifm2 = op.ifm_shape, op.ifm2_shape
    ofm = op.ofm_shape if ofm_box is None else ofm_box
    if ofm != op.ofm_shape:
        need_h, need_w = ifm_area_required(ofm.h, ofm.w, kernel, mode)
        need_h, need_w = min(need_h, ifm.h), min(need_w, ifm.w)
        ifm = ifm.with_hw(need_h, need_w)
        if ifm2 is not None:
            ifm2 = ifm2.with_hw(min(need_h, ifm2.h), min(need_w, ifm2.w))
    if op.copies_into_box and not by_box:  # Vela sizes a copy's blocks by the OFM tensor it writes into
        whole = op.ofm_frame or op.ofm.shape4d
        ofm = whole if ofm_box is None else whole.with_h(ofm.h)
    tensors = [t for t in (op.ifm, op.ifm2, op.ofm) if t is not None]
    uses_scalar = op.ifm2 is not None and (len(op.ifm.shape) == 0 or len(op.ifm2.shape) == 0)
    return BlockQuery(
        block_type=op.block_type,
        ofm=ofm,
        ifm=ifm,
        ifm2=ifm2,
        kernel=kernel,
        ifm_bits=op.ifm.dtype.bits,
        uses_scalar=uses_scalar,
        lut_banks=lut_banks_for(op),
        scaled=all(t.quant is not None for t in tensors),
        resampling=mode,
    )


@lru_cache(maxsize=65536)
def _same_stream_alternatives(query: BlockQuery, accel: Accelerator, *, cut: bool) -> tuple[BlockConfig, ...]:
    """Blocks as deep as ``find_block_config``'s, with its traversal and IFM block depth: the least
    padded ones where that block pads the OFM (where it pads nothing they have little to gain),
    and with ``cut`` that block cut smaller (``_cut_block_configs``) where it covers the OFM in a
    few blocks. Only an op computing its whole OFM is cut: in a cascade's stripes the re-reads
    recur per stripe, and cutting stripes too made no Performance plan of the zoos faster while
    it made several Size plans slower (inception_48 +26%)."""
    chosen = find_block_config(query, accel)
    if chosen is None:
        return ()
    padded = () if _tiles(query.ofm, chosen.ofm_block) else least_padded_block_configs(
        query, accel, depth=chosen.ofm_block.depth)
    found = (*padded, *(_cut_block_configs(query, accel, chosen) if cut else ()))
    return tuple(dict.fromkeys(
        b for b in found if b.ofm_block != chosen.ofm_block and b.is_partkernel == chosen.is_partkernel
        and b.ifm_block.depth == chosen.ifm_block.depth))


# at most this many blocks cover the OFM's height and width for ``_cut_block_configs`` to cut them
_FEW_BLOCKS = 4


def _cut_block_configs(q: BlockQuery, accel: Accelerator, chosen: BlockConfig) -> tuple[BlockConfig, ...]:
    """``chosen`` cut to half its height and width (whole micro-blocks, as deep, same traversal)
    when it covers ``q``'s OFM in at most ``_FEW_BLOCKS`` blocks. The weight stream is encoded per
    block depth and traversal, so it stays the one the weight plan was sized for; but a block's
    first IFM and weight fill and its last OFM drain overlap nothing, and a few smaller blocks hide
    most of them. The cost model decides whether the extra blocks pay for their weight re-reads."""
    block = chosen.ofm_block
    height, width = min(block.height, q.ofm.h), min(block.width, q.ofm.w)
    if div_round_up(q.ofm.h, height) * div_round_up(q.ofm.w, width) > _FEW_BLOCKS:
        return ()
    ub = accel.ofm_ublock
    cut = Block(round_up(div_round_up(height, 2), ub.height), round_up(div_round_up(width, 2), ub.width), block.depth)
    found = try_block_config(q, accel, cut, is_partkernel=chosen.is_partkernel)
    return () if found is None else (found,)


def _tiles(ofm: Shape4D, block: Block) -> bool:
    """Whether ``block`` tiles ``ofm``'s height and width without padding."""
    return ofm.h % block.height == 0 and ofm.w % block.width == 0


def alternative_block_configs(op: NpuOp, accel: Accelerator, *, ofm_box: Shape4D | None = None,
                              cut: bool = True) -> tuple[BlockConfig, ...]:
    """Blocks besides ``choose_block_config``'s worth pricing for ``op`` producing ``ofm_box``: for
    an op without weights (whose weight stream would not depend on the block), the least padded
    ones (``least_padded_block_configs``) and small ones (``small_block_configs``); for a copy into
    a box of a wider map, also those sized by its box, as Vela's default core sizes them. For an op
    with weights, blocks as deep as Vela's and with its kernel traversal (``_same_stream_alternatives``):
    the weight stream is encoded per OFM block depth and traversal, so those blocks read the very
    stream the weight plan was sized for; with ``cut``, also Vela's block cut smaller where the op
    computes its whole OFM in a few blocks (``_cut_block_configs``)."""
    if op.weights is not None:
        return _same_stream_alternatives(query_for(op, ofm_box=ofm_box), accel, cut=cut and ofm_box is None)
    q = query_for(op, ofm_box=ofm_box)
    found = least_padded_block_configs(q, accel)
    if op.copies_into_box:
        by_box = query_for(op, ofm_box=ofm_box, by_box=True)
        found = (*filter(None, [find_block_config(by_box, accel)]), *least_padded_block_configs(by_box, accel))
    return (*found, *(c for c in small_block_configs(q, accel) if c not in found))


@lru_cache(maxsize=65536)
def small_block_configs(q: BlockQuery, accel: Accelerator) -> tuple[BlockConfig, ...]:
    """Small fitting blocks: one micro-block high and two wide, or two high and four wide, each
    one micro-block deep or as deep as the OFM allows. An op without weights (a copy, a rescale, a
    pool) whose output stage is its bottleneck pays one block's input and output transfers to fill
    and drain its pipeline, so on a small map (a 16x16 copy: one 16x16 block has nothing to
    overlap) small blocks are the fastest, which Vela's scores (elements fetched per OFM element)
    never propose; the larger of the two sizes where each block's command overhead would bound a
    small block (a thin map written to DRAM)."""
    ub = accel.ofm_ublock
    deepest = round_up(min(q.ofm.c, accel.ofm_block_max.depth), ub.depth)
    shapes = ((ub.height, 2 * ub.width), (2 * ub.height, 4 * ub.width))
    found = (try_block_config(q, accel, Block(h, w, d), is_partkernel=False)
             for h, w in shapes for d in dict.fromkeys((ub.depth, deepest)))
    return tuple(dict.fromkeys(c for c in found if c is not None))


def choose_block_config(
    op: NpuOp, accel: Accelerator, *, ofm_box: Shape4D | None = None, resampling: Resampling | None = None,
    by_box: bool = False,
) -> BlockConfig:
    """Vela's block config for ``op`` producing ``ofm_box`` (default the whole OFM) on ``accel``
    (``by_box``: see ``query_for``).

    Raises ``NoBlockConfig`` if no block fits the shared buffer.
    """
    config = find_block_config(query_for(op, ofm_box=ofm_box, resampling=resampling, by_box=by_box), accel)
    if config is None:
        raise NoBlockConfig(f"no OFM block fits the shared buffer for '{op.name}' on {accel.name}")
    return config
