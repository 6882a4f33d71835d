"""An elementwise operation whose first operand is the broadcast one runs with the operands
reversed (the hardware broadcasts the second only), as Vela runs it."""

from __future__ import annotations

import pytest

from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization
from tests.unit.emit._stream import registers_at_kicks
from tests.unit.emit.conftest import emit_graph

REVERSE_OPERAND_ORDER, BROADCAST_C = 64, 4


@pytest.mark.parametrize("kind", ["MUL", "SUB"])
def test_a_broadcast_first_operand_is_read_as_the_second(tmp_path, kind):
    q = Quantization((0.05,), (-3,))
    a = Tensor("a", (1, 8, 8, 1), DataType.INT8, q)
    b = Tensor("b", (1, 8, 8, 16), DataType.INT8, Quantization((0.03,), (4,)))
    y = Tensor("y", (1, 8, 8, 16), DataType.INT8, Quantization((0.1,), (0,)))
    graph = Graph("bcast", (Op(kind, (a, b), (y,), frozen_options({"fused_activation_function": "NONE"}), 0),),
                  (a, b), (y,))
    _, emitted, _ = emit_graph(tmp_path, graph)
    (broadcast,) = registers_at_kicks(emitted.data, "IFM2_BROADCAST")
    assert broadcast == REVERSE_OPERAND_ORDER | BROADCAST_C


def test_a_constant_first_operand_runs_reversed(tmp_path):
    """SUB(1.0, x) (a GRU's 1 - z): the lowering puts the feature map first and flags the swap, so
    the hardware computes the constant less the feature map."""
    import numpy as np

    q = Quantization((0.05,), (-3,))
    one = np.full((), 20, dtype=np.int8)
    one.flags.writeable = False
    c = Tensor("one", (), DataType.INT8, q, one)
    x, y = Tensor("x", (1, 4, 4, 8), DataType.INT8, q), Tensor("y", (1, 4, 4, 8), DataType.INT8, q)
    graph = Graph("rsub", (Op("SUB", (c, x), (y,), frozen_options({"fused_activation_function": "NONE"}), 0),),
                  (x,), (y,))
    planned, emitted, _ = emit_graph(tmp_path, graph)
    (sub,) = planned.lowered.npu_ops
    assert sub.ifm.name == "x" and sub.reversed_operands
    (broadcast,) = registers_at_kicks(emitted.data, "IFM2_BROADCAST")
    assert broadcast & REVERSE_OPERAND_ORDER
