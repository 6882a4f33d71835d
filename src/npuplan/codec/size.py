"""The size of one weight stream as the NPU's weight codec codes it, from a histogram of its values.

Format facts the estimate follows (the codec's stream layout, not its search):

- values are coded as *palette values* ``2|w| + (w < 0)`` (so 1 -> 2, -1 -> 3, 2 -> 4); when zero
  is more than 4 times as common as any other value the stream alternates between the non-zero
  values and the lengths of the zero runs between them (``n + 1`` runs for ``n`` values);
- a palette of up to 32 of the commonest values (used when it covers more than half of them) maps
  each to its rank; other values are coded directly, offset past the palette and the unused
  values around zero; with every value in the palette an uncompressed index is also possible;
- each symbol is Golomb-Rice coded: quotient ``v >> k`` in unary, then ``k`` remainder bits, with
  ``k`` 0..5 (quotient at most 31), a truncated variant (quotient at most 2, ``min(q + 1, 2)``
  unary bits) or uncompressed; zero runs with ``k`` 0..3;
- a slice header of 23 bits, the first one also 13 bits of palette header and the palette
  entries; unary bits travel in chunks of 12 (zero runs: 12, or 8 when ``k`` is 3), the last one
  of each stream padded; a 3-bit end marker, then zeros to a whole 16 bytes.

The codec searches its parameters along the stream and may cut it into several slices; here one
parameter is chosen per stream, except that a long run of padding zeros may get one of its own
(what the codec's search does when the saving pays for two parameter changes).
"""

from __future__ import annotations

import functools

import numpy as np

from npuplan.codec.weight_order import StreamPadding, UnitRuns

PALETTE_VALUES = 511  # palette values 0..510: weights -255..255
PALETTE_ENTRIES = 32
ZERO_RUN_RATIO = 4
MAX_DIVISOR_BITS = 5
MAX_QUOTIENT = 31
MAX_TRUNCATED_QUOTIENT = 2
MAX_ZERO_RUN_DIVISOR_BITS = 3
SLICE_HEADER_BITS = 23
PALETTE_HEADER_BITS = 13
END_BITS = 3
UNARY_CHUNK_BITS = 12
MAX_SLICE_VALUES = 32767
SEARCH_CHANGE_BITS = 40  # what the codec's search charges a parameter change
CHANGE_BITS = 40  # what a change costs: a slice header and two part-filled chunks
STREAM_ALIGN_BITS = 128
_K_COUNT = MAX_ZERO_RUN_DIVISOR_BITS + 1
IMPOSSIBLE = 1 << 40


