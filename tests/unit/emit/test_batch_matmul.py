"""BATCH_MATMUL of two int8 feature maps emitted as Vela's default core runs it (issue 25): the right
operand transposed unless ``adj_y``, then per output column a fixed-point Mul and a ReduceSum into
the column. Each emitted file runs on the simulator bit for bit as LiteRT runs the model."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.ir.graph import Graph
from npuplan.ir.types import Quantization
from tests.unit.emit.conftest import U55_128, U65_DEDICATED
from tests.unit.emit.test_grouped_convs import _run_both
from tests.unit.lowering._build import fm, op

QA = Quantization(scale=(0.043,), zero_point=(5,))
QB = Quantization(scale=(0.021,), zero_point=(-7,))
QC = Quantization(scale=(0.31,), zero_point=(2,))


def _graph(a_shape, b_shape, c_shape, adj_y: bool, adj_x: bool = False) -> Graph:
    a, b, c = fm("a", a_shape, quant=QA), fm("b", b_shape, quant=QB), fm("c", c_shape, quant=QC)
    matmul = op("BATCH_MATMUL", [a, b], [c], 0, adj_x=adj_x, adj_y=adj_y, asymmetric_quantize_inputs=False)
    return Graph("bmm", (matmul,), (a, b), (c,))


@pytest.mark.parametrize("a_shape,b_shape,c_shape,adj_y,scenario", [
    ((1, 16, 32), (1, 16, 32), (1, 16, 16), True, U55_128),  # zoo/op_batch_matmul's: q @ k^T
    ((1, 4, 12, 8), (1, 4, 8, 10), (1, 4, 12, 10), False, U55_128),  # four heads, the right operand transposed
    ((1, 2, 9, 20), (1, 2, 7, 20), (1, 2, 9, 7), True, U65_DEDICATED),
    ((6, 24), (24, 5), (6, 5), False, U65_DEDICATED),  # 2-D
    ((3, 5, 17), (3, 17, 4), (3, 5, 4), False, U55_128),  # 3-D, three batches
    ((2, 3, 6, 8), (2, 3, 8, 5), (2, 3, 6, 5), False, U65_DEDICATED),  # a batch of 2 of 3 heads: 6 heads as rows
])
def test_a_batch_matmul_runs_on_the_npu_as_litert_runs_it(tmp_path, a_shape, b_shape, c_shape, adj_y, scenario):
    ops, got, expected = _run_both(tmp_path, _graph(a_shape, b_shape, c_shape, adj_y), scenario)
    assert got.shape == expected.shape and np.array_equal(got, expected)
    columns = c_shape[-1]
    assert sum(o.op_type == "ReduceSum" for o in ops) == columns and sum(o.op_type == "Mul" for o in ops) == columns
    assert any(o.writes_transposed for o in ops) != adj_y


@pytest.mark.parametrize("a_shape,b_shape,c_shape,adj_y,scenario", [
    ((1, 16, 16), (1, 16, 16), (1, 16, 16), False, U55_128),  # q^T @ k: both operands transposed
    ((1, 4, 8, 12), (1, 4, 10, 8), (1, 4, 12, 10), True, U65_DEDICATED),  # four heads, adj_x and adj_y
    ((24, 6), (24, 5), (6, 5), False, U55_128),  # 2-D
])
def test_a_transposed_left_operand_is_transposed_first(tmp_path, a_shape, b_shape, c_shape, adj_y, scenario):
    # adj_x (A is K x M): A transposed to M x K on the NPU as B is (Vela's default core: a Transpose
    # then the products); before, the BATCH_MATMUL stayed on the CPU
    ops, got, expected = _run_both(tmp_path, _graph(a_shape, b_shape, c_shape, adj_y, adj_x=True), scenario)
    assert got.shape == expected.shape and np.array_equal(got, expected)
    assert sum(o.op_type == "ReduceSum" for o in ops) == c_shape[-1]
    assert any(o.writes_transposed and "lhs" in o.ofm.name for o in ops)
