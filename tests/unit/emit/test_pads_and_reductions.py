"""Operators the deploy path emits that it once left on the CPU (issue 25: Vela 5.2.0 runs them on
the NPU): MIRROR_PAD (REFLECT and SYMMETRIC, each border band of several rows or columns reflected as
one copy written backwards, each padded channel as one copy), REDUCE_MIN (an inverting SUB, REDUCE_MAX's pool, and a SUB inverting back), PADV2 and a
CONCATENATION of a constant (copied from the flash as a PAD's fill is). Each emitted
file runs on the simulator bit for bit as LiteRT runs the model (the functional reference)."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.ir.graph import Graph
from npuplan.ir.types import DataType, Quantization
from tests.unit.emit.conftest import U55_128, U65_DEDICATED
from tests.unit.emit.test_grouped_convs import _run_both
from tests.unit.lowering._build import const, fm, op

Q = Quantization(scale=(0.05,), zero_point=(-3,))


@pytest.mark.parametrize("shape,pads,mode,scenario", [
    ((1, 6, 7, 8), [[0, 0], [1, 1], [1, 1], [0, 0]], 0, U55_128),
    ((1, 6, 7, 8), [[0, 0], [2, 3], [3, 1], [0, 0]], 0, U55_128),  # REFLECT: at most size - 1
    ((1, 5, 6, 3), [[0, 0], [2, 2], [1, 3], [0, 0]], 1, U55_128),  # SYMMETRIC: at most size
    ((1, 5, 5, 16), [[0, 0], [0, 0], [2, 2], [0, 0]], 1, U65_DEDICATED),
    ((1, 4, 6, 20), [[0, 0], [3, 1], [0, 0], [0, 0]], 0, U65_DEDICATED),
    ((1, 7, 9, 5), [[0, 0], [4, 6], [7, 5], [0, 0]], 1, U65_DEDICATED),  # bands of up to seven, SYMMETRIC
    ((1, 8, 6, 16), [[0, 0], [7, 3], [5, 4], [0, 0]], 0, U55_128),  # REFLECT of every row but the edge
    ((6, 7, 8), [[2, 3], [3, 2], [0, 0]], 0, U55_128),  # 3D: no batch
    ((9, 4), [[4, 3], [0, 0]], 1, U65_DEDICATED),  # 2D: pads the width
    ((1, 4, 5, 6), [[0, 0], [1, 2], [0, 1], [2, 1]], 0, U55_128),  # the depth too: a copy per channel
    ((5, 7), [[1, 2], [3, 3]], 1, U65_DEDICATED),
])
def test_a_mirror_pad_runs_on_the_npu_as_litert_runs_it(tmp_path, shape, pads, mode, scenario):
    x = fm("x", shape, quant=Q)
    out = tuple(d + a + b for d, (a, b) in zip(shape, pads))
    y = fm("y", out, quant=Q)
    graph = Graph("mirror", (op("MIRROR_PAD", [x, const("pads", pads, DataType.INT32, None)], [y], 0, mode=mode),),
                  (x,), (y,))
    ops, got, expected = _run_both(tmp_path, graph, scenario)
    assert got.shape == expected.shape and np.array_equal(got, expected)
    (top, bottom), (left, right), (near, far) = ([[0, 0]] * (4 - len(pads)) + pads)[1:]
    bands = (top > 0) + (bottom > 0) + (left > 0) + (right > 0) + near + far
    # the output in the U65's slow arena: the rows padded in fast storage first, then copied (Vela's legacy form);
    # the mirrored bands' short runs written to a staged map there too, which one copy writes to the output
    # (``lowering.staged_writes``), where the cost model finds it cheaper
    through_rows = any(o.name.endswith("_rows_copy") for o in ops)
    staged = any(o.name.endswith("_staged_avgpool") for o in ops)
    assert len(ops) == 1 + bands + through_rows + staged
    assert through_rows == (scenario is U65_DEDICATED and pads[-2] != [0, 0]) and (not staged or scenario is U65_DEDICATED)


@pytest.mark.parametrize("shape,axes,dtype,scenario", [
    ((1, 8, 8, 8), [1, 2], DataType.INT8, U55_128),
    ((1, 10, 10, 12), [2], DataType.INT8, U55_128),
    ((1, 6, 7, 20), [3], DataType.INT8, U65_DEDICATED),
    ((1, 5, 9, 4), [1], DataType.INT8, U55_128),
])
def test_a_reduce_min_runs_on_the_npu_as_litert_runs_it(tmp_path, shape, axes, dtype, scenario):
    x = fm("x", shape, dtype, quant=Q)
    out = tuple(1 if i in axes else d for i, d in enumerate(shape))
    y = fm("y", out, dtype, quant=Q)
    graph = Graph("rmin", (op("REDUCE_MIN", [x, const("axes", axes, DataType.INT32, None)], [y], 0, keep_dims=True),),
                  (x,), (y,))
    ops, got, expected = _run_both(tmp_path, graph, scenario)
    assert [o.op_type for o in ops][0] == "Sub" and [o.op_type for o in ops][-1] == "Sub"
    assert got.shape == expected.shape and np.array_equal(got, expected)


def _padv2(x, y, pads, value: int, value_quant=Q, index: int = 0):
    return op("PADV2", [x, const("pads", pads, DataType.INT32, None), const("value", value, quant=value_quant)], [y],
              index)


@pytest.mark.parametrize("shape,pads,value,scenario", [
    ((1, 6, 7, 8), [[0, 0], [1, 2], [2, 1], [0, 0]], -128, U55_128),  # a max pool's -inf border
    ((1, 5, 5, 16), [[0, 0], [0, 0], [1, 1], [2, 3]], 77, U65_DEDICATED),  # depth padded too
    ((1, 4, 6, 3), [[0, 0], [2, 2], [0, 0], [0, 0]], -3, U55_128),  # the zero point: as a PAD
])
def test_a_padv2_runs_on_the_npu_as_litert_runs_it(tmp_path, shape, pads, value, scenario):
    x = fm("x", shape, quant=Q)
    y = fm("y", tuple(d + a + b for d, (a, b) in zip(shape, pads)), quant=Q)
    graph = Graph("padv2", (_padv2(x, y, pads, value),), (x,), (y,))
    ops, got, expected = _run_both(tmp_path, graph, scenario)
    fills = [o for o in ops if o.ifm.is_constant]
    assert fills and all(int(o.ifm.data.reshape(-1)[0]) == value for o in fills)
    assert got.shape == expected.shape and np.array_equal(got, expected)


def test_a_padv2_of_the_zero_point_folds_into_the_convolution_and_no_other_does() -> None:
    from npuplan.hw.accelerator import accelerator
    from npuplan.lowering.lower import lower
    from tests.unit.lowering._build import conv, graph, model

    pads = [[0, 0], [1, 1], [1, 1], [0, 0]]
    for value, folded in ((-3, True), (-128, False)):
        x, p, y = fm("x", (1, 6, 6, 8)), fm("p", (1, 8, 8, 8)), fm("y", (1, 6, 6, 8))
        lowered = lower(model(graph([_padv2(x, p, pads, value), conv(p, y, padding="VALID", index=1)], [x], [y])),
                        accelerator("ethos-u55-128"))
        assert ({o.tflite_type for o in lowered.npu_ops} == {"CONV_2D"}) is folded
        assert not lowered.cpu_ops


def test_a_padv2_of_another_quantization_stays_on_the_cpu() -> None:
    from npuplan.lowering.support import unsupported_reason

    x, y = fm("x", (1, 4, 4, 8)), fm("y", (1, 6, 6, 8))
    other = Quantization(scale=(0.1,), zero_point=(0,))
    reason = unsupported_reason(_padv2(x, y, [[0, 0], [1, 1], [1, 1], [0, 0]], 5, value_quant=other))
    assert reason is not None and "quantization" in reason


@pytest.mark.parametrize("token_shape,axis,first", [((1, 1, 8), 1, True), ((1, 16, 3), 2, False)])
def test_a_concatenated_constant_is_copied_from_the_flash_as_litert_concatenates_it(tmp_path, token_shape, axis,
                                                                                     first):
    """A vision transformer's class token (a constant) concatenated before its patch tokens, or a
    constant concatenated after a map's depth (TFLite requires the output's quantization on both)."""
    rng = np.random.default_rng(5)
    x = fm("x", (1, 16, 8), quant=Q)
    y = fm("y", tuple(d + (token_shape[axis] if i == axis else 0) for i, d in enumerate(x.shape)), quant=Q)
    token = const("cls", rng.integers(-128, 128, token_shape), quant=Q)
    graph = Graph("cls", (op("CONCATENATION", [token, x] if first else [x, token], [y], 0, axis=axis,
                             fused_activation_function="NONE"),), (x,), (y,))
    ops, got, expected = _run_both(tmp_path, graph, U55_128)
    assert any(o.ifm.is_constant and o.ifm.name == token.name for o in ops)
    assert got.shape == expected.shape and np.array_equal(got, expected)


def test_pad_folding_passes_over_an_operator_without_outputs() -> None:
    """An ASSIGN_VARIABLE (no outputs) before a PAD: the pass asks a PAD's fill only of pads."""
    from npuplan.lowering.pads import fold_pads

    x, p = fm("x", (1, 4, 4, 8)), fm("p", (1, 6, 6, 8))
    handle = fm("handle", (1,), DataType.INT32, None)
    assign = op("ASSIGN_VARIABLE", [handle, x], [], 0)
    pad = op("PAD", [x, const("pads", [[0, 0], [1, 1], [1, 1], [0, 0]], DataType.INT32, None)], [p], 1)
    graph, removed = fold_pads(Graph("g", (assign, pad), (x, handle), (p,)))
    assert [o.type for o in graph.ops] == ["ASSIGN_VARIABLE", "PAD"] and not removed
