"""The steps that permute the axes of a tensor, each a transpose the NPU runs in one operation.

One NPU operation swaps two axes of a map (``A x B x C -> B x A x C``, so a matrix ``X x Y -> Y x X``
seen as ``X x Y x 1``), on any reshaped view of the bytes (reshapes move no data). A permutation of
three axes is at most two such steps:

  (A, B, C) -> (A, C, B)   swap A, B; then the matrix (B) x (A*C)
  (A, B, C) -> (C, B, A)   the matrix (A) x (B*C); then swap B, C
  (A, B, C) -> (B, C, A)   the matrix (A) x (B*C)
  (A, B, C) -> (C, A, B)   the matrix (A*B) x (C)

The two two-step permutations have another order of their steps (``other_steps``): the matrix
first, then the swap, or the swap first, then the matrix. Their matrices differ in shape and the
swaps in depth (``C`` or ``B`` elements a pixel for ``(A, C, B)``), so which is cheaper depends
on the map: both are forms the planner prices.

  (A, B, C) -> (A, C, B)   the matrix (A*B) x (C); then swap C, A (``B`` deep)
  (A, B, C) -> (C, B, A)   swap A, B; then the matrix (B*A) x (C)

More axes: the cheapest sequence of block moves (``_block_moves``), each cutting the current axis
order into three runs of consecutive axes (or two) and permuting the runs, which is a permutation
of three (two) axes of the merged view. A swap with a run before it and one after (the batched
``(P, Q, R, S) -> (P, R, Q, S)``) needs three: the first run rotated to the back, the swap, and
rotated back. Vela's default core runs these as one small copy per outer index instead.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator
from functools import lru_cache

Steps = tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]  # (shape seen, permutation) per step

MAX_DIM = 65535  # the largest height, width or depth of a feature map the NPU addresses
MAX_AXES = 6  # the most merged axes searched (TFLite tensors have at most 6 in practice)


def transpose_steps(dims: tuple[int, ...], perm: tuple[int, ...]) -> Steps | None:
    """The one-operation steps doing ``perm`` on ``dims`` (merged: no axis of size 1, no two that
    stay next to each other in order), or None (more than ``MAX_AXES`` axes, or a step's view has a
    dimension above ``MAX_DIM``)."""
    steps = _steps(dims, perm) if len(dims) <= 3 else _block_moves(dims, perm)
    if steps is None or any(max(seen) > MAX_DIM for seen, _ in steps):
        return None
    return steps


def _steps(dims: tuple[int, ...], perm: tuple[int, ...]) -> Steps | None:
    if len(dims) <= 1 or perm == tuple(range(len(dims))):
        return ()
    if len(dims) == 2:
        return (((dims[0], dims[1]), (1, 0)),)
    if len(dims) != 3:
        return None
    a, b, c = dims
    swap, matrix = (1, 0, 2), (1, 0)
    by_perm: dict[tuple[int, ...], Steps] = {
        (1, 0, 2): (((a, b, c), swap),),
        (0, 2, 1): (((a, b, c), swap), ((b, a * c), matrix)),
        (2, 1, 0): (((a, b * c), matrix), ((b, c, a), swap)),
        (1, 2, 0): (((a, b * c), matrix),),
        (2, 0, 1): (((a * b, c), matrix),),
    }
    return by_perm.get(perm)


def other_steps(dims: tuple[int, ...], perm: tuple[int, ...]) -> Steps | None:
    """The other order of the steps of a two-step permutation of three merged axes (see the
    module docstring), or None (no such permutation, or a view above ``MAX_DIM``)."""
    if len(dims) != 3:
        return None
    a, b, c = dims
    swap, matrix = (1, 0, 2), (1, 0)
    by_perm: dict[tuple[int, ...], Steps] = {
        (0, 2, 1): (((a * b, c), matrix), ((c, a, b), swap)),
        (2, 1, 0): (((a, b, c), swap), ((b * a, c), matrix)),
    }
    steps = by_perm.get(tuple(perm))
    if steps is None or any(max(seen) > MAX_DIM for seen, _ in steps):
        return None
    return steps


def _step_weight(steps: Steps) -> int:
    """How a sequence of steps ranks: a matrix step (one channel deep: the costly kind) counts two,
    a swap of map axes one."""
    return sum(2 if len(seen) == 2 else 1 for seen, _ in steps)


_RUN_ORDERS = ((1, 0, 2), (0, 2, 1), (2, 1, 0), (1, 2, 0), (2, 0, 1))


def _moves(order: tuple[int, ...], dims: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], Steps]]:
    """Each block move from the axis order ``order`` (original axis ids): (new order, its steps)."""
    n = len(order)
    for i in range(n):
        for j in range(i + 1, n + 1):
            runs = [r for r in (order[:i], order[i:j], order[j:]) if r]
            if len(runs) < 2:
                continue
            sizes = tuple(math.prod(dims[a] for a in run) for run in runs)
            for run_order in (_RUN_ORDERS if len(runs) == 3 else ((1, 0),)):
                steps = _steps(sizes, run_order)
                if steps:
                    yield tuple(a for r in run_order for a in runs[r]), steps


@lru_cache(maxsize=256)
def _block_moves(dims: tuple[int, ...], perm: tuple[int, ...]) -> Steps | None:
    """The lightest (``_step_weight``) sequence of block moves taking the axes ``dims`` to the order
    ``perm`` (Dijkstra over the axis orders), or None past ``MAX_AXES`` axes."""
    if len(dims) > MAX_AXES:
        return None
    start, goal = tuple(range(len(dims))), tuple(perm)
    best: dict[tuple[int, ...], int] = {start: 0}
    queue: list[tuple[int, int, tuple[int, ...], Steps]] = [(0, 0, start, ())]
    while queue:
        weight, count, order, steps = heapq.heappop(queue)
        if order == goal:
            return steps
        if weight > best.get(order, weight):
            continue
        for moved, more in _moves(order, dims):
            total = weight + _step_weight(more)
            if total < best.get(moved, total + 1):
                best[moved] = total
                heapq.heappush(queue, (total, count + len(more), moved, steps + more))
    return None
