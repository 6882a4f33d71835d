"""A reader of the Ethos-U weight compression format: the values a stream decodes to.

The format facts it follows are the ones ``chunks`` and ``symbols`` document: slices with a 23-bit
header (zero-run divisor or 6: no zero runs, or 7: end of stream; value count - 1; weight divisor
or 7: uncompressed; truncated; new palette), a palette header (direct offset, size - 1, entry
width - 2, entries) on slices with a new palette, then the chunk steps.

Decoding is two passes per slice. Where a field lies depends on every field before it (the width
of a chunk's second unary field is the number of first-unary bits set; a step sends the remainders
of the symbols the step before ended), so a walk over the steps (``_walk``: a few table look-ups
per step of up to 12 symbols, in Python) finds each chunk's unary words and where each step's
remainders lie. The symbols then come out of those words and positions in vectorised numpy
(``_symbols``). A slice of uncompressed indices without zero runs has no steps to walk: its indices
are back to back.
"""

from __future__ import annotations


import numpy as np

from npuplan.records import record

NO_ZERO_RUNS = 6
END_OF_STREAM = 7
UNCOMPRESSED = 7
MAX_DIVISOR_BITS = 5
MAX_ZERO_RUN_DIVISOR_BITS = 3
BALANCE_LIMIT = 8
WEIGHT_CHUNK = 12  # positions of a weight chunk (and the width of its first unary field)
WIDE_UNCOMPRESSED_CHUNK = 8  # symbols of an uncompressed chunk wider than 5 bits
ZERO_RUN_CHUNK, ZERO_RUN_CHUNK_K3 = 12, 8  # positions of a zero-run chunk (k below 3, k = 3)
HEADER_BITS = 23
_WORD_BITS = 32  # a window read at a multiple of 32 bits holds 32 valid bits from any bit of that word
_POPCOUNT = [bin(n).count("1") for n in range(1 << WEIGHT_CHUNK)]
_POPCOUNTS = np.asarray(_POPCOUNT, dtype=np.int64)
_MASK = [(1 << n) - 1 for n in range(WEIGHT_CHUNK + 1)]


@record
class _Header:
    """One slice's header: zero-run divisor bits (6: none), value count, weight divisor bits (7:
    uncompressed), truncated, new palette."""

    zero_run_divisor: int
    count: int
    weight_divisor: int
    truncated: bool
    new_palette: bool

    @property
    def zero_runs(self) -> bool:
        return self.zero_run_divisor != NO_ZERO_RUNS

    @property
    def uncompressed(self) -> bool:
        return self.weight_divisor == UNCOMPRESSED


@record
class _Palette:
    entries: tuple[int, ...] = ()
    bits: int = 2
    direct_offset: int = 0

    @property
    def index_bits(self) -> int:
        """The width of an uncompressed index: a palette index, or without a palette a palette value."""
        return (len(self.entries) - 1).bit_length() if self.entries else self.bits


