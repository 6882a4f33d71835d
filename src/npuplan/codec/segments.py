"""Where a coded stream changes its coding parameter: the fewest bits over parameters chosen per
stretch of symbols, each change costing a slice of its own.

Format fact: a slice header carries one weight parameter and one zero-run divisor, so a stream
can change them only where it starts a new slice (23 header bits, and each of its part-filled
unary chunks: about 40 bits a change, ``CHANGE_BITS``). Worth it where the symbols change
character: an IFM depth padded to whole blocks leaves stretches of long zero runs (the padding)
between stretches of short ones (the weights), which a divisor of 8 codes in an eighth of the bits.

The stream is cut into at most ``MAX_BLOCKS`` blocks of whole symbols and the cheapest choice per
block is a shortest path (one step a block, ``CHANGE_BITS`` to change): a change lands on a block
boundary, within a block of the ideal one.
"""

from __future__ import annotations

import numpy as np

CHANGE_BITS = 40
MAX_BLOCKS = 2048
PARAMETERS = 4  # the zero-run divisors 1, 2, 4 and 8

__all__ = ["CHANGE_BITS", "block_starts", "cheapest_segments"]


def block_starts(count: int) -> np.ndarray:
    """The first symbol of each block of a stream of ``count`` symbols (at least one)."""
    size = -(-count // MAX_BLOCKS)
    return np.arange(0, count, size)


def cheapest_segments(block_bits: np.ndarray, starts: np.ndarray, count: int) -> tuple[tuple[int, int], ...]:
    """Per stretch of blocks, (the symbol after it, its parameter): the choice of a parameter per
    block (``block_bits[parameter, block]``: the bits of that block's symbols, whole numbers; ``inf``
    where the parameter cannot code one of them; at most ``PARAMETERS`` parameters) with the fewest
    bits, ``CHANGE_BITS`` a change, the lower parameter on a tie; ``starts`` the blocks' first
    symbols, ``count`` the symbols in all."""
    totals = block_bits.sum(axis=1)
    single = int(np.argmin(totals))
    if totals[single] - block_bits.min(axis=0).sum() <= CHANGE_BITS:  # no change can pay for itself
        return ((count, single),)
    bests, leasts = _forward(block_bits)
    ends = starts[1:].tolist() + [count]
    segments: list[tuple[int, int]] = []
    for end, choice in zip(ends, _backward(bests, leasts)):
        if segments and segments[-1][1] == choice:
            segments[-1] = (end, choice)
        else:
            segments.append((end, choice))
    return tuple(segments)


def _forward(block_bits: np.ndarray) -> tuple[list[tuple[float, ...]], list[float]]:
    """The fewest bits up to and including each block, ending on each parameter (a parameter
    missing up to ``PARAMETERS`` never chosen: ``inf``), and the least of them before each step."""
    rows = block_bits.shape[0]
    if rows > PARAMETERS:
        raise ValueError(f"{rows} parameters, at most {PARAMETERS}")
    padded = np.full((block_bits.shape[1], PARAMETERS), np.inf)
    padded[:, :rows] = block_bits.T
    columns = padded.tolist()
    b0, b1, b2, b3 = columns[0]
    bests: list[tuple[float, ...]] = [(b0, b1, b2, b3)]
    leasts: list[float] = []
    keep, note = bests.append, leasts.append
    # a few thousand steps of four parameters: unrolled on plain floats (whole numbers: exact in any order)
    for x0, x1, x2, x3 in columns[1:]:
        least = min(b0, b1, b2, b3)
        switch = least + CHANGE_BITS
        b0 = (b0 if b0 <= switch else switch) + x0
        b1 = (b1 if b1 <= switch else switch) + x1
        b2 = (b2 if b2 <= switch else switch) + x2
        b3 = (b3 if b3 <= switch else switch) + x3
        keep((b0, b1, b2, b3))
        note(least)
    return bests, leasts


def _backward(bests: list[tuple[float, ...]], leasts: list[float]) -> list[int]:
    """The parameter of each block on the cheapest path: from the cheapest end back, staying on a
    parameter wherever staying costs no more than changing to the cheapest one (the first on a tie)."""
    last = bests[-1]
    choice = last.index(min(last))
    path = [choice]
    for previous, least in zip(reversed(bests[:-1]), reversed(leasts)):
        if previous[choice] > least + CHANGE_BITS:
            choice = previous.index(least)
        path.append(choice)
    path.reverse()
    return path
