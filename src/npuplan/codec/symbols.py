"""What the weight codec codes for a stream of values, and with which parameters.

Format facts: values are coded as *palette values* ``2|w| + (w < 0)``; when zeros dominate, the
non-zero values and the lengths of the zero runs around them are two streams (``n + 1`` runs for
``n`` values); a palette of up to 32 values maps each to its index, other values are coded as
``palette value - direct offset + palette size``; indices are Golomb-Rice coded with divisor
``2**k``: plain (k 0..5, quotient at most 31), truncated (k 0..5, quotient at most 2) or
uncompressed (fixed width: the palette index width when every value is in the palette, else the
palette-value width when there is no palette); zero runs with k 0..3.

Choices (the format allows others; these follow ``npuplan.codec.size``'s size model):
zero runs when zeros are more than 4 times as common as any other value and the runs code in
fewer bits than the zeros as values (a stream of near-uniform 8-bit weights with a few hundred
padding zeros per output channel costs a run symbol per weight: a ninth bit); a palette of all the
values when there are at most 32, else of the 32 commonest when they are more than half; one
weight parameter and one zero-run parameter per stream, the fewest bits.
"""

from __future__ import annotations

import functools

import numpy as np

from npuplan.codec.segments import CHANGE_BITS, block_starts, cheapest_segments
from npuplan.records import record

MAX_WEIGHT = 255
MAX_INDEX = 511  # 9-bit indices; palette values 0..511 (weights -255..255)
PALETTE_ENTRIES = 32
MAX_DIRECT_OFFSET = 31
ZERO_RUN_RATIO = 4
MAX_DIVISOR_BITS = 5
MAX_QUOTIENT = 31
MAX_TRUNCATED_QUOTIENT = 2
MAX_ZERO_RUN_DIVISOR_BITS = 3
MIN_PALETTE_BITS = 2
_UNCOMPRESSED = 2 * (MAX_DIVISOR_BITS + 1)  # the parameter row after plain k 0..5, truncated k 0..5
_IMPOSSIBLE = float(1 << 50)


@record(eq=False)
class WeightParameter:
    """How indices are coded: divisor ``2**divisor_bits``, truncated (quotient at most 2), or
    ``uncompressed`` (fixed ``divisor_bits``-bit fields, no unary part)."""

    divisor_bits: int
    truncated: bool = False
    uncompressed: bool = False


@record(eq=False)
class StreamSymbols:
    """A stream as coded: weight ``indices`` (palette index or direct index of each coded value),
    ``zero_runs`` (``None`` without zero runs; else one more than the indices: before the first
    value, then after each), the palette (palette values), its entry width (bits), the direct
    offset, and the chosen parameters: the zero-run divisor bits per stretch of values
    (``zero_run_segments``: the index after the stretch, its divisor bits; the runs after a
    stretch's values, and the first run, take its divisor)."""

    indices: np.ndarray
    zero_runs: np.ndarray | None
    palette: tuple[int, ...]
    palette_bits: int
    direct_offset: int
    weight: WeightParameter
    zero_run_segments: tuple[tuple[int, int], ...]


def palette_values(values: np.ndarray) -> np.ndarray:
    """``2|w| + (w < 0)`` of each signed value (int16, for values -255..255)."""
    v = values.astype(np.int16, copy=False)
    return (np.abs(v) << 1) | (v < 0)


@functools.lru_cache(maxsize=1)
def _palette_value_of_weight() -> np.ndarray:
    """The palette value of each weight -255..255 (at ``weight + 255``)."""
    table = palette_values(np.arange(-MAX_WEIGHT, MAX_WEIGHT + 1))
    table.flags.writeable = False
    return table


def _bits(value: int) -> int:
    return max(MIN_PALETTE_BITS, int(value).bit_length())


@record(eq=False)
class _Palette:
    entries: tuple[int, ...]
    bits: int
    direct_offset: int
    uncompressed_bits: int  # 0: uncompressed indices not possible


