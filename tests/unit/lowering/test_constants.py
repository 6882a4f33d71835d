"""Compile-time folding: exact values, the cases left alone, and bounded sizes."""

from __future__ import annotations

import numpy as np

from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.constants import MAX_FOLDED_ELEMENTS, fold_constants

from ._build import const, fm, graph, op


def _i32(name: str, values: object):
    return const(name, values, DataType.INT32, None)


def _folded(ops, inputs, outputs):
    g, removed = fold_constants(graph(ops, inputs, outputs))
    return g, removed


def test_keras_flatten_shape_arithmetic_folds_to_a_constant_shape() -> None:
    shape = _i32("shape", [1, 7, 7, 32])
    begin, end, strides = _i32("b", [0]), _i32("e", [1]), _i32("s", [1])
    batch = fm("batch", (), DataType.INT32, None)
    packed = fm("packed", (2,), DataType.INT32, None)
    x, y = fm("x", (1, 7, 7, 32)), fm("y", (1, 1568))
    ops = [
        op("STRIDED_SLICE", [shape, begin, end, strides], [batch], 0, shrink_axis_mask=1),
        op("PACK", [batch, _i32("n", -1)], [packed], 1, axis=0, values_count=2),
        op("RESHAPE", [x, packed], [y], 2),
    ]
    g, removed = _folded(ops, [x], [y])
    (reshape,) = g.ops
    assert reshape.inputs[1] is not None and reshape.inputs[1].data is not None
    assert reshape.inputs[1].data.tolist() == [1, -1] and reshape.inputs[1].dtype == DataType.INT32
    assert [r for _, r in removed] == ["STRIDED_SLICE of constants folded at compile time",
                                       "PACK of constants folded at compile time"]


def test_arithmetic_reductions_and_gather_match_numpy() -> None:
    a, b = _i32("a", [[2, 3], [4, 5]]), _i32("b", [10, 20])
    outs = [fm(n, s, DataType.INT32, None) for n, s in (("sum", (2, 2)), ("prod", (2,)), ("g", (1, 2)))]
    sink = fm("sink", (1,), DataType.INT32, None)
    ops = [
        op("ADD", [a, b], [outs[0]], 0),
        op("REDUCE_PROD", [a, _i32("axes", [0])], [outs[1]], 1, keep_dims=False),
        op("GATHER", [a, _i32("idx", [1])], [outs[2]], 2, axis=0),
        op("CUSTOM:keep", outs, [sink], 3),  # an op never folded reads the results
    ]
    g, removed = _folded(ops, [], [sink])
    (keep,) = g.ops
    values = {t.name: t.data.tolist() for t in keep.inputs if t is not None and t.data is not None}
    assert values == {"sum": [[12, 23], [14, 25]], "prod": [8, 15], "g": [[4, 5]]}
    assert len(removed) == 3


def test_quantized_arithmetic_and_large_results_are_left_alone() -> None:
    q = Quantization((0.5,), (0,))
    a = const("a", [1, 2], DataType.INT8, q)
    y = fm("y", (2,), DataType.INT8, q)
    g, removed = _folded([op("ADD", [a, a], [y], 0)], [], [fm("z", (2,))])
    assert len(g.ops) == 1 and not removed
    dims = _i32("dims", [MAX_FOLDED_ELEMENTS + 1])
    big = fm("big", (MAX_FOLDED_ELEMENTS + 1,), DataType.INT32, None)
    g, removed = _folded([op("FILL", [dims, _i32("v", 0)], [big], 0)], [], [fm("z", (1,))])
    assert len(g.ops) == 1 and not removed


def test_graph_outputs_are_not_folded() -> None:
    a = _i32("a", [1, 2])
    y = fm("y", (2,), DataType.INT32, None)
    g, _ = _folded([op("ADD", [a, a], [y], 0)], [], [y])
    assert len(g.ops) == 1
    assert np.array_equal(a.data, [1, 2])


def test_a_quantized_fill_of_a_constant_folds_to_its_value() -> None:
    """A Keras LSTM's initial state: FILL(dims, zero point) in int8; folded keeping its quantization."""
    q = Quantization((0.02,), (-5,))
    zero = const("zero", -5, DataType.INT8, q)
    state = fm("state", (1, 16), DataType.INT8, q)
    y = fm("y", (1, 16))
    g, removed = _folded([op("FILL", [_i32("dims", [1, 16]), zero], [state], 0),
                          op("ADD", [state, fm("x", (1, 16))], [y], 1)], [], [y])
    (add,) = g.ops
    folded = add.inputs[0]
    assert folded.data is not None and folded.data.dtype == np.int8 and folded.quant == q
    assert folded.data.shape == (1, 16) and (folded.data == -5).all() and len(removed) == 1
    other = fm("other", (1, 16), DataType.INT8, Quantization((0.5,), (0,)))  # requantizing: not a move
    g, removed = _folded([op("FILL", [_i32("dims", [1, 16]), zero], [other], 0)], [], [fm("z", (1,))])
    assert len(g.ops) == 1 and not removed
