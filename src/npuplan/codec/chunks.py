"""The chunked layout of one slice of the weight stream: where every bit goes.

Format facts: a slice codes its weight indices and (with zero runs) its zero runs as two streams
of Golomb-Rice symbols, each cut into chunks of unary *positions*:

- weights: 12 positions a chunk. A plain symbol with quotient ``q`` takes ``q // 2 + 1``
  positions, each with a first-unary bit (1 except on the last, where it is ``q & 1``) and, where
  that bit is 1, a second-unary bit (1 except on the last position); a truncated symbol takes one
  position (first bit ``q > 0``, second bit ``q > 1``). The chunk's 12 first-unary bits are one
  field, its second-unary bits another (as many as its first bits set). Uncompressed symbols have
  no unary part: 12 a chunk (8 when wider than 5 bits).
- zero runs: 12 positions a chunk (8 when k is 3), ``q`` ones then a zero per symbol.
- a symbol belongs to the chunk its unary part ends in; positions after the last symbol are
  zeros (they read as quotient-0 symbols past the slice's end, which the decoder ignores).
- chunks are sent in steps: each step sends, in this order, the next weight chunk's first unary
  field, the next zero-run chunk's unary field, the weight chunk's second unary field, then the
  remainders (k bits each) of the weight chunk and of the zero-run chunk sent the step before. With
  ``balance`` = weight symbols minus zero-run symbols sent so far, a step sends a weight chunk
  while ``balance < 8`` and a zero-run chunk while ``balance >= 0`` (each while its stream lasts);
  after the last chunks, one more step sends their remainders.
"""

from __future__ import annotations


import numpy as np

from npuplan.codec.bits import pack_uniform, ranges_as_pieces
from npuplan.records import record

WEIGHT_CHUNK_POSITIONS = 12
WIDE_UNCOMPRESSED_CHUNK = 8
WIDE_UNCOMPRESSED_BITS = 5
ZERO_RUN_CHUNK_POSITIONS = 12
ZERO_RUN_CHUNK_POSITIONS_K3 = 8
BALANCE_LIMIT = 8
_NO_BITS = np.zeros(1, dtype=np.uint8)
_PLAY_LOOP_ROWS = 512


@record(eq=False)
class Chunks:
    """One stream of a slice in chunks: ``done[c]`` symbols end in the first ``c`` chunks (``c``
    0..count); each chunk's unary word (``word_bits`` wide: 0 for none); per chunk the width of its
    second unary field, and all those fields back to back (packed bytes); each symbol's remainder
    (``remainder_bits`` wide)."""

    done: np.ndarray
    words: np.ndarray
    word_bits: int
    second_bits: np.ndarray
    second_stream: np.ndarray
    remainders: np.ndarray
    remainder_bits: int

    @property
    def count(self) -> int:
        return self.done.size - 1


