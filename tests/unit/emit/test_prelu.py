"""PRELU emitted in each of Vela's decompositions: a lookup table (one alpha), max(x * alpha, x)
(every alpha below 1), and min(x, 0) * alpha + relu(x) summed unscaled (any other alphas)."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.lut_tables import activation_table
from tests.unit.emit.conftest import emit_graph

IN_Q, OUT_Q = Quantization((0.05,), (-3,)), Quantization((0.04,), (5,))


def _prelu_graph(alphas: list[int], alpha_scale: float) -> Graph:
    x = Tensor("x", (1, 8, 8, 4), DataType.INT8, IN_Q)
    y = Tensor("y", (1, 8, 8, 4), DataType.INT8, OUT_Q)
    data = np.array(alphas, dtype=np.int8).reshape(1, 1, len(alphas))
    data.flags.writeable = False
    alpha = Tensor("alpha", data.shape, DataType.INT8, Quantization((alpha_scale,), (0,)), data)
    return Graph("prelu", (Op("PRELU", (x, alpha), (y,), frozen_options({}), 0),), (x,), (y,))


@pytest.mark.parametrize(("alphas", "scale", "kinds"), [
    ([25], 0.01, ["ElementWise"]),  # one alpha (0.25): a table
    ([10, 20, 30, 40], 0.01, ["ElementWise", "ElementWise", "ElementWise"]),  # below 1: mul, identity, max
    ([10, -20, 120, 40], 0.02, ["ElementWise", "ElementWise", "Pooling", "ElementWise"]),  # catch-all
])
def test_prelu_runs_on_the_npu(tmp_path, alphas, scale, kinds):
    from npuplan.regstream.events import NpuEvent

    _, _, report = emit_graph(tmp_path, _prelu_graph(alphas, scale))
    assert [e.kind for s in report.streams for e in s.events if isinstance(e, NpuEvent)] == kinds


def test_one_alpha_table_is_tflites_reference():
    """Entry by entry within one step of the real function (the reference rounds twice)."""
    table = activation_table("PRELU", DataType.INT8, IN_Q, OUT_Q, {"alpha_q": 25, "alpha_scale": 0.01})
    assert table is not None
    x = (np.arange(-128, 128) + 3) * 0.05
    real = np.where(x >= 0, x, x * 0.25) / 0.04 + 5
    assert np.abs(table.astype(float) - np.clip(real, -128, 127)).max() <= 1.0
    assert table[128 - 3] == 5  # a real 0 maps to the output zero point
