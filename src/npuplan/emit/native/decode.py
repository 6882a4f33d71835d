"""A reader of the Ethos-U weight compression format: the values a stream decodes to.

For tests and validation (it walks the stream field by field in Python, so it is not fast). The
format facts it follows are the ones ``chunks`` and ``symbols`` document: slices with a 23-bit
header (zero-run divisor or 6: no zero runs, or 7: end of stream; value count - 1; weight divisor
or 7: uncompressed; truncated; new palette), a palette header (direct offset, size - 1, entry
width - 2, entries) on slices with a new palette, then the chunk steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from npuplan.emit.native.bits import BitReader

NO_ZERO_RUNS = 6
END_OF_STREAM = 7
UNCOMPRESSED = 7
MAX_DIVISOR_BITS = 5
MAX_ZERO_RUN_DIVISOR_BITS = 3
BALANCE_LIMIT = 8


@dataclass(slots=True)
class _Palette:
    entries: list[int] = field(default_factory=list)
    bits: int = 2
    direct_offset: int = 0


@dataclass(slots=True)
class _Unary:
    """One stream's unary parser: quotients of the symbols completed so far, the partial count
    carried into the next chunk."""

    quotients: list[int] = field(default_factory=list)
    carry: int = 0


def _parse_runs_unary(word: int, width: int, state: _Unary) -> int:
    """Parses a zero-run chunk's ``width`` unary bits (ones add to the quotient, a zero ends it);
    returns how many symbols the chunk ended."""
    done = 0
    for position in range(width):
        if word >> position & 1:
            state.carry += 1
        else:
            state.quotients.append(state.carry)
            state.carry = 0
            done += 1
    return done


@dataclass(frozen=True, slots=True)
class _Header:
    zero_run_divisor: int
    count: int
    weight_divisor: int
    truncated: bool
    new_palette: bool


def _slice_values(reader: BitReader, header: _Header, palette: _Palette) -> tuple[list[int], list[int]]:
    """Reads one slice's chunk steps: its weight indices and its zero runs (empty without)."""
    zero_runs = header.zero_run_divisor != NO_ZERO_RUNS
    n_runs = header.count + int(header.new_palette) if zero_runs else 0
    uncompressed = header.weight_divisor == UNCOMPRESSED
    if uncompressed:
        w_bits = (len(palette.entries) - 1).bit_length() if palette.entries else palette.bits
        per_chunk = 8 if w_bits > MAX_DIVISOR_BITS else 12
    else:
        w_bits = header.weight_divisor
    z_bits = header.zero_run_divisor if zero_runs else 0
    z_width = 8 if z_bits >= MAX_ZERO_RUN_DIVISOR_BITS else 12
    w, z = _Unary(), _Unary()
    w_values: list[int] = []
    z_values: list[int] = []
    w_pending = z_pending = 0  # symbols whose remainders the next step sends
    while True:
        balance = len(w.quotients) - len(z.quotients) if zero_runs else 0
        w_on = balance < BALANCE_LIMIT and len(w.quotients) < header.count
        z_on = zero_runs and balance >= 0 and len(z.quotients) < n_runs
        if not (w_on or z_on or w_pending or z_pending):
            break
        w_first = w_on and not uncompressed
        first = reader.read(12) if w_first else 0
        w_new = z_new = 0
        if z_on:
            z_new = _parse_runs_unary(reader.read(z_width), z_width, z)
        if w_first:
            second = reader.read(bin(first).count("1"))
            w_new = _parse_weight_unary(first, second, w, header.truncated)
        elif w_on:
            w.quotients += [0] * per_chunk
            w_new = per_chunk
        for q in w.quotients[len(w_values):len(w_values) + w_pending][:header.count - len(w_values)]:
            w_values.append((q << w_bits) + reader.read(w_bits))
        for q in z.quotients[len(z_values):len(z_values) + z_pending][:n_runs - len(z_values)]:
            z_values.append((q << z_bits) + reader.read(z_bits))
        w_pending, z_pending = w_new, z_new
    return w_values, z_values


def _parse_weight_unary(first: int, second: int, state: _Unary, truncated: bool) -> int:
    """Parses a weight chunk's 12 positions (first-unary bits ``first``, second-unary bits
    ``second``): each position adds 0, 1 or 2 to the quotient, a 0 or 1 (any, truncated) ends it.
    Returns how many symbols the chunk ended."""
    done = 0
    for position in range(12):
        code = 0
        if first >> position & 1:
            code = 1 + (second & 1)
            second >>= 1
        state.carry += code
        if code < 2 or truncated:
            state.quotients.append(state.carry)
            state.carry = 0
            done += 1
    return done


def _read_header(reader: BitReader, zero_run_divisor: int) -> _Header:
    return _Header(zero_run_divisor, reader.read(15) + 1, reader.read(3), bool(reader.read(1)), bool(reader.read(1)))


def _read_palette(reader: BitReader) -> _Palette:
    direct_offset = reader.read(5)
    size = reader.read(5)
    bits = reader.read(3) + 2
    entries = [reader.read(bits) for _ in range(size + 1 if size else 0)]
    return _Palette(entries, bits, direct_offset)


def _signed(indices: list[int], palette: _Palette) -> np.ndarray:
    index = np.asarray(indices, dtype=np.int64)
    size = len(palette.entries)
    table = np.asarray(palette.entries or [0], dtype=np.int64)
    value = np.where(index < size, table[np.minimum(index, max(size - 1, 0))], index - size + palette.direct_offset)
    return np.where(value & 1, -(value >> 1), value >> 1)


def decode_weights(stream: bytes) -> np.ndarray:
    """The values (int16, in stream order) a weight stream decodes to; ``ValueError`` for a
    malformed stream."""
    reader = BitReader(stream)
    palette: _Palette | None = None
    parts: list[np.ndarray] = []
    while not reader.at_end:
        zero_run_divisor = reader.read(3)
        if zero_run_divisor == END_OF_STREAM:
            reader.align_byte()
            palette = None  # a slice after an end marker starts a new palette
            continue
        if zero_run_divisor > MAX_ZERO_RUN_DIVISOR_BITS and zero_run_divisor != NO_ZERO_RUNS:
            raise ValueError(f"zero-run divisor {zero_run_divisor} at bit {reader.position_bits - 3}")
        header = _read_header(reader, zero_run_divisor)
        if header.new_palette:
            palette = _read_palette(reader)
        elif palette is None:
            raise ValueError("a slice without a palette where one must start")
        if header.weight_divisor != UNCOMPRESSED and header.weight_divisor > MAX_DIVISOR_BITS:
            raise ValueError(f"weight divisor {header.weight_divisor}")
        w_values, z_values = _slice_values(reader, header, palette)
        parts.append(_interleave(_signed(w_values, palette), z_values, header.new_palette))
    return np.concatenate(parts).astype(np.int16) if parts else np.zeros(0, dtype=np.int16)


def _interleave(values: np.ndarray, runs: list[int], leading_run: bool) -> np.ndarray:
    """The slice's values with its zero runs: before the first (when ``leading_run``) and after each."""
    if not runs:
        return values
    run = np.asarray(runs, dtype=np.int64)
    before = run[0] if leading_run else 0
    after = run[1:] if leading_run else run
    out = np.zeros(before + values.size + int(after.sum()), dtype=np.int64)
    out[before + np.arange(values.size) + np.concatenate(([0], np.cumsum(after)[:-1]))] = values
    return out