def _palette(hist: np.ndarray) -> _Palette:
    """The palette for palette-value histogram ``hist`` (at least one value)."""
    used = np.flatnonzero(hist)
    counts = hist[used]
    ranked = used[np.argsort(-(counts * (MAX_INDEX + 1) + used))]  # count, then value, descending (keys distinct)
    if used.size <= PALETTE_ENTRIES:
        entries = tuple(ranked.tolist()) + ((0,) if used.size == 1 else ())  # no 1-entry palette
        return _Palette(entries, _bits(max(entries)), 0, (len(entries) - 1).bit_length())
    largest = int(used[-1])
    room = min(PALETTE_ENTRIES, MAX_INDEX - largest)  # direct indices stay within 9 bits
    room = 0 if room == 1 else room
    direct_offset = min(int(used[0]), MAX_DIRECT_OFFSET)
    top = ranked[:room]
    if room and int(hist[top].sum()) > int(counts.sum()) // 2:
        entries = tuple(top.tolist())
        return _Palette(entries, _bits(max(entries)), direct_offset, 0)
    return _Palette((), _bits(largest), direct_offset, _bits(largest))


def _index_table(palette: _Palette) -> np.ndarray:
    """Index of each palette value 0..511 (direct beyond the palette)."""
    table = np.arange(MAX_INDEX + 1, dtype=np.int32) - palette.direct_offset + len(palette.entries)
    entries = np.array(palette.entries, dtype=np.int64)
    table[entries[::-1]] = np.arange(entries.size)[::-1]  # a repeated (filler) entry: the first wins
    return table


@functools.lru_cache(maxsize=1)
def _weight_costs() -> np.ndarray:
    """Bits of each index 0..511 (columns) under plain k 0..5 then truncated k 0..5 (rows)."""
    index = np.arange(MAX_INDEX + 1)
    k = np.arange(MAX_DIVISOR_BITS + 1)[:, None]
    q = index[None, :] >> k
    plain = np.where(q <= MAX_QUOTIENT, q + 1 + k, _IMPOSSIBLE)
    truncated = np.where(q <= MAX_TRUNCATED_QUOTIENT, np.minimum(q + 1, 2) + k, _IMPOSSIBLE)
    table = np.concatenate([plain, truncated]).astype(np.float64)
    table.flags.writeable = False
    return table


def _weight_parameter(index_hist: np.ndarray, symbols: int, uncompressed_bits: int) -> tuple[WeightParameter, float]:
    """The cheapest parameter for indices with histogram ``index_hist`` (512 counts, float) and
    the bits it codes them in."""
    costs = list(_weight_costs() @ index_hist)
    costs.append(uncompressed_bits * float(symbols) if uncompressed_bits else _IMPOSSIBLE)
    best = int(np.argmin(costs))
    if best == _UNCOMPRESSED:
        return WeightParameter(uncompressed_bits, uncompressed=True), costs[best]
    return WeightParameter(best % (MAX_DIVISOR_BITS + 1), truncated=best > MAX_DIVISOR_BITS), costs[best]


def _zero_run_divisors(runs: np.ndarray, budget: float) -> tuple[tuple[tuple[int, int], ...], float] | None:
    """The cheapest zero-run divisor bits per stretch of values (``cheapest_segments``; run ``j + 1``,
    after value ``j``, goes with value ``j``, the first run with value 0) and the bits the runs
    take so, changes included; None when they cannot take fewer than ``budget`` bits (each block
    at its cheapest divisor, no change paid, already takes that many: the search is not run)."""
    count = runs.size - 1
    k = np.arange(MAX_ZERO_RUN_DIVISOR_BITS + 1)[:, None]
    bits = (runs >> k) + 1 + k  # rows: each divisor
    bits[:, 1] += bits[:, 0]
    starts = block_starts(count)
    block_bits = np.add.reduceat(bits[:, 1:], starts, axis=1).astype(np.float64)
    if block_bits.min(axis=0).sum() >= budget:
        return None
    segments = cheapest_segments(block_bits, starts, count)
    firsts = [0] + [end for end, _ in segments]
    total = sum(int(bits[d, 1 + first:1 + end].sum()) for first, (end, d) in zip(firsts, segments))
    return segments, float(total + CHANGE_BITS * (len(segments) - 1))


