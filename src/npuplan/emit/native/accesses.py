"""The memory an operation reads and writes, as (region, start, end) byte ranges (end exclusive).

A feature map is up to four tiles (tile 0 top left, 1 right of it, 2 below it, 3 below 1); its
range in a tile runs from the first to the last element the tile holds. The shared buffer is a
region of its own (``hardware.SHRAM_REGION``): a block operation writes its banks, a table lookup
reads its LUT there.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from npuplan.emit.native.hardware import SHRAM_REGION, NativeArch, available_shram_banks
from npuplan.emit.native.view import Fm
from npuplan.units import BRICK_DEPTH

Span = tuple[int, int, int]  # region, start, end (bytes, end exclusive)
LUT_BYTES = 2048  # the lookup tables' window in the shared buffer
LUT_SLOT_BYTES = 256  # one of its eight table slots


def address(fm: Fm, y: int, x: int, c: int) -> int:
    """The byte address of element (y, x, c) of ``fm``, in the tile that holds it."""
    tile = 0
    if x >= fm.width_0:
        x -= fm.width_0
        tile = 1
        if y >= fm.height_1:
            y -= fm.height_1
            tile = 3
    elif y >= fm.height_0:
        y -= fm.height_0
        tile = 2
    e = fm.element_bytes
    step_x = BRICK_DEPTH * e if fm.nhcwb16 else fm.stride_x
    step_c = fm.stride_c if fm.nhcwb16 else BRICK_DEPTH * e
    return fm.bases[tile] + y * fm.stride_y + x * step_x + (c // BRICK_DEPTH) * step_c + (c % BRICK_DEPTH) * e


def _span(fm: Fm, y0: int, x0: int, c0: int, y1: int, x1: int, c1: int) -> Span:
    """From element (y0, x0, c0) to (y1, x1, c1) inclusive, both in one tile (with a negative
    stride, a mirrored view's, from the lowest of its corners' addresses to the highest)."""
    if fm.stride_y < 0 or fm.stride_x < 0:
        corners = [address(fm, y, x, c) for y in (y0, y1) for x in (x0, x1) for c in (c0, c1)]
        return fm.region, min(corners), max(corners) + fm.element_bytes
    start = address(fm, y0, x0, c0)
    return fm.region, start, address(fm, y1, x1, c1) + fm.element_bytes


def tile_spans(fm: Fm) -> list[Span]:
    """One span per tile in use."""
    h, w, d = fm.height, fm.width, fm.depth
    h0, h1, w0 = fm.height_0, fm.height_1, fm.width_0
    if h <= h0 and w <= w0 and min(fm.stride_y, fm.stride_x) >= 0:  # one tile (most maps): its last element
        e, c = fm.element_bytes, d - 1
        step_x, step_c = (BRICK_DEPTH * e, fm.stride_c) if fm.nhcwb16 else (fm.stride_x, BRICK_DEPTH * e)
        base = fm.bases[0]
        end = base + (h - 1) * fm.stride_y + (w - 1) * step_x + (c // BRICK_DEPTH) * step_c + (c % BRICK_DEPTH + 1) * e
        return [(fm.region, base, end)]
    out = [_span(fm, 0, 0, 0, min(h, h0) - 1, min(w, w0) - 1, d - 1)]
    right, below = w > w0, h > h0
    if right:
        out.append(_span(fm, 0, w0, 0, min(h, h1) - 1, w - 1, d - 1))
    if below:
        out.append(_span(fm, h0, 0, 0, h - 1, min(w, w0) - 1, d - 1))
    if right and below:
        out.append(_span(fm, h1, w0, 0, h - 1, w - 1, d - 1))
    return out


def _rows(fm: Fm, y0: int, x0: int, c0: int, y1: int, x1: int, c1: int) -> list[Span]:
    return [_span(fm, y, x0, c0, y, x1, c1) for y in range(y0, y1 + 1)]


def area_spans(fm: Fm, start: tuple[int, int, int], end: tuple[int, int, int]) -> list[Span]:
    """The rows of the box ``start``..``end`` (x, y, z; ``end`` inclusive and clipped to the map),
    one span per row and tile."""
    x0, y0, c0 = start
    x1, y1, c1 = min(end[0], fm.width - 1), min(end[1], fm.height - 1), min(end[2], fm.depth - 1)
    h0, h1, w0 = fm.height_0, fm.height_1, fm.width_0
    out: list[Span] = []
    if x0 < w0 and y0 < h0:
        out += _rows(fm, y0, x0, c0, min(y1, h0 - 1), min(x1, w0 - 1), c1)
    if x1 >= w0 and y0 < h1:
        out += _rows(fm, y0, max(x0, w0), c0, min(y1, h1 - 1), x1, c1)
    if x0 < w0 and y1 >= h0:
        out += _rows(fm, max(y0, h0), x0, c0, y1, min(x1, w0 - 1), c1)
    if x1 >= w0 and y1 >= h1:
        out += _rows(fm, max(y0, h1), max(x0, w0), c0, y1, x1, c1)
    return out


def any_overlap(a: list[Span], b: list[Span]) -> bool:
    """Whether a span of ``a`` and one of ``b`` share a byte of one region."""
    for ra, sa, ea in a:
        for rb, sb, eb in b:
            if ra == rb and sa < eb and sb < ea:
                return True
    return False


class Accesses(NamedTuple):
    """What one operation reads and writes (empty spans left out)."""

    reads: list[Span]
    writes: list[Span]

    def conflicts(self, other: "Accesses") -> bool:
        """True, anti and output dependencies: one writes what the other reads or writes."""
        return (any_overlap(self.writes, other.reads) or any_overlap(self.reads, other.writes)
                or any_overlap(self.writes, other.writes))


def _nonempty(spans: list[Span]) -> list[Span]:
    return [s for s in spans if s[1] != s[2]]


def dma_accesses(src: tuple[int, int, int], dst: tuple[int, int, int]) -> Accesses:
    """A DMA reads ``src`` and writes ``dst`` (region, address, length) for ``src``'s length."""
    return Accesses(_nonempty([(src[0], src[1], src[1] + src[2])]), _nonempty([(dst[0], dst[1], dst[1] + dst[2])]))


def lut_span(arch: NativeArch, slot: int, loaded: dict[int, int]) -> Span:
    """The shared-buffer bytes a lookup in table slot ``slot`` reads: the table loaded at that slot's
    address (``loaded``: the length of the table each DMA wrote there, by address), or up to the end of
    the window when no DMA of this stream loaded one. So the next op's table can be loaded into
    another slot while this op runs."""
    start = available_shram_banks(arch, True) * arch.shram_bank_bytes + slot * LUT_SLOT_BYTES
    end = available_shram_banks(arch, True) * arch.shram_bank_bytes + LUT_BYTES
    return SHRAM_REGION, start, min(start + loaded.get(start, end - start), end)


def block_accesses(arch: NativeArch, ifm: list[Span], ifm2: list[Span], ofm: list[Span], weights: Any,
                   lut: Span | None) -> Accesses:
    """A block operation reads its IFM(s) (``tile_spans``), weights and scales (``weights``:
    (region, address, length) tuples) and its table (``lut_span``); it writes its OFM and the
    shared-buffer banks it may use."""
    reads = ifm + ifm2 + [(r, a, a + n) for r, a, n in weights]
    if lut is not None:
        reads.append(lut)
    writes = ofm + [(SHRAM_REGION, 0, available_shram_banks(arch, lut is not None) * arch.shram_bank_bytes)]
    return Accesses(_nonempty(reads), _nonempty(writes))