@functools.lru_cache(maxsize=None)
def _code_tables() -> np.ndarray:
    """Bits (rows 0..11) and unary chunk positions (rows 12..23) of each index ``0..542`` under
    each weight parameter (k 0..5, then truncated k 0..5): one table, so one gather sizes both."""
    index = np.arange(PALETTE_VALUES + PALETTE_ENTRIES, dtype=np.int64)
    k = np.arange(MAX_DIVISOR_BITS + 1, dtype=np.int64)[:, None]
    q = index[None, :] >> k
    plain = np.where(q <= MAX_QUOTIENT, q + 1 + k, IMPOSSIBLE)
    truncated = np.where(q <= MAX_TRUNCATED_QUOTIENT, np.minimum(q + 1, 2) + k, IMPOSSIBLE)
    positions = np.concatenate([q // 2 + 1, np.ones_like(q)])
    bits = np.concatenate([plain, truncated])
    # as floats (exact: small integers) so the sums are BLAS products
    table = np.concatenate([bits, positions]).astype(np.float64)
    table.flags.writeable = False
    return table


def palette_histogram(values: np.ndarray) -> np.ndarray:
    """Counts of each palette value ``0, 1, ...`` (up to the largest present) among the signed
    integer ``values``."""
    v = np.asarray(values, dtype=np.int64).ravel()
    return np.bincount(np.where(v < 0, -2 * v + 1, 2 * v), minlength=1)


def _value_bits(dense: np.ndarray, used: np.ndarray, total: int) -> int:
    """Bits of the palette (entries) and of the value symbols with palette-value histogram
    ``dense`` (non-zero at ``used``, ``total`` in all; zero left out when zero runs are coded), at
    the best single parameter, with the unary padding of the last chunk.

    A palette of the commonest values (by count, then larger value first, as the codec sorts them)
    maps each to its rank; the others are coded directly past it and the unused values around zero
    (so a direct value's index is its palette value plus a constant: a contiguous run of the code
    table's columns). With every value in the palette an uncompressed index is possible, as it is
    without a palette.
    """
    table = _code_tables()
    counts = dense[used]
    if used.size <= PALETTE_ENTRIES:  # all in the palette: only the ranks' counts matter
        ranked = np.sort(counts)[::-1].astype(np.float64)
        size = max(int(used.size), 2)
        header = size * max(2, int(used[-1]).bit_length())
        return header + _best_code(table[:, :used.size] @ ranked, total, max(1, (size - 1).bit_length()))
    largest = int(used[-1])
    room = min(PALETTE_ENTRIES, PALETTE_VALUES - largest)
    room = 0 if room == 1 else room
    direct_offset = min(int(used[0]), 31)
    if room:
        # the palette: the ``room`` largest of (count, value), as the codec's sort ranks them
        top = np.argpartition(counts * (PALETTE_VALUES + 1) + used, used.size - room)[used.size - room:]
        if int(counts[top].sum()) > total // 2:
            rest = dense.astype(np.float64)
            rest[used[top]] = 0.0
            shift = room - direct_offset  # a direct value's index: its palette value + shift
            ranked = np.sort(counts[top])[::-1].astype(np.float64)
            sums = table[:, shift:shift + rest.size] @ rest + table[:, :room] @ ranked
            return room * max(2, int(used[top].max()).bit_length()) + _best_code(sums, total, 0)
    sums = table[:, :dense.size - direct_offset] @ dense[direct_offset:].astype(np.float64)
    return _best_code(sums, total, max(2, largest.bit_length()))


def _best_code(sums: np.ndarray, total: int, uncompressed_bits: int) -> int:
    """The fewest bits over the parameters (``sums``: ``_code_tables`` summed over the symbols,
    bits then unary positions) and uncompressed indices of ``uncompressed_bits`` (0: not possible),
    with the last unary chunk's padding."""
    params = len(sums) // 2
    best = int(sums[:params].argmin())
    cost = int(sums[best])
    if uncompressed_bits and uncompressed_bits * total <= cost:
        return uncompressed_bits * total
    return cost + (-int(sums[params + best]) % UNARY_CHUNK_BITS)


@functools.lru_cache(maxsize=1 << 14)
def _padding_run_bits(padding: StreamPadding) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per kind of unit and divisor k 0..3 (``[unit kind, k]``), the bits the padding's runs add
    beyond ``1 + k`` a run, as the codec's search reckons them and as they are coded; and each kind's
    weights (all its units). Depends on the padding alone, so it is memoised.

    Within a unit, the search gives a long padding run a divisor of its own where it reckons that
    pays for two changes; the change lands one run late, so the run is still coded with the
    surrounding divisor and only the change's slice header and part-filled chunks are added. The
    stream's last run is left out: it is coded apart (``_zero_run_bits``).
    """
    ks = np.arange(MAX_ZERO_RUN_DIVISOR_BITS + 1)
    units = padding.units or (UnitRuns(1, padding.real_values, padding.run_lengths, padding.run_counts),)
    last = padding.last_unit if padding.units else 0
    reckoned = np.zeros((len(units), ks.size))
    coded = np.zeros((len(units), ks.size))
    for n, unit in enumerate(units):
        lengths = np.asarray(unit.run_lengths, dtype=np.int64)
        counts = unit.count * np.asarray(unit.run_counts, dtype=np.int64)
        if n == last and padding.final_run:
            counts[np.searchsorted(lengths, padding.final_run)] -= 1
        if not lengths.size:
            continue
        at_k = lengths[None, :] >> ks[:, None]
        at_max = (lengths >> MAX_ZERO_RUN_DIVISOR_BITS)[None, :] + (MAX_ZERO_RUN_DIVISOR_BITS - ks)[:, None]
        switched = at_k > at_max + 2 * SEARCH_CHANGE_BITS
        reckoned[n] = np.where(switched, at_max + 2 * SEARCH_CHANGE_BITS, at_k) @ counts
        coded[n] = at_k @ counts + CHANGE_BITS * (switched @ counts)
    weights = np.array([u.count * u.real_values for u in units], dtype=np.float64)
    for table in (reckoned, coded, weights):
        table.flags.writeable = False
    return reckoned, coded, weights


def _zero_run_bits(nonzero: int, natural_zeros: int, real_values: int, padding: StreamPadding) -> int:
    """Bits of the ``nonzero + 1`` zero runs: the padding's runs as they are, the zeros among the
    weights spread over all runs as independent draws (each run geometric).

    The codec's search picks the divisor along the stream: per kind of unit (``StreamPadding.units``)
    the divisor it reckons best, if that beats one divisor for all by more than the changes between
    kinds cost; the stream's last run gets its own divisor, a change the search takes as free.
    """
    p = natural_zeros / real_values if real_values else 0.0
    share = nonzero / real_values if real_values else 0.0
    # bits of a run at each divisor k besides its padding: 1 + k, and its natural zeros' quotient
    if p < 1.0:
        per_run = [1 + k + p ** (1 << k) / (1.0 - p ** (1 << k)) for k in range(_K_COUNT)]
    else:
        per_run = [1 + k + natural_zeros / max(nonzero, 1) / (1 << k) for k in range(_K_COUNT)]
    pad_reckoned, pad_coded, weights = _padding_run_bits(padding)
    if len(weights) == 1 or not padding.units:  # one kind of unit: one divisor (the common case)
        own = share * (float(weights[0]) if padding.units else real_values)
        pads = pad_reckoned[0].tolist()
        reckoned_one = [own * per_run[k] + pads[k] for k in range(_K_COUNT)]
        k = reckoned_one.index(min(reckoned_one))
        cost = own * per_run[k] + float(pad_coded[0][k])
    else:
        own_bits = np.outer(np.asarray(weights) * share, per_run)
        reckoned, coded = own_bits + pad_reckoned, own_bits + pad_coded
        totals = reckoned.sum(axis=0)
        one_k = int(totals.argmin())
        own_k = reckoned.argmin(axis=1)
        changes = sum(n for a, b, n in padding.changes if own_k[a] != own_k[b])
        if reckoned.min(axis=1).sum() + SEARCH_CHANGE_BITS * changes < totals[one_k]:
            cost = float(coded[np.arange(len(weights)), own_k].sum()) + CHANGE_BITS * changes
            k = int(own_k[padding.last_unit])
        else:
            cost, k = float(coded[:, one_k].sum()), one_k
    final = padding.final_run
    if final:
        best = min((final >> j) + j for j in range(MAX_ZERO_RUN_DIVISOR_BITS + 1))
        if best - k < final >> k:  # the free change at the last run
            cost += best - k + CHANGE_BITS
            k = next(j for j in range(MAX_ZERO_RUN_DIVISOR_BITS + 1) if (final >> j) + j == best)
        else:
            cost += final >> k
    chunk = 8 if k == MAX_ZERO_RUN_DIVISOR_BITS else UNARY_CHUNK_BITS
    return int(round(cost)) + 1 + chunk // 2  # + the run before the first weight


def stream_bytes(counts: np.ndarray, padding: StreamPadding) -> int:
    """Bytes (a multiple of 16) of the codec's stream for real values with palette-value histogram
    ``counts`` (``palette_histogram``) walked with the zeros of ``padding`` added: zero runs when
    zero is more than 4 times as common as any other value and they take fewer bits than the zeros
    coded as values (``codec.symbols`` chooses so)."""
    used = np.flatnonzero(counts)
    real = int(counts.sum())
    if real + padding.zeros == 0:
        return 0
    zeros = int(counts[0]) + padding.zeros
    has_zero = used.size > 0 and used[0] == 0
    nonzero = used[1:] if has_zero else used
    dense = counts.copy()
    if zeros:
        dense[0] = zeros
    bits = _symbol_bits(dense, used if has_zero or not zeros else np.concatenate(([0], used)))
    if zeros > ZERO_RUN_RATIO * int(counts[nonzero].max(initial=0)):
        bits = min(bits, _run_bits(counts, nonzero, real, padding))
    bits += END_BITS
    return -(-bits // STREAM_ALIGN_BITS) * STREAM_ALIGN_BITS // 8


def _symbol_bits(dense: np.ndarray, used: np.ndarray) -> int:
    """Bits of the slice headers, palette and symbols of values with histogram ``dense`` (non-zero at
    ``used``)."""
    n_symbols = int(dense.sum())
    bits = SLICE_HEADER_BITS + PALETTE_HEADER_BITS + _value_bits(dense, used, n_symbols)
    return bits + SLICE_HEADER_BITS * ((n_symbols - 1) // MAX_SLICE_VALUES)


def _run_bits(counts: np.ndarray, nonzero: np.ndarray, real: int, padding: StreamPadding) -> int:
    """``_symbol_bits`` of the non-zero values and the bits of the zero runs around them."""
    dense = counts.copy()
    dense[0], used = 0, nonzero
    if not used.size:  # an all-zero stream still codes one value
        dense[0], used = 1, np.zeros(1, dtype=np.int64)
    return _symbol_bits(dense, used) + _zero_run_bits(int(dense.sum()), int(counts[0]), real, padding)
