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

__all__ = ["CHANGE_BITS", "block_starts", "cheapest_segments"]


def block_starts(count: int) -> np.ndarray:
    """The first symbol of each block of a stream of ``count`` symbols (at least one)."""
    size = -(-count // MAX_BLOCKS)
    return np.arange(0, count, size)


def cheapest_segments(block_bits: np.ndarray, starts: np.ndarray, count: int) -> tuple[tuple[int, int], ...]:
    """Per stretch of blocks, (the symbol after it, its parameter): the choice of a parameter per
    block (``block_bits[parameter, block]``: the bits of that block's symbols; ``inf`` where the
    parameter cannot code one of them) with the fewest bits, ``CHANGE_BITS`` a change; ``starts``
    the blocks' first symbols, ``count`` the symbols in all."""
    totals = block_bits.sum(axis=1)
    single = int(np.argmin(totals))
    if totals[single] - block_bits.min(axis=0).sum() <= CHANGE_BITS:  # no change can pay for itself
        return ((count, single),)
    columns = block_bits.T.tolist()
    best = columns[0]
    back: list[list[int]] = []
    for column in columns[1:]:  # a few thousand steps of a few parameters: plain lists beat arrays
        least = min(best)
        switch, leader = least + CHANGE_BITS, best.index(least)
        back.append([c if b <= switch else leader for c, b in enumerate(best)])
        best = [(b if b <= switch else switch) + x for b, x in zip(best, column)]
    path = [best.index(min(best))]
    for previous in reversed(back):
        path.append(previous[path[-1]])
    path.reverse()
    ends = [int(s) for s in starts[1:]] + [count]
    segments: list[tuple[int, int]] = []
    for end, choice in zip(ends, path):
        if segments and segments[-1][1] == choice:
            segments[-1] = (end, choice)
        else:
            segments.append((end, choice))
    return tuple(segments)
