"""Feature-map format rules (NHWC vs NHCWB16) and the primary-input operand swap."""

from __future__ import annotations

import numpy as np

from npuplan.hw.accelerator import accelerator
from npuplan.ir.types import DataType
from npuplan.lowering import lower
from npuplan.lowering.formats import linear_format_tensors
from npuplan.lowering.operands import primary_input_first
from tests.unit.lowering._build import Q, const, conv, fm, graph, model, op

U55_128 = accelerator("ethos-u55-128")


def test_internal_fm_is_brick_unless_an_elementwise_ofm_can_overwrite_a_linear_input() -> None:
    x, a, b, c = fm("x", (1, 8, 8, 16)), fm("a", (1, 8, 8, 16)), fm("b", (1, 8, 8, 16)), fm("c", (1, 8, 8, 3))
    y = fm("y", (1, 8, 8, 3))
    ops = [conv(x, a, 1, index=0), conv(a, b, 1, index=1), conv(b, c, 1, index=2),
           op("ADD", [c, const("k", np.ones((1, 8, 8, 3)), DataType.INT8, Q)], [fm("d", (1, 8, 8, 3))], 3,
              fused_activation_function="NONE"),
           conv(fm("d", (1, 8, 8, 3)), y, 1, index=4)]
    linear = linear_format_tensors(lower(model(graph(ops, [x], [y])), U55_128))
    assert "x" in linear and "y" in linear  # network input and output
    assert not {"a", "b", "c"} & linear
    assert "d" in linear  # depth 3, same shape as its constant NHWC input


def test_constant_ifm_is_swapped_to_ifm2() -> None:
    k, x, y = const("k", np.ones((1, 4, 4, 8)), DataType.INT8, Q), fm("x", (1, 4, 4, 8)), fm("y", (1, 4, 4, 8))
    lg = lower(model(graph([op("SUB", [k, x], [y], 0, fused_activation_function="NONE")], [x], [y])), U55_128)
    (npu,) = lg.npu_ops
    assert npu.ifm.name == "x" and npu.ifm2 is not None and npu.ifm2.name == "k"
    assert primary_input_first(npu) is npu  # already primary-first: unchanged
