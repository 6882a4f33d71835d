"""Operators the deploy path emits that it once left on the CPU (issue 25: Vela 5.2.0 runs them on
the NPU): MIRROR_PAD (REFLECT and SYMMETRIC, borders of several rows and columns reflected one at a
time) and REDUCE_MIN (an inverting SUB, REDUCE_MAX's pool, and a SUB inverting back). Each emitted
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
])
def test_a_mirror_pad_runs_on_the_npu_as_litert_runs_it(tmp_path, shape, pads, mode, scenario):
    x = fm("x", shape, quant=Q)
    out = tuple(d + a + b for d, (a, b) in zip(shape, pads))
    y = fm("y", out, quant=Q)
    graph = Graph("mirror", (op("MIRROR_PAD", [x, const("pads", pads, DataType.INT32, None)], [y], 0, mode=mode),),
                  (x,), (y,))
    ops, got, expected = _run_both(tmp_path, graph, scenario)
    (top, bottom), (left, right) = pads[1], pads[2]
    assert len(ops) == (1 + top + bottom) * (1 + left + right)  # every border row, column and corner pixel
    assert got.shape == expected.shape and np.array_equal(got, expected)


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