def _zero_runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the non-zero values are and the zero runs around them (an all-zero stream codes its
    first zero as a value)."""
    at = np.flatnonzero(values)
    if not at.size:
        return np.zeros(1, dtype=np.int64), np.array([0, values.size - 1], dtype=np.int64)
    edges = np.concatenate(([-1], at, [values.size]))
    return at, edges[1:] - edges[:-1] - 1


def stream_symbols(values: np.ndarray) -> StreamSymbols:
    """The symbols and parameters coding ``values`` (a non-empty 1-D array of weights -255..255)."""
    shifted = values + MAX_WEIGHT  # 0..510 (in the values' own type: no wider copy)
    try:
        by_weight = np.bincount(shifted, minlength=2 * MAX_WEIGHT + 1)  # the range checked on the way
    except ValueError:  # a value below -255
        by_weight = np.zeros(0, dtype=np.int64)
    if by_weight.size != 2 * MAX_WEIGHT + 1:  # one beyond 255, or below -255
        raise ValueError("weight stream values must lie in -255..255")
    hist = np.zeros(MAX_INDEX + 1, dtype=np.int64)
    hist[_palette_value_of_weight()] = by_weight
    plain = _coding(hist)
    if int(hist[0]) <= ZERO_RUN_RATIO * int(hist[1:].max()):
        return _symbols(plain, shifted, None, ((values.size, 0),))
    at, runs = _zero_runs(values)
    with_runs = hist.copy()
    with_runs[0] = int(int(hist[0]) == values.size)  # an all-zero stream codes one zero as a value
    coding = _coding(with_runs)
    divisors = _zero_run_divisors(runs, plain.bits - coding.bits)  # whole numbers of bits: exact
    if divisors is not None and coding.bits + divisors[1] < plain.bits:
        return _symbols(coding, shifted[at], runs, divisors[0])
    return _symbols(plain, shifted, None, ((values.size, 0),))


@record(eq=False)
class _Coding:
    """How values with a histogram are coded: palette, index of each palette value, weight
    parameter, and the bits of the palette entries and the weight symbols (headers aside)."""

    palette: _Palette
    table: np.ndarray
    weight: WeightParameter
    bits: float


def _coding(hist: np.ndarray) -> _Coding:
    """The coding of values with palette-value histogram ``hist`` (zeros left out when coded as runs)."""
    palette = _palette(hist)
    table = _index_table(palette)
    index_hist = np.bincount(np.clip(table, 0, MAX_INDEX), weights=hist, minlength=MAX_INDEX + 1)  # unused: any
    weight, weight_bits = _weight_parameter(index_hist, int(hist.sum()), palette.uncompressed_bits)
    return _Coding(palette, table, weight, weight_bits + len(palette.entries) * palette.bits)


def _symbols(coding: _Coding, shifted: np.ndarray, runs: np.ndarray | None,
             segments: tuple[tuple[int, int], ...]) -> StreamSymbols:
    """``shifted`` (the coded values + 255) so coded, with ``runs`` the zero runs around them
    (``None``: zeros coded as values) and their divisor bits by stretch."""
    palette = coding.palette
    if palette.entries:
        indices = coding.table[_palette_value_of_weight()][shifted]
    else:  # no palette: an index is its palette value less the direct offset (arithmetic beats a gather)
        indices = palette_values(shifted - MAX_WEIGHT) - np.int16(palette.direct_offset)
    return StreamSymbols(indices=indices, zero_runs=runs, palette=palette.entries, palette_bits=palette.bits,
                         direct_offset=palette.direct_offset, weight=coding.weight, zero_run_segments=segments)
