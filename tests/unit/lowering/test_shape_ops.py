"""Compile-time folding of constant subgraphs: exact values against numpy, what is left alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuplan.io.tflite import read_tflite
from npuplan.ir.graph import Tensor
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType
from npuplan.lowering.const_eval import EVALUATORS, evaluate
from npuplan.lowering.lower import lower
from npuplan.lowering.reshapes import drop_noop_reshapes
from npuplan.lowering.shape_ops import MAX_FOLDED_ELEMENTS, fold_shape_ops
from tests.tflite_builder import elementwise_model
from tests.unit.lowering._build import conv, const, fm, graph, model, op
from tests.unit.lowering.test_lower import U55_128

I32 = DataType.INT32
DATA = Path(__file__).resolve().parents[2] / "data"


def c32(name: str, values: Any) -> Tensor:
    return const(name, values, I32, None)


def out32(name: str, shape: tuple[int, ...] = ()) -> Tensor:
    return fm(name, shape, I32, None)


def fold_one(kind: str, inputs: list[Tensor | None], out: Tensor, **options: Any) -> np.ndarray | None:
    """Fold a single op feeding a consumer; its value, or None when it was kept."""
    sink = out32("sink", (1,))
    g = graph([op(kind, inputs, [out], 0, **options), op("CUSTOM:sink", [out], [sink], 1)], [], [sink])
    folded, removed = fold_shape_ops(g)
    if len(folded.ops) == 2:
        assert removed == ()
        return None
    assert [o.type for o in folded.ops] == ["CUSTOM:sink"] and removed[0][0] == out.name
    data = folded.ops[0].inputs[0].data  # type: ignore[union-attr]
    assert data is not None and data.dtype == np.dtype(out.dtype.value)
    return data


def test_keras_flatten_shape_arithmetic_folds_and_the_reshape_goes() -> None:
    x, y, r = fm("x", (1, 4, 4, 2)), fm("y", (1, 4, 4, 2)), fm("r", (1, 32))
    s, b, packed = out32("s", (4,)), out32("b"), out32("packed", (2,))
    one = c32("one", [1])
    ops = [
        conv(x, y, 1),
        op("SHAPE", [y], [s], 1),
        op("STRIDED_SLICE", [s, c32("z", [0]), one, one], [b], 2, shrink_axis_mask=1),
        op("PACK", [b, c32("m1", -1)], [packed], 3, axis=0, values_count=2),
        op("RESHAPE", [y, packed], [r], 4),
    ]
    folded, removed = fold_shape_ops(graph(ops, [x], [r]))
    assert [o.type for o in folded.ops] == ["CONV_2D", "RESHAPE"]
    shape = folded.ops[1].inputs[1]
    assert shape is not None and shape.data is not None and shape.data.tolist() == [1, -1]
    assert [reason for _, reason in removed] == [
        "SHAPE of 'y' is the constant [1, 4, 4, 2]",
        "STRIDED_SLICE of constants is the constant 1",
        "PACK of constants is the constant [1, -1]",
    ]
    dropped, gone = drop_noop_reshapes(folded)
    assert [o.type for o in dropped.ops] == ["CONV_2D"] and gone[0][0] == "r"


@pytest.mark.parametrize(
    ("data", "begin", "end", "strides", "options", "expected"),
    [
        ([1, 8, 8, 16], [1], [3], [1], {}, [8, 8]),
        ([1, 8, 8, 16], [-1], [0], [1], {"end_mask": 1}, [16]),
        ([1, 8, 8, 16], [-1], [0], [-1], {"end_mask": 1}, [16, 8, 8, 1]),
        ([1, 8, 8, 16], [0], [10], [2], {}, [1, 8]),
        ([1, 8, 8, 16], [5], [2], [1], {}, []),
        ([[1, 2, 3], [4, 5, 6]], [0, 1], [2, 3], [1, 1], {"shrink_axis_mask": 1}, [2, 3]),
        ([[1, 2, 3], [4, 5, 6]], [0, -1], [2, 0], [1, 1], {"shrink_axis_mask": 2}, [3, 6]),
        ([[1, 2, 3], [4, 5, 6]], [1, 0], [0, 0], [1, 1], {"begin_mask": 1, "end_mask": 3}, [[1, 2, 3], [4, 5, 6]]),
    ],
)
def test_strided_slice_values(data: Any, begin: Any, end: Any, strides: Any, options: dict[str, int],
                              expected: Any) -> None:
    d = np.asarray(data)
    out = out32("o", np.asarray(expected).shape)
    got = fold_one("STRIDED_SLICE", [c32("d", d), c32("b", begin), c32("e", end), c32("s", strides)], out, **options)
    assert got is not None and got.tolist() == expected


@settings(max_examples=200, derandomize=True)
@given(
    st.lists(st.integers(-7, 7), min_size=3, max_size=3),
    st.integers(0, 7),
    st.integers(0, 7),
)
def test_strided_slice_matches_python_slicing(bounds: list[int], begin_mask: int, end_mask: int) -> None:
    data = np.arange(6) * 10
    start, stop, step = bounds[0], bounds[1], bounds[2] or 1
    expected = data[slice(None if begin_mask & 1 else start, None if end_mask & 1 else stop, step)]
    got = evaluate(
        op("STRIDED_SLICE", [c32("d", data), c32("b", [start]), c32("e", [stop]), c32("s", [step])],
           [out32("o")], begin_mask=begin_mask, end_mask=end_mask),
        [data, np.array([start]), np.array([stop]), np.array([step])], 1000,
    )
    assert got is not None and got.tolist() == expected.tolist()


def test_gather_reduce_prod_concat_and_cast() -> None:
    params = np.array([1, 8, 8, 16], dtype=np.int32)
    got = fold_one("GATHER", [c32("p", params), c32("i", [3, 1])], out32("g", (2,)), axis=0)
    assert got is not None and got.tolist() == [16, 8]
    got = fold_one("REDUCE_PROD", [c32("p", params), c32("a", [0])], out32("r"), keep_dims=False)
    assert got is not None and got.tolist() == 1024
    got = fold_one("CONCATENATION", [c32("a", [1]), c32("b", [64, 16])], out32("c", (3,)), axis=0,
                   fused_activation_function="NONE")
    assert got is not None and got.tolist() == [1, 64, 16]
    got = fold_one("CAST", [const("f", [2.9, -2.9, 7.0], DataType.FLOAT32, None)], out32("k", (3,)))
    assert got is not None and got.tolist() == [2, -2, 7]  # truncation toward zero, as static_cast


def test_arithmetic_broadcasts_and_floors() -> None:
    a, b = np.array([[7], [-7]], dtype=np.int32), np.array([2, -3], dtype=np.int32)
    for kind, expected in (("ADD", a + b), ("SUB", a - b), ("MUL", a * b), ("FLOOR_DIV", np.floor_divide(a, b)),
                           ("FLOOR_MOD", np.mod(a, b)), ("MAXIMUM", np.maximum(a, b))):
        got = fold_one(kind, [c32("a", a), c32("b", b)], out32("o", (2, 2)), fused_activation_function="NONE")
        assert got is not None and got.tolist() == expected.tolist(), kind


def test_fill_range_tile_reshape_squeeze_expand() -> None:
    got = fold_one("FILL", [c32("d", [2, 3]), c32("v", 5)], out32("o", (2, 3)))
    assert got is not None and got.tolist() == np.full((2, 3), 5).tolist()
    got = fold_one("RANGE", [c32("s", 0), c32("l", 5), c32("d", 2)], out32("o", (3,)))
    assert got is not None and got.tolist() == [0, 2, 4]
    got = fold_one("RANGE", [c32("s", 5), c32("l", 0), c32("d", -2)], out32("o", (3,)))
    assert got is not None and got.tolist() == [5, 3, 1]
    got = fold_one("TILE", [c32("t", [[1, 2]]), c32("m", [2, 2])], out32("o", (2, 4)))
    assert got is not None and got.tolist() == np.tile([[1, 2]], (2, 2)).tolist()
    got = fold_one("RESHAPE", [c32("t", np.arange(6)), c32("s", [-1, 3])], out32("o", (2, 3)))
    assert got is not None and got.tolist() == np.arange(6).reshape(2, 3).tolist()
    got = fold_one("SQUEEZE", [c32("t", [[[4]], [[5]]])], out32("o", (2,)), squeeze_dims=(1, 2))
    assert got is not None and got.tolist() == [4, 5]
    got = fold_one("EXPAND_DIMS", [c32("t", [4, 5]), c32("a", -1)], out32("o", (2, 1)))
    assert got is not None and got.tolist() == [[4], [5]]


@pytest.mark.parametrize(
    ("kind", "inputs", "options"),
    [
        ("FILL", [c32("d", [1 << 15, 1 << 15]), c32("v", 0)], {}),  # 2^30 elements: over the bound
        ("RANGE", [c32("s", 0), c32("l", 1 << 30), c32("d", 1)], {}),
        ("TILE", [c32("t", np.zeros(64)), c32("m", [1 << 20])], {}),
        ("GATHER", [c32("p", [1, 2, 3]), c32("i", [3])], {"axis": 0}),  # index out of range
        ("STRIDED_SLICE", [c32("d", [1, 2]), c32("b", [0]), c32("e", [1]), c32("s", [1])], {"ellipsis_mask": 1}),
        ("STRIDED_SLICE", [c32("d", [1, 2]), c32("b", [5]), c32("e", [6]), c32("s", [1])], {"shrink_axis_mask": 1}),
        ("FLOOR_DIV", [c32("a", [4]), c32("b", [0])], {"fused_activation_function": "NONE"}),
        ("ADD", [c32("a", [4]), c32("b", [1])], {"fused_activation_function": "RELU"}),
        ("MUL", [c32("a", [1 << 20]), c32("b", [1 << 20])], {"fused_activation_function": "NONE"}),  # overflow
        ("UNKNOWN_OP", [c32("a", [4])], {}),
        ("RANGE", [const("s", 0.0, DataType.FLOAT32, None), const("l", 1.0, DataType.FLOAT32, None),
                   const("d", 0.1, DataType.FLOAT32, None)], {}),  # float steps accumulate
    ],
)
def test_not_folded(kind: str, inputs: list[Tensor], options: dict[str, Any]) -> None:
    assert fold_one(kind, inputs, out32("o"), **options) is None


def test_bound_is_what_the_module_says() -> None:
    assert fold_one("FILL", [c32("d", [MAX_FOLDED_ELEMENTS]), c32("v", 1)], out32("o", (MAX_FOLDED_ELEMENTS,)))\
        is not None
    assert fold_one("FILL", [c32("d", [MAX_FOLDED_ELEMENTS + 1]), c32("v", 1)], out32("o")) is None


def test_quantized_arithmetic_and_feature_maps_are_not_folded() -> None:
    a, b = const("a", [1, 2]), const("b", [3, 4])  # int8 with quantization: ADD would need rescaling
    assert fold_one("ADD", [a, b], fm("o", (2,)), fused_activation_function="NONE") is None
    x, y = fm("x", (1, 4)), fm("y", (1, 4))
    g = graph([op("NEG", [x], [y], 0)], [x], [y])
    assert fold_shape_ops(g) == (g, ())


def test_quantized_reshape_of_a_constant_folds_when_quantization_is_kept() -> None:
    w = const("w", np.arange(6).reshape(2, 3))
    got = fold_one("RESHAPE", [w, c32("s", [3, 2])], Tensor("o", (3, 2), DataType.INT8, w.quant))
    assert got is not None and got.tolist() == np.arange(6).reshape(3, 2).tolist()


def test_graph_output_is_not_folded() -> None:
    s = out32("s", (4,))
    g = graph([op("SHAPE", [fm("x", (1, 2, 2, 1))], [s])], [], [s])
    assert fold_shape_ops(g) == (g, ())


def test_shape_of_dynamic_tensor_is_kept() -> None:
    x, s = Tensor("x", (1, -1, 4), DataType.INT8), out32("s", (3,))
    assert fold_one("SHAPE", [x], s) is None


def test_chain_folds_and_unrelated_ops_are_kept() -> None:
    # a folded op's consumer is rewired to the constant; an unrelated op is untouched
    x, y = fm("x", (1, 4)), fm("y", (1, 4))
    keep = op("NEG", [x], [y], 0)
    s, sink = out32("s", (1,)), out32("sink", (1,))
    g = graph([keep, op("NEG", [c32("c", [3])], [s], 1), op("NEG", [s], [sink], 2)], [x], [y, sink])
    folded, removed = fold_shape_ops(g)
    assert folded.ops[0] is keep and removed == (("s", "NEG of constants is the constant [-3]"),)
    assert folded.ops[1].inputs[0] is not None and folded.ops[1].inputs[0].data.tolist() == [-3]  # type: ignore[union-attr]


def test_dynamic_placeholder_shapes_of_a_keras_tensordot_are_inferred() -> None:
    # Dense on a 3-D input with a dynamic batch: reshape to [-1, 16] (declared 1 x 1), matmul, reshape back
    x, flat, mm, out = fm("x", (1, 8, 8, 16)), fm("flat", (1, 1)), fm("mm", (1, 32)), fm("out", (1, 64, 32))
    w = const("w", np.ones((32, 16)))
    g = graph([op("RESHAPE", [x, c32("s1", [-1, 16])], [flat], 0),
               op("FULLY_CONNECTED", [flat, w, None], [mm], 1, keep_num_dims=False),
               op("RESHAPE", [mm, c32("s2", [1, 64, 32])], [out], 2)], [x], [out])
    fixed, removed = fold_shape_ops(g)
    assert removed == ()
    reshape, fc, back = fixed.ops
    assert reshape.outputs[0].shape == (64, 16) and fc.inputs[0] is reshape.outputs[0]
    assert fc.outputs[0].shape == (64, 32) and back.inputs[0] is fc.outputs[0]
    assert back.outputs[0] is out and fixed.outputs == (out,)  # declared right: kept
    (matmul,) = lower(model(g), U55_128).npu_ops  # 64 token rows, not the placeholder's one
    assert matmul.op_type == "Conv2DBias" and matmul.ifm_shape == Shape4D(1, 1, 64, 16)


def test_consistent_declared_shapes_are_kept() -> None:
    x, r = fm("x", (1, 4, 4, 2)), fm("r", (1, 32))
    g = graph([op("RESHAPE", [x, c32("s", [1, -1])], [r], 0)], [x], [r])
    assert fold_shape_ops(g) == (g, ())


@settings(max_examples=400, derandomize=True, deadline=None)
@given(
    st.sampled_from(sorted(EVALUATORS)),
    st.lists(st.tuples(st.sampled_from(["int32", "int64", "float32", "int8", "bool"]),
                       st.lists(st.integers(0, 3), max_size=3), st.booleans()), max_size=4),
    st.sampled_from(["int32", "int64", "float32", "int8", "bool"]),
    st.dictionaries(st.sampled_from(["axis", "begin_mask", "end_mask", "shrink_axis_mask", "batch_dims"]),
                    st.integers(-3, 7)),
    st.randoms(use_true_random=False),
)
def test_hostile_inputs_never_raise_and_stay_bounded(kind: str, specs: list[Any], out_dtype: str,
                                                     options: dict[str, int], rnd: Any) -> None:
    rng = np.random.default_rng(rnd.randint(0, 2**31))
    values = []
    for dtype, shape, big in specs:
        bound = 2**31 - 1 if big else 7
        values.append(rng.integers(-bound, bound, size=tuple(shape)).astype(dtype))
    inputs = [Tensor(f"i{n}", v.shape, DataType(str(v.dtype)), None, v) for n, v in enumerate(values)]
    out = Tensor("o", (), DataType(out_dtype))
    got = evaluate(op(kind, inputs, [out], **options), values, 50)
    assert got is None or (got.size <= 50 and got.dtype == np.dtype(out_dtype))


def test_absent_optional_input_keeps_positions() -> None:
    # STRIDED_SLICE with its (optional) strides absent: begin/end stay at their positions
    got = fold_one("STRIDED_SLICE", [c32("d", [1, 8, 8, 16]), c32("b", [1]), c32("e", [3]), None], out32("o", (2,)))
    assert got is not None and got.tolist() == [8, 8]


def test_shape_of_a_tensor_with_an_open_axis_is_not_folded() -> None:
    # shape signature [-1, -1, 16]: the 1 stored on axis 1 is a placeholder, not a size
    x = Tensor("x", (1, 1, 16), DataType.INT8, dynamic_axes=(1,))
    assert fold_one("SHAPE", [x], out32("s", (3,))) is None


def test_inferred_shape_closes_open_axes_even_when_the_placeholder_size_matches() -> None:
    x, flat = fm("x", (1, 1, 1, 16)), Tensor("flat", (1, 16), DataType.INT8, dynamic_axes=(1,))
    y = fm("y", (1, 16))
    g = graph([op("RESHAPE", [x, c32("s", [-1, 16])], [flat], 0), op("NEG", [flat], [y], 1)], [x], [y])
    fixed, _ = fold_shape_ops(g)
    assert fixed.ops[0].outputs[0].dynamic_axes == () and fixed.ops[0].outputs[0].shape == (1, 16)
    assert fixed.ops[1].inputs[0] is fixed.ops[0].outputs[0]
    # and a SHAPE of the closed tensor now folds
    s = out32("s2", (2,))
    g2 = graph([op("RESHAPE", [x, c32("s", [-1, 16])], [flat], 0), op("SHAPE", [flat], [s], 1),
                op("CUSTOM:sink", [s], [y], 2)], [x], [y])
    folded, removed = fold_shape_ops(g2)
    assert [o.type for o in folded.ops] == ["RESHAPE", "CUSTOM:sink"] and removed[0][0] == "s2"


def test_reader_marks_only_open_axes_after_the_first(tmp_path: Path) -> None:
    tensors = read_tflite(DATA / "ds_cnn_kws.tflite").main.tensors()
    assert all(t.dynamic_axes == () for t in tensors)  # only the batch is dynamic there
    path = tmp_path / "open.tflite"
    path.write_bytes(elementwise_model(shape=(1, 1, 8, 4), signature=(-1, -1, 8, 4)))
    (x, *_) = read_tflite(path).main.tensors()
    assert x.shape == (1, 1, 8, 4) and x.dynamic_axes == (1,)
