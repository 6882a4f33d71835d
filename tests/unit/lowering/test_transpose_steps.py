"""The steps of a permutation (``lowering.transpose_steps``) applied one by one to the bytes, each
on its reshaped view, give numpy's transpose: every permutation of 2 to 5 axes (sizes 2..5, merged
first as the lowering merges them), and the cases of real networks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from npuplan.lowering.transpose_steps import transpose_steps
from npuplan.lowering.transposes import merged_permutation


def _apply(data: np.ndarray, dims: tuple[int, ...], perm: tuple[int, ...]) -> np.ndarray:
    steps = transpose_steps(dims, perm)
    assert steps is not None
    flat = data.reshape(-1)
    for seen, step in steps:
        assert len(seen) in (2, 3) and step in ((1, 0), (1, 0, 2))  # one NPU operation each
        flat = flat.reshape(seen).transpose(step).reshape(-1)
    return flat


@pytest.mark.parametrize("rank", [2, 3, 4, 5])
def test_every_permutation_of_merged_axes_is_the_transpose(rank: int) -> None:
    sizes = (2, 3, 4, 5, 3)[:rank]
    data = np.arange(int(np.prod(sizes)))
    for perm in itertools.permutations(range(rank)):
        dims, merged = merged_permutation(sizes, perm)
        expected = data.reshape(sizes).transpose(perm).reshape(-1)
        assert np.array_equal(_apply(data, dims, merged), expected), perm


@pytest.mark.parametrize(("shape", "perm", "count"), [
    ((4, 64, 2, 32), (0, 2, 1, 3), 2),  # batched heads: two swaps, both 32 or more deep
    ((1, 8, 2, 8, 2, 64), (0, 2, 4, 1, 3, 5), 2),  # MobileViT's unfold
    ((1, 2, 2, 8, 8, 64), (0, 3, 1, 4, 2, 5), 2),  # and fold
    ((1, 8, 12, 16), (0, 3, 2, 1), 2),  # three axes: the table
])
def test_networks_permutations_take_few_steps(shape, perm, count) -> None:
    dims, merged = merged_permutation(shape, perm)
    steps = transpose_steps(dims, merged)
    assert steps is not None and len(steps) == count
    data = np.arange(int(np.prod(shape)))
    assert np.array_equal(_apply(data, dims, merged), data.reshape(shape).transpose(perm).reshape(-1))


def test_a_view_past_the_npus_addressing_has_no_steps() -> None:
    assert transpose_steps((70000, 3), (1, 0)) is None
    assert transpose_steps((2,) * 7, (6, 5, 4, 3, 2, 1, 0)) is None  # past MAX_AXES


def test_only_quantized_maps_get_a_merged_view() -> None:
    # a float TRANSPOSE (PT2E's unquantized tail, NHWC -> NCHW) got the view too, and so counted as
    # rewritten: a deployable plan could then neither run it on the NPU nor leave it to the CPU
    from npuplan.ir.types import DataType
    from npuplan.lowering.transposes import fold_transpose_views, transpose_view

    from ._build import const, fm, graph, op

    perm = const("perm", [0, 3, 1, 2], DataType.INT32, None)
    for dtype, quant, folded in ((DataType.FLOAT32, None, False), (DataType.INT8, fm("q", (1,)).quant, True)):
        x, y = fm("x", (1, 24, 24, 4), dtype, quant), fm("y", (1, 4, 24, 24), dtype, quant)
        g, _ = fold_transpose_views(graph([op("TRANSPOSE", [x, perm], [y], 0)], [x], [y]), deployable=True)
        assert (transpose_view(g.ops[0]) is not None) is folded


@pytest.mark.parametrize("perm", [(0, 2, 1), (2, 1, 0)])
def test_two_steps_in_their_other_order_are_the_transpose_too(perm: tuple[int, ...]) -> None:
    """``other_steps``: the matrix first then the swap, or the swap first then the matrix."""
    from npuplan.lowering.transpose_steps import other_steps

    for dims in ((2, 3, 5), (4, 7, 3), (6, 1 + 1, 9)):
        data = np.arange(int(np.prod(dims)))
        steps = other_steps(dims, perm)
        assert steps is not None and steps != transpose_steps(dims, perm) and len(steps) == 2
        flat = data
        for seen, step in steps:
            flat = flat.reshape(seen).transpose(step).reshape(-1)
        assert np.array_equal(flat, data.reshape(dims).transpose(perm).reshape(-1))
    assert other_steps((2, 3, 5), (1, 0, 2)) is None and other_steps((2, 3), (1, 0)) is None
