"""Ops rewired across a removed reshape keep the geometry they were written for."""

from __future__ import annotations

from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType
from npuplan.lowering.lower import lower
from tests.unit.lowering._build import conv, const, fm, graph, model, op
from tests.unit.lowering.test_lower import U55_128


def _shape(values: list[int]):  # type: ignore[no-untyped-def]
    return const("shape_" + "x".join(map(str, values)), values, DataType.INT32, None)


def test_conv_after_a_removed_reshape_sees_the_reshaped_geometry() -> None:
    x, y, r, z = fm("x", (1, 16, 8)), fm("y", (1, 16, 8)), fm("r", (1, 4, 4, 8)), fm("z", (1, 4, 4, 8))
    g = graph([op("ADD", [x, x], [y], 0, fused_activation_function="NONE"),
               op("RESHAPE", [y, _shape([1, 4, 4, 8])], [r], 1), conv(r, z, 3, index=2)], [x], [z])
    lg = lower(model(g), U55_128)
    add, c = lg.npu_ops
    assert c.ifm is y and c.ifm is add.ofm  # one buffer between them
    assert c.ifm_shape == Shape4D(1, 4, 4, 8) and add.ofm_shape == Shape4D(1, 1, 16, 8)
    assert c.kernel.padding.top == 1 and c.kernel.padding.bottom == 1  # type: ignore[union-attr]


def test_producer_writing_a_reshaped_graph_output_keeps_its_geometry() -> None:
    x, y, r = fm("x", (1, 4, 4, 8)), fm("y", (1, 4, 4, 8)), fm("r", (1, 128))
    g = graph([conv(x, y, 3), op("RESHAPE", [y, _shape([1, 128])], [r], 1)], [x], [r])
    (c,) = lower(model(g), U55_128).npu_ops
    assert c.ofm is r and c.ofm_shape == Shape4D(1, 4, 4, 8)


def test_residual_add_across_a_flatten_runs_on_the_npu() -> None:
    # MLP-mixer: tokens = reshape(conv patches); tokens + mlp(tokens)
    x, p, t = fm("x", (1, 4, 4, 8)), fm("p", (1, 4, 4, 8)), fm("t", (1, 16, 8))
    m, s = fm("m", (1, 16, 8)), fm("s", (1, 16, 8))
    g = graph([conv(x, p, 1), op("RESHAPE", [p, _shape([1, 16, 8])], [t], 1),
               op("MUL", [t, t], [m], 2, fused_activation_function="NONE"),
               op("ADD", [t, m], [s], 3, fused_activation_function="NONE")], [x], [s])
    lg = lower(model(g), U55_128)
    assert lg.cpu_ops == () and [o.tflite_type for o in lg.npu_ops] == ["CONV_2D", "MUL", "ADD"]
    add = lg.npu_ops[2]
    assert {add.ifm.name, add.ifm2.name} == {"p", "m"}  # type: ignore[union-attr]
    assert add.ifm_shape == add.ifm2_shape == Shape4D(1, 1, 16, 8)


def test_activation_fused_across_a_removed_reshape_keeps_the_producer_geometry() -> None:
    x, y, r, z = fm("x", (1, 4, 4, 8)), fm("y", (1, 4, 4, 8)), fm("r", (1, 16, 8)), fm("z", (1, 16, 8))
    g = graph([conv(x, y, 3), op("RESHAPE", [y, _shape([1, 16, 8])], [r], 1), op("RELU", [r], [z], 2)], [x], [z])
    (c,) = lower(model(g), U55_128).npu_ops
    assert c.ofm is z and c.ofm_shape == Shape4D(1, 4, 4, 8) and c.activation.value == "relu"
