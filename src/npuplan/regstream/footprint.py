"""Byte ranges a feature-map access touches, as arrays of half-open ``[start, end)`` intervals.

Rows below ``height_0`` come from tile 0 (base 0), the rest from tile 2 (base 2, its own row 0):
a rolling buffer's wrap. NHWC rows are one interval when the row is dense in depth, else one per
column; NHCWB16 rows are one interval per 16-channel brick, or one per column and brick when the
last brick is partial (its other channels are never read or written).

The memory model reads and writes the same bytes through ``lattices``: at most four strided views
of a region's arrays, so a depth slice of a deep feature map costs its own bytes, not its span's;
``intervals`` and ``mask`` list them one by one (the reference the tests check the views against).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from npuplan.records import record
from npuplan.regstream.events import FeatureMapAccess


def _tiles(fm: FeatureMapAccess) -> tuple[FeatureMapAccess, FeatureMapAccess] | None:
    """An access reaching the right tiles (its columns from ``width_0`` on, from tile 1 down to row
    ``height_1``, tile 3 below) as two accesses of tiles 0 and 2 each: its left and right columns;
    None when it stays in tiles 0 and 2."""
    if fm.width_0 is None or fm.height_1 is None or fm.width_0 >= fm.width:
        return None
    left = replace(fm, width=fm.width_0, height_1=None, width_0=None)
    right = replace(fm, bases=(fm.bases[1], 0, fm.bases[3], 0), height_0=fm.height_1, width=fm.width - fm.width_0,
                    height_1=None, width_0=None)
    return left, right


def _steps(count: int, stride: int) -> tuple[int, int]:
    """The lowest and highest of ``i * stride`` for ``i < count`` (a stride may be negative)."""
    last = (count - 1) * stride
    return min(0, last), max(0, last)


def fm_span(fm: FeatureMapAccess) -> tuple[int, int]:
    """The ``span`` of ``fm``'s intervals from its registers alone (bases unsigned, strides signed:
    Vela walks a reversed axis with a negative stride): to check it against its region before
    listing runs or building a mask over it."""
    parts = _tiles(fm)
    if parts is not None:
        spans = [fm_span(part) for part in parts]
        return min(lo for lo, _ in spans), max(hi for _, hi in spans)
    e = fm.element_bytes
    if fm.nhcwb16:
        bricks = -(-fm.depth // 16)
        last = fm.depth - 16 * (bricks - 1)  # channels in the last brick
        ends = [(bricks - 1) * fm.stride_c + last * e]
        if bricks > 1:  # brick 0 and the last whole brick are whole; the ends are linear in the brick
            ends += [16 * e, (bricks - 2) * fm.stride_c + 16 * e]
        low_c, high_c = _steps(bricks, fm.stride_c)[0], max(ends)
    else:
        low_c, high_c = 0, fm.depth * e
    low_x, high_x = _steps(fm.width, fm.stride_x)
    top = min(fm.height, fm.height_0)
    tiles = [(fm.bases[0], top)] + ([(fm.bases[2], fm.height - top)] if fm.height > top else [])
    lows, highs = zip(*((base + a, base + b) for base, rows in tiles for a, b in [_steps(rows, fm.stride_y)]))
    return min(lows) + low_x + low_c, max(highs) + high_x + high_c


def _row_bytes(fm: FeatureMapAccess) -> int | None:
    """The bytes of one row when every row of ``fm`` is one contiguous run (its columns and bricks
    each following on from the last) and its rows are one tile (or tile 2 continues tile 0);
    None otherwise."""
    e = fm.element_bytes
    if fm.nhcwb16:
        if fm.depth % 16:
            return None
        brick = (fm.width - 1) * fm.stride_x + 16 * e
        bricks = fm.depth // 16
        if bricks > 1 and fm.stride_c != brick:
            return None
        row = (bricks - 1) * fm.stride_c + brick
    else:
        run = fm.depth * e
        if fm.width > 1 and fm.stride_x != run:
            return None
        row = (fm.width - 1) * fm.stride_x + run
    if fm.height > fm.height_0 and fm.bases[2] != fm.bases[0] + fm.height_0 * fm.stride_y:
        return None
    return row


def regular(fm: FeatureMapAccess) -> tuple[int, int, np.ndarray | None] | None:
    """``(lo, hi, mask)`` of ``fm`` from its layout alone when each row is one run and the rows are
    a fixed stride apart (mask None: the rows follow on from each other, every byte of the span);
    None for any other layout (then ``intervals`` and ``mask`` say which bytes)."""
    if _tiles(fm) is not None:
        return None
    row = _row_bytes(fm)
    if row is None:
        return None
    lo = fm.bases[0]
    hi = lo + (fm.height - 1) * fm.stride_y + row
    if fm.height == 1 or fm.stride_y == row:
        return lo, hi, None
    if fm.stride_y < row:
        return None  # rows overlapping, or going down in memory
    rows = np.zeros((fm.height, fm.stride_y), dtype=bool)
    rows[:, :row] = True
    return lo, hi, rows.reshape(-1)[:hi - lo]


def intervals(fm: FeatureMapAccess) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ends)`` byte offsets in ``fm.region`` of every interval ``fm`` covers."""
    parts = _tiles(fm)
    if parts is not None:
        pieces = [intervals(part) for part in parts]
        return np.concatenate([a for a, _ in pieces]), np.concatenate([b for _, b in pieces])
    rows = np.arange(fm.height, dtype=np.int64)
    top = rows < fm.height_0
    row_base = np.where(top, fm.bases[0] + rows * fm.stride_y, fm.bases[2] + (rows - fm.height_0) * fm.stride_y)
    e = fm.element_bytes
    if fm.nhcwb16:
        bricks = np.arange(-(-fm.depth // 16), dtype=np.int64)
        if fm.depth % 16 == 0:  # whole bricks: each row of a brick is one run
            starts = (row_base[:, None] + bricks[None, :] * fm.stride_c).reshape(-1)
            return starts, starts + (fm.width - 1) * fm.stride_x + 16 * e
        # a partial last brick: its channels at every column, one run each (the rest is never touched)
        depth_in = np.minimum(16, fm.depth - 16 * bricks)
        cols = np.arange(fm.width, dtype=np.int64) * fm.stride_x
        starts = (row_base[:, None, None] + bricks[None, :, None] * fm.stride_c + cols[None, None, :]).reshape(-1)
        lengths = np.broadcast_to((depth_in * e)[None, :, None], (fm.height, bricks.size, fm.width)).reshape(-1)
        return starts, starts + lengths
    run = fm.depth * e
    if fm.stride_x == run or fm.width == 1:
        return row_base, row_base + (fm.width - 1) * fm.stride_x + run
    cols = np.arange(fm.width, dtype=np.int64) * fm.stride_x
    starts = (row_base[:, None] + cols[None, :]).reshape(-1)
    return starts, starts + run


def span(starts: np.ndarray, ends: np.ndarray) -> tuple[int, int]:
    """The smallest ``[lo, hi)`` holding every interval."""
    return int(starts.min()), int(ends.max())


def mask(starts: np.ndarray, ends: np.ndarray, lo: int, hi: int) -> np.ndarray | None:
    """Boolean mask over ``[lo, hi)`` (the ``span``) of the bytes the intervals cover; None when
    they cover every byte of it (a dense feature map: no mask to build or apply)."""
    if starts.size <= 1 or bool(np.array_equal(starts[1:], ends[:-1])):
        return None  # one run, or runs each starting where the one before ends
    order = np.argsort(starts, kind="stable")
    first, last = starts[order] - lo, ends[order] - lo
    if first.size <= 1 or bool(np.all(first[1:] <= np.maximum.accumulate(last)[:-1])):
        return None  # no gap between lo (the first start) and hi (the furthest end)
    if bool(np.all(first[1:] >= last[:-1])):  # disjoint: alternate runs of gap and covered bytes
        gaps = first - np.concatenate(([0], last[:-1]))
        return np.repeat(np.tile(np.array([False, True]), first.size), np.stack([gaps, last - first], 1).reshape(-1))
    diff = np.zeros(hi - lo + 1, dtype=np.int32)
    np.add.at(diff, first, 1)
    np.add.at(diff, last, -1)
    return np.cumsum(diff[:-1]) > 0


@record
class Lattice:
    """Runs of ``run`` bytes starting at ``start + sum(i[k] * strides[k])`` for every ``i[k] <
    counts[k]``: a feature map's rows, columns or bricks as one strided view of a byte array."""

    start: int
    counts: tuple[int, ...]
    strides: tuple[int, ...]
    run: int

    def view(self, data: np.ndarray, origin: int = 0) -> np.ndarray:
        """The bytes of ``data`` (a region's 1-D array, any item size, its element 0 the region's
        byte ``origin``) the runs cover, as a strided view: reads and writes through it touch those
        bytes only."""
        item = data.itemsize
        return np.ndarray((*self.counts, self.run), data.dtype, data, (self.start - origin) * item,
                          (*(s * item for s in self.strides), item))


def lattices(fm: FeatureMapAccess) -> tuple[Lattice, ...]:
    """The bytes ``intervals(fm)`` lists, as strided views (tile 0 and tile 2 of a rolling
    buffer's rows, each whole bricks and a partial last brick: at most four): what the memory model
    reads and writes without a mask over the span; twice as many with the right tiles in use)."""
    parts = _tiles(fm)
    if parts is not None:
        return lattices(parts[0]) + lattices(parts[1])
    top = min(fm.height, fm.height_0)
    tiles = [(fm.bases[0], top)] + ([(fm.bases[2], fm.height - top)] if fm.height > top else [])
    e = fm.element_bytes
    out = []
    for base, rows in tiles:
        if fm.nhcwb16:
            bricks, last = -(-fm.depth // 16), fm.depth % 16
            brick_row = (fm.width - 1) * fm.stride_x + 16 * e
            if not last:  # whole bricks: each row of a brick is one run
                out.append(Lattice(base, (rows, bricks), (fm.stride_y, fm.stride_c), brick_row))
                continue
            if bricks > 1:  # every column of a whole brick one run, the partial last brick's channels another
                strides = (fm.stride_y, fm.stride_c, fm.stride_x)
                out.append(Lattice(base, (rows, bricks - 1, fm.width), strides, 16 * e))
            partial = base + (bricks - 1) * fm.stride_c
            out.append(Lattice(partial, (rows, fm.width), (fm.stride_y, fm.stride_x), last * e))
        elif fm.stride_x == fm.depth * e or fm.width == 1:  # dense rows
            out.append(Lattice(base, (rows,), (fm.stride_y,), (fm.width - 1) * fm.stride_x + fm.depth * e))
        else:
            out.append(Lattice(base, (rows, fm.width), (fm.stride_y, fm.stride_x), fm.depth * e))
    return tuple(out)
