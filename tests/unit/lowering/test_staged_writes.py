"""The staged form of an operator writing its output in short runs (``lowering.staged_writes``),
and the forms a lowering may choose among per operator (``lower.op_forms``, ``form_choices``)."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.hw.accelerator import accelerator
from npuplan.ir.lowered import Activation, BlockType
from npuplan.ir.types import DataType
from npuplan.lowering import lower
from npuplan.lowering.lower import Form, form_choices, lower_op, op_forms
from npuplan.lowering.staged_writes import may_stage, staged_output, writes_in_short_runs

from ._build import const, fm, graph, model, op

U55_128 = accelerator("ethos-u55-128")


def _transpose(shape: tuple[int, ...], perm: list[int], out_shape: tuple[int, ...], dtype: DataType = DataType.INT8):
    x, y = fm("x", shape, dtype=dtype), fm("y", out_shape, dtype=dtype)
    return op("TRANSPOSE", [x, const("perm", perm, DataType.INT32, None)], [y], 0), x, y


def test_a_staged_transpose_writes_an_intermediate_then_copies_it_whole() -> None:
    transpose, x, y = _transpose((1, 8, 12, 1), [0, 2, 1, 3], (1, 12, 8, 1))
    plain = lower_op(transpose)
    assert [writes_in_short_runs(o) for o in plain] == [True] and may_stage(transpose, plain)
    *writers, copy = lower_op(transpose, form=Form(staged=True))
    assert [o.ofm.name for o in writers] == ["y_staged"] and writers[0].writes_transposed
    assert (copy.ifm.name, copy.ofm, copy.name, copy.block_type) == ("y_staged", y, "y_staged_avgpool",
                                                                      BlockType.POOLING)
    assert copy.kernel.elements == 1 and copy.activation is Activation.NONE and not copy.writes_transposed
    assert copy.ifm.shape == y.shape and copy.ifm.quant == y.quant and copy.source_index == 0


def test_an_op_writing_whole_rows_or_a_map_no_copy_moves_exactly_has_no_staged_form() -> None:
    add = op("ADD", [fm("a", (1, 4, 4, 8)), fm("b", (1, 4, 4, 8))], [fm("c", (1, 4, 4, 8))], 0)
    assert staged_output(add, lower_op(add)) is None
    staged = lower_op(add, form=Form(staged=True))  # a form it does not have: its plain one
    assert [(o.name, o.ofm) for o in staged] == [(o.name, o.ofm) for o in lower_op(add)]
    wide, _, _ = _transpose((1, 8, 12, 1), [0, 2, 1, 3], (1, 12, 8, 1), DataType.INT32)
    assert not may_stage(wide, lower_op(wide))
    batched, _, _ = _transpose((2, 8, 12, 1), [0, 2, 1, 3], (2, 12, 8, 1))  # pt_attention_16x32: no such copy
    assert not may_stage(batched, lower_op(batched))  # is emitted, and a rewritten op cannot go to the CPU


def test_forms_offer_each_named_form_and_staged_ones_where_the_op_writes_in_short_runs() -> None:
    matrix, _, _ = _transpose((1, 6, 8, 1), [0, 2, 1, 3], (1, 8, 6, 1))  # 6 rows: tiles of 3
    assert op_forms(matrix, stageable=False) == (Form("convolutions"),)
    assert op_forms(matrix, stageable=True) == (Form("convolutions"), Form("", True), Form("convolutions", True))
    odd, _, _ = _transpose((1, 25, 48, 1), [0, 2, 1, 3], (1, 48, 25, 1))  # 25 rows: no tile, split 48 = 3 x 16
    splits = (Form("split_matrix_3_convolutions"), Form("split_matrix_2_convolutions"))
    assert op_forms(odd, stageable=False) == splits
    choices = form_choices([matrix, odd], frozenset({0}))  # both of index 0: the last one's forms
    assert [sorted(c) for c in choices] == [[(0, f)] for f in (*splits, Form("", True), *(f._replace(staged=True)
                                                                                         for f in splits))]


def _run_steps(npu_ops, source: np.ndarray) -> np.ndarray:
    """What a TRANSPOSE's steps write: each moves the elements of its IFM view (H x W x C) with the
    height and width strides swapped (W x H x C)."""
    maps = {npu_ops[0].ifm.name: source.reshape(-1)}
    for npu in npu_ops:
        view = npu.ifm_shape
        grid = maps[npu.ifm.name].reshape(view.h, view.w, view.c)
        maps[npu.ofm.name] = grid.transpose(1, 0, 2).reshape(-1)  # an element (y, x, c) lands at x, y, c
    return maps[npu_ops[-1].ofm.name]


@pytest.mark.parametrize("t", [3, 2])
def test_a_matrix_whose_rows_group_in_no_tile_splits_in_three_steps_that_transpose_it(t: int) -> None:
    """pt_audio1d_49's 25 x 48 NHWC -> NCHW: swap (25, t, 48/t) to (t, 25, 48/t), the matrix
    25t x 48/t by a tile convolution (tiles of t rows), swap (48/t, t, 25) to (t, 48/t, 25): 48 x 25."""
    transpose, x, y = _transpose((1, 1, 25, 48), [0, 3, 1, 2], (1, 48, 1, 25))
    lowered = lower(model(graph([transpose], [x], [y])), U55_128,
                    other_forms=frozenset({(0, Form(f"split_matrix_{t}_convolutions"))}))
    first, matrix, last = lowered.npu_ops
    assert [o.block_type for o in lowered.npu_ops] == [BlockType.POOLING, BlockType.CONV, BlockType.POOLING]
    assert (first.ifm_shape.h, first.ifm_shape.w, first.ifm_shape.c) == (25, t, 48 // t)
    assert (matrix.ifm_shape.h, matrix.ifm_shape.w, matrix.kernel.stride_y) == (25 * t, 48 // t, t)
    assert (last.ifm_shape.h, last.ifm_shape.w, last.ifm_shape.c) == (48 // t, t, 25) and last.ofm is y
    source = np.arange(25 * 48).reshape(25, 48)  # a tile convolution moves its view's elements as a pool does
    assert np.array_equal(_run_steps(lowered.npu_ops, source), source.T.reshape(-1))
    assert all(o.writes_transposed for o in lowered.npu_ops)