def _chunk_ends(ends: np.ndarray, per_chunk: int) -> tuple[int, np.ndarray]:
    """Chunk count and ``done`` for symbols whose unary parts end at positions ``ends`` (exclusive)."""
    count = -(-int(ends[-1]) // per_chunk)
    done = np.searchsorted(ends, per_chunk * np.arange(count + 1), side="right")
    return count, done


def _words(bits: np.ndarray, width: int) -> np.ndarray:
    """Each row of ``width`` bits (at most 16) as an integer, first bit least significant."""
    packed = np.packbits(bits.reshape(-1, width), axis=1, bitorder="little").astype(np.int64)
    return packed[:, 0] | (packed[:, 1] << 8) if packed.shape[1] > 1 else packed[:, 0]


def weight_chunks(indices: np.ndarray, divisor_bits: int, *, truncated: bool, uncompressed: bool) -> Chunks:
    """The weight stream of a slice with ``indices`` in chunks."""
    n = indices.size
    if uncompressed:
        per = WIDE_UNCOMPRESSED_CHUNK if divisor_bits > WIDE_UNCOMPRESSED_BITS else WEIGHT_CHUNK_POSITIONS
        count = -(-n // per)
        done = np.minimum(np.arange(count + 1) * per, n)
        return Chunks(done, np.zeros(count, dtype=np.int64), 0, np.zeros(count, dtype=np.int64), _NO_BITS,
                      indices, divisor_bits)
    q = indices >> divisor_bits
    ends = np.arange(1, n + 1) if truncated else np.cumsum((q >> 1) + 1)
    count, done = _chunk_ends(ends, WEIGHT_CHUNK_POSITIONS)
    size = count * WEIGHT_CHUNK_POSITIONS
    last = ends - 1
    first = np.zeros(size, dtype=bool)
    second = np.zeros(size, dtype=bool)
    if truncated:
        first[last] = q > 0
        second[last] = q > 1
    else:
        first[:ends[-1]] = True
        second[:ends[-1]] = True
        first[last] = (q & 1) == 1
        second[last] = False
    rows = first.reshape(count, WEIGHT_CHUNK_POSITIONS)
    return Chunks(done, _words(first, WEIGHT_CHUNK_POSITIONS), WEIGHT_CHUNK_POSITIONS, rows.sum(axis=1),
                  np.packbits(second[first], bitorder="little"), indices & ((1 << divisor_bits) - 1), divisor_bits)


def zero_run_chunks(runs: np.ndarray, divisor_bits: int) -> Chunks:
    """The zero-run stream of a slice with ``runs`` in chunks."""
    per = ZERO_RUN_CHUNK_POSITIONS_K3 if divisor_bits >= 3 else ZERO_RUN_CHUNK_POSITIONS
    ends = np.cumsum((runs >> divisor_bits) + 1)
    count, done = _chunk_ends(ends, per)
    unary = np.zeros(count * per, dtype=bool)
    unary[:ends[-1]] = True
    unary[ends - 1] = False
    return Chunks(done, _words(unary, per), per, np.zeros(count, dtype=np.int64), _NO_BITS,
                  runs & ((1 << divisor_bits) - 1), divisor_bits)


def _play(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """``y[d + 1] = min(high[d], max(low[d], y[d]))`` from ``y[0] = 0``, for every ``d`` (``low <=
    high``): clamps compose into clamps, so a doubling prefix scan (log2(n) vector steps); a few
    hundred rows (one per zero-run chunk) are quicker walked one by one."""
    if low.size <= _PLAY_LOOP_ROWS:
        y, out = 0, []
        for lo, hi in zip(low.tolist(), high.tolist()):
            y = lo if y < lo else hi if y > hi else y
            out.append(y)
        return np.array(out, dtype=np.int64)
    low, high = low.astype(np.int64), high.astype(np.int64)  # copies, updated in place
    shift = 1
    while shift < low.size:  # each entry becomes the composition of the 2 * shift clamps up to it
        high[shift:] = np.minimum(high[shift:], np.maximum(low[shift:], high[:-shift]))
        np.maximum(low[:-shift], low[shift:], out=low[shift:])  # overlapping operands: numpy buffers them
        shift *= 2
    return np.minimum(high, np.maximum(low, 0))


def schedule(weights: Chunks, runs: Chunks | None) -> tuple[np.ndarray, np.ndarray | None, int]:
    """The step each weight chunk and each zero-run chunk is sent in, and the number of steps.

    The steps walk a monotone path through (weight chunks sent, zero-run chunks sent): at row ``d``
    (``d`` zero-run chunks sent) the path sends weight chunks alone until the balance is not
    negative, then zero-run chunk ``d``, with the next weight chunk if the balance is below 8.
    Per row that is a clamp of (weight chunks sent - d) to bounds from the two ``done`` arrays,
    so the whole path comes from one prefix scan of clamps.
    """
    cw = weights.count
    if runs is None:
        return np.arange(cw), None, cw
    cz = runs.count
    rows = np.arange(cz)
    z_done = runs.done[:cz]
    start = np.searchsorted(weights.done, z_done, side="left")  # fewest weight chunks with balance >= 0
    stop = np.minimum(np.searchsorted(weights.done, z_done + BALANCE_LIMIT, side="left"), cw)  # balance < 8 below
    offset = _play(start - rows - 1 + (start < stop), stop - rows - 1)
    entered = np.concatenate(([0], offset + rows + 1))  # weight chunks sent when row d starts
    at = np.maximum(entered[:cz], start)
    paired = at < stop
    paired_before = np.concatenate(([0], np.cumsum(paired)))
    z_step = at - paired_before[:cz] + rows
    w_step = np.empty(cw, dtype=np.int64)
    w_step[at[paired]] = z_step[paired]
    alone = np.ones(cw, dtype=bool)
    alone[at[paired]] = False
    chunk = np.flatnonzero(alone)
    rows_before = np.searchsorted(entered[1:], chunk, side="right")
    w_step[chunk] = chunk + rows_before - paired_before[rows_before]
    return w_step, z_step, cw + cz - int(paired_before[-1])


def layout(weights: Chunks, runs: Chunks | None, first_bit: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Bit offsets (from ``first_bit``) and values of every non-zero field of the slice's chunks,
    and the bit after its last."""
    w_step, z_step, steps = schedule(weights, runs)
    slots = np.zeros((steps + 1, 5), dtype=np.int64)  # the last step sends the last remainders only
    if weights.word_bits:
        slots[w_step, 0] = weights.word_bits
        slots[w_step, 2] = weights.second_bits
    slots[w_step + 1, 3] = (weights.done[1:] - weights.done[:-1]) * weights.remainder_bits
    if runs is not None and z_step is not None:
        slots[z_step, 1] = runs.word_bits
        slots[z_step + 1, 4] = (runs.done[1:] - runs.done[:-1]) * runs.remainder_bits
    ends = slots.cumsum().reshape(slots.shape) + first_bit
    begins = ends - slots  # begins[step, slot]: the slot's first bit in that step
    fields = [_remainder_fields(weights, w_step, begins[:, 3])]
    if weights.word_bits:
        fields.append((begins[w_step, 0], weights.words))
        if weights.second_stream.any():
            fields.append(ranges_as_pieces(weights.second_stream, np.cumsum(weights.second_bits) - weights.second_bits,
                                           weights.second_bits, begins[w_step, 2]))
    if runs is not None and z_step is not None:
        fields += [(begins[z_step, 1], runs.words), _remainder_fields(runs, z_step, begins[:, 4])]
    return (np.concatenate([f[0] for f in fields]), np.concatenate([f[1] for f in fields]), int(ends[-1, -1]))


def _remainder_fields(chunks: Chunks, step: np.ndarray, slot_begins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fields of the remainders: each chunk's back to back, in the step after the chunk's."""
    if not chunks.remainder_bits:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    stream = pack_uniform(chunks.remainders, chunks.remainder_bits)
    return ranges_as_pieces(stream, chunks.done[:-1] * chunks.remainder_bits,
                            (chunks.done[1:] - chunks.done[:-1]) * chunks.remainder_bits, slot_begins[step + 1])