class _Bits:
    """A stream's bits for reading fields anywhere (least significant bit of byte 0 first).

    ``windows[i]`` holds bytes ``4i .. 4i + 7`` as one integer, so ``windows[p >> 5] >> (p & 31)``
    has the 32 bits from bit ``p`` on: the walk's reads are a list index and two operations."""

    def __init__(self, stream: bytes) -> None:
        self.size_bits = 8 * len(stream)
        padded = np.zeros(-(-len(stream) // 4) * 4 + 8, dtype=np.uint8)
        padded[:len(stream)] = np.frombuffer(stream, dtype=np.uint8)
        self.data = padded
        self._windows: list[int] | None = None

    @property
    def windows(self) -> list[int]:
        if self._windows is None:
            words = self.data.view("<u4").astype(np.uint64)
            self._windows = (words[:-1] | (words[1:] << np.uint64(32))).tolist()
        return self._windows

    def pieces(self, at: np.ndarray, width: int) -> np.ndarray:
        """The ``width``-bit fields (at most 24 bits) at bits ``at`` (inside the stream), as int64."""
        words = np.ndarray((self.data.size - 3,), dtype="<u4", buffer=self.data, strides=(1,))  # one per byte
        word = words[at >> 3].astype(np.int64)
        return (word >> (at & 7)) & ((1 << width) - 1)

    def field(self, position: int, bits: int) -> int:
        """The ``bits``-bit field (at most 32) at bit ``position``; ``ValueError`` past the end."""
        if position + bits > self.size_bits:
            raise ValueError(f"weight stream ends at byte {self.size_bits // 8}: field of {bits} bits at bit "
                             f"{position}")
        byte = position >> 3
        chunk = int.from_bytes(self.data[byte:byte + 5].tobytes(), "little")
        return (chunk >> (position & 7)) & ((1 << bits) - 1)


def _read_header(bits: _Bits, position: int) -> tuple[_Header, int]:
    """The slice header at ``position`` (after its 3-bit zero-run field) and the bit after it."""
    word = bits.field(position - 3, HEADER_BITS)
    header = _Header(word & 0x7, (word >> 3 & 0x7FFF) + 1, word >> 18 & 0x7, bool(word >> 21 & 1), bool(word >> 22))
    if header.zero_run_divisor > MAX_ZERO_RUN_DIVISOR_BITS and header.zero_runs:
        raise ValueError(f"zero-run divisor {header.zero_run_divisor} at bit {position - 3}")
    if not header.uncompressed and header.weight_divisor > MAX_DIVISOR_BITS:
        raise ValueError(f"weight divisor {header.weight_divisor} at bit {position - 3}")
    return header, position + HEADER_BITS - 3


def _read_palette(bits: _Bits, position: int) -> tuple[_Palette, int]:
    """The palette header at ``position`` and the bit after it."""
    word = bits.field(position, 13)
    direct_offset, size, width = word & 0x1F, word >> 5 & 0x1F, (word >> 10) + 2
    position += 13
    entries = []
    for _ in range(size + 1 if size else 0):
        entries.append(bits.field(position, width))
        position += width
    return _Palette(tuple(entries), width, direct_offset), position


@record
class _Walk:
    """What the walk over a slice's steps found: each weight chunk's first and second unary words,
    each zero-run chunk's unary word, where each step's weight and zero-run remainders start and how
    many there are, and the bit after the slice."""

    firsts: list[int] | np.ndarray
    seconds: list[int] | np.ndarray
    runs: list[int]
    w_starts: np.ndarray
    w_counts: np.ndarray
    z_starts: np.ndarray
    z_counts: np.ndarray
    end_bit: int


def _walk_weights(bits: _Bits, position: int, header: _Header) -> _Walk:
    """``_walk`` of a slice of compressed weights without zero runs, where every step is the next
    chunk's first and second unary fields (read at once: at most 24 bits), then the remainders of
    the chunk before. The loop keeps the unary words only; where the remainders lie follows from
    them (a step's length is 12, plus its first word's bits set, plus the symbols the chunk before
    ended times the divisor bits)."""
    windows, limit, popcount, mask = bits.windows, bits.size_bits, _POPCOUNT, _MASK
    count, w_bits, truncated = header.count, header.weight_divisor, header.truncated
    words: list[int] = []
    keep = words.append
    ended = pending = 0
    start = position
    while ended < count:
        if position > limit:
            raise ValueError(f"weight stream ends at byte {limit // 8} inside a slice of {count} values")
        window = windows[position >> 5] >> (position & 31)
        width = popcount[window & 0xFFF]
        second = (window >> WEIGHT_CHUNK) & mask[width]
        keep(window & 0xFFF | second << WEIGHT_CHUNK)
        new = WEIGHT_CHUNK if truncated else WEIGHT_CHUNK - popcount[second]
        position += WEIGHT_CHUNK + width + pending * w_bits
        ended += new
        pending = new
    word = np.asarray(words, dtype=np.int64)
    firsts, seconds = word & 0xFFF, word >> WEIGHT_CHUNK
    widths = _POPCOUNTS[firsts]
    chunk_ends = np.full(word.size, WEIGHT_CHUNK, dtype=np.int64) if truncated else WEIGHT_CHUNK - _POPCOUNTS[seconds]
    # the last chunk's symbols past the slice have no remainders
    counts = np.minimum(chunk_ends, np.maximum(count - (np.cumsum(chunk_ends) - chunk_ends), 0))
    before = np.concatenate(([0], counts[:-1]))  # a step sends the remainders of the chunk before
    steps = start + np.cumsum(WEIGHT_CHUNK + widths + before * w_bits)  # the bit after each step
    remainder_starts = np.append(steps[1:] - before[1:] * w_bits, steps[-1])  # the chunk's remainders
    end = int(steps[-1] + counts[-1] * w_bits)
    if end > limit:
        raise ValueError(f"weight stream ends at byte {limit // 8} inside a slice of {count} values")
    none = np.zeros(0, dtype=np.int64)
    return _Walk(firsts, seconds, [], remainder_starts, counts, none, none, end)


def _walk(bits: _Bits, position: int, header: _Header, palette: _Palette) -> _Walk:
    """Walks a slice's steps from bit ``position``: a step sends the next weight chunk while the
    balance (weight symbols less zero-run symbols ended so far) is below 8 and a zero-run chunk while
    it is not negative, each while its stream lasts, then the remainders of the chunks sent the step
    before; ``ValueError`` where the steps run past the end of the stream."""
    windows, limit = bits.windows, bits.size_bits
    popcount, mask = _POPCOUNT, _MASK
    count, zero_runs = header.count, header.zero_runs
    runs_total = count + int(header.new_palette) if zero_runs else 0
    compressed, truncated = not header.uncompressed, header.truncated
    w_bits = palette.index_bits if header.uncompressed else header.weight_divisor
    per_chunk = WIDE_UNCOMPRESSED_CHUNK if w_bits > MAX_DIVISOR_BITS else WEIGHT_CHUNK
    z_bits = header.zero_run_divisor if zero_runs else 0
    z_width = ZERO_RUN_CHUNK_K3 if z_bits >= MAX_ZERO_RUN_DIVISOR_BITS else ZERO_RUN_CHUNK
    z_mask = (1 << z_width) - 1
    firsts: list[int] = []
    seconds: list[int] = []
    runs: list[int] = []
    remainders: list[tuple[int, int, int]] = []  # per step: first bit, weight and zero-run remainders
    w_ended = z_ended = w_read = z_read = w_pending = z_pending = 0
    while True:
        balance = w_ended - z_ended if zero_runs else 0
        w_on = balance < BALANCE_LIMIT and w_ended < count
        z_on = zero_runs and balance >= 0 and z_ended < runs_total
        if not (w_on or z_on or w_pending or z_pending):
            break
        if position > limit:
            raise ValueError(f"weight stream ends at byte {limit // 8} inside a slice of {count} values")
        w_new = z_new = 0
        first = 0
        if w_on and compressed:
            first = (windows[position >> 5] >> (position & 31)) & 0xFFF
            position += WEIGHT_CHUNK
            firsts.append(first)
        if z_on:
            word = (windows[position >> 5] >> (position & 31)) & z_mask
            position += z_width
            z_new = z_width - popcount[word]
            runs.append(word)
        if w_on:
            if compressed:
                width = popcount[first]
                second = (windows[position >> 5] >> (position & 31)) & mask[width]
                position += width
                w_new = WEIGHT_CHUNK if truncated else WEIGHT_CHUNK - popcount[second]
                seconds.append(second)
            else:
                w_new = per_chunk
        if w_pending or z_pending:  # the remainders of the chunks the step before sent: weights', then zero runs'
            w_sent = w_pending if w_pending <= count - w_read else count - w_read
            z_sent = z_pending if z_pending <= runs_total - z_read else runs_total - z_read
            remainders.append((position, w_sent, z_sent))
            position += w_sent * w_bits + z_sent * z_bits
            w_read += w_sent
            z_read += z_sent
        w_ended += w_new
        z_ended += z_new
        w_pending, z_pending = w_new, z_new
    if position > limit:
        raise ValueError(f"weight stream ends at byte {limit // 8} inside a slice of {count} values")
    at, w_counts, z_counts = np.array(remainders, dtype=np.int64).reshape(-1, 3).T
    return _Walk(firsts, seconds, runs, at, w_counts, at + w_counts * w_bits, z_counts, position)


def _bit_matrix(words: list[int] | np.ndarray, width: int) -> np.ndarray:
    """Bits of each word (rows; ``width`` columns, least significant first) as int64 0/1."""
    return (np.asarray(words, dtype=np.int64)[:, None] >> np.arange(width)) & 1


def _quotients(codes: np.ndarray, ends: np.ndarray, count: int) -> np.ndarray:
    """The first ``count`` quotients of unary positions with ``codes`` (flattened, in stream order)
    where a symbol ends at each position ``ends`` marks: the sum of its positions' codes."""
    total = np.cumsum(codes.ravel())
    at = np.flatnonzero(ends.ravel())[:count]
    if at.size < count:
        raise ValueError(f"weight stream slice: {at.size} of its {count} symbols end in their chunks")
    summed = total[at]
    return np.diff(summed, prepend=0)


def _remainders(bits: _Bits, starts: np.ndarray, counts: np.ndarray, width: int) -> np.ndarray:
    """The ``width``-bit remainders read back to back from each start, ``counts`` of them."""
    n = np.asarray(counts, dtype=np.int64)
    total = int(n.sum())
    if not width or not total:
        return np.zeros(total, dtype=np.int64)
    group_first = np.repeat(np.cumsum(n) - n, n)
    at = np.repeat(np.asarray(starts, dtype=np.int64), n) + (np.arange(total) - group_first) * width
    return bits.pieces(at, width)


def _weight_indices(bits: _Bits, walk: _Walk, header: _Header, palette: _Palette) -> np.ndarray:
    """The slice's weight indices from its walk: quotient times the divisor plus remainder."""
    if header.uncompressed:
        return _remainders(bits, walk.w_starts, walk.w_counts, palette.index_bits)
    first = _bit_matrix(walk.firsts, WEIGHT_CHUNK)
    # a position whose first bit is set takes the next of its chunk's second bits
    second_at = np.maximum(np.cumsum(first, axis=1) - 1, 0)
    second = (np.asarray(walk.seconds, dtype=np.int64)[:, None] >> second_at) & first
    codes = first + second  # 0 or 1 end a plain symbol, 2 carries on; a truncated symbol ends at once
    ends = np.ones_like(codes, dtype=bool) if header.truncated else codes < 2
    quotients = _quotients(codes, ends, header.count)
    remainders = _remainders(bits, walk.w_starts, walk.w_counts, header.weight_divisor)
    return (quotients << header.weight_divisor) + remainders


def _zero_run_lengths(bits: _Bits, walk: _Walk, header: _Header) -> np.ndarray:
    """The slice's zero runs from its walk: ones add one to the quotient, a zero ends it."""
    width = ZERO_RUN_CHUNK_K3 if header.zero_run_divisor >= MAX_ZERO_RUN_DIVISOR_BITS else ZERO_RUN_CHUNK
    ones = _bit_matrix(walk.runs, width)
    total = header.count + int(header.new_palette)
    quotients = _quotients(ones, ones == 0, total)
    remainders = _remainders(bits, walk.z_starts, walk.z_counts, header.zero_run_divisor)
    return (quotients << header.zero_run_divisor) + remainders


def _signed(indices: np.ndarray, palette: _Palette) -> np.ndarray:
    """Weights of indices: a palette entry's value, or past the palette a direct palette value
    (index less the palette size plus the direct offset); a palette value is ``2|w| + (w < 0)``.
    One gather through a table over every index the slice holds (at most 2**9 of them)."""
    size = len(palette.entries)
    if not indices.size:
        return indices
    index = np.arange(int(indices.max()) + 1, dtype=np.int64)
    table = np.asarray(palette.entries or (0,), dtype=np.int64)
    value = np.where(index < size, table[np.minimum(index, max(size - 1, 0))], index - size + palette.direct_offset)
    return np.where(value & 1, -(value >> 1), value >> 1)[indices]


def _slice(bits: _Bits, position: int, header: _Header, palette: _Palette) -> tuple[np.ndarray, int]:
    """One slice's values from bit ``position`` (after its headers) and the bit after it."""
    if header.uncompressed and not header.zero_runs:  # no unary parts: the indices back to back
        width = palette.index_bits
        end = position + header.count * width
        if end > bits.size_bits:
            raise ValueError(f"weight stream ends at byte {bits.size_bits // 8} inside a slice of "
                             f"{header.count} values")
        at = position + np.arange(header.count, dtype=np.int64) * width
        indices = bits.pieces(at, width) if width else np.zeros(header.count, dtype=np.int64)
        return _signed(indices, palette), end
    compressed_only = not header.uncompressed and not header.zero_runs
    walk = _walk_weights(bits, position, header) if compressed_only else _walk(bits, position, header, palette)
    values = _signed(_weight_indices(bits, walk, header, palette), palette)
    if header.zero_runs:
        values = _interleave(values, _zero_run_lengths(bits, walk, header), header.new_palette)
    return values, walk.end_bit


def decode_weights(stream: bytes) -> np.ndarray:
    """The values (int16, in stream order) a weight stream decodes to; ``ValueError`` for a
    malformed stream (one that ends inside a field, or after a slice without its end marker)."""
    bits = _Bits(stream)
    palette: _Palette | None = None
    parts: list[np.ndarray] = []
    position = 0
    ended = True
    while position < bits.size_bits:
        if bits.field(position, 3) == END_OF_STREAM:
            position = -(-(position + 3) // 8) * 8
            palette = None  # a slice after an end marker starts a new palette
            ended = True
            continue
        header, position = _read_header(bits, position + 3)
        if header.new_palette:
            palette, position = _read_palette(bits, position)
        elif palette is None:
            raise ValueError("a slice without a palette where one must start")
        values, position = _slice(bits, position, header, palette)
        parts.append(values)
        ended = False
    if not ended:
        raise ValueError(f"the weight stream's {bits.size_bits // 8} bytes end without its end marker")
    return np.concatenate(parts).astype(np.int16) if parts else np.zeros(0, dtype=np.int16)


def _interleave(values: np.ndarray, runs: np.ndarray, leading_run: bool) -> np.ndarray:
    """The slice's values with its zero runs: before the first (when ``leading_run``) and after each."""
    before = int(runs[0]) if leading_run else 0
    after = runs[1:] if leading_run else runs
    out = np.zeros(before + values.size + int(after.sum()), dtype=np.int64)
    out[before + np.arange(values.size) + np.concatenate(([0], np.cumsum(after)[:-1]))] = values
    return out
