"""Grouped convolutions emitted on the NPU (``lowering.grouped``): a grouped CONV_2D as one
convolution per group, a depthwise convolution with a depth multiplier as convolutions over groups
of 8 input channels, each reading its input channels and writing its output channels at their depth
offsets. The emitted file runs on the simulator bit for bit as LiteRT runs the model, over group
counts, group depths that are not multiples of 16, strides, paddings, per-channel weights, a grouped
layer feeding another, and U55 and U65."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.ir.graph import Graph, Model, Tensor
from npuplan.ir.types import DataType, Quantization
from tests.unit.emit.conftest import U55_128, U65_DEDICATED
from tests.unit.lowering._build import const, fm, op

IN_Q = Quantization(scale=(0.05,), zero_point=(-3,))
MID_Q = Quantization(scale=(0.3,), zero_point=(2,))
OUT_Q = Quantization(scale=(0.4,), zero_point=(5,))


def _weights_quant(count: int, per_channel: bool, axis: int = 0) -> Quantization:
    if not per_channel:
        return Quantization(scale=(0.01,), zero_point=(0,))
    return Quantization(scale=tuple(0.004 + 0.001 * (i % 7) for i in range(count)), zero_point=(0,) * count, axis=axis)


def _grouped(rng: np.random.Generator, x: Tensor, y: Tensor, *, groups: int, kernel: int, stride: int, padding: str,
             per_channel: bool, act: str, index: int):
    cin, cout = x.shape[-1], y.shape[-1]
    w = const(f"{y.name}_w", rng.integers(-127, 128, (cout, kernel, kernel, cin // groups)),
              quant=_weights_quant(cout, per_channel))
    b = const(f"{y.name}_b", rng.integers(-500, 500, cout), DataType.INT32, None)
    return op("CONV_2D", [x, w, b], [y], index, padding=padding, stride_h=stride, stride_w=stride,
              dilation_h_factor=1, dilation_w_factor=1, fused_activation_function=act)


def _out(size: int, kernel: int, stride: int, padding: str) -> int:
    return -(-size // stride) if padding == "SAME" else (size - kernel) // stride + 1


def _grouped_graph(*, size: int, cin: int, cout: int, groups: int, kernel: int, stride: int, padding: str,
                   per_channel: bool, chained: bool) -> Graph:
    rng = np.random.default_rng(size * 131 + cin * 7 + groups)
    side = _out(size, kernel, stride, padding)
    x = fm("x", (1, size, size, cin), quant=IN_Q)
    y = fm("y", (1, side, side, cout), quant=MID_Q if chained else OUT_Q)
    first = _grouped(rng, x, y, groups=groups, kernel=kernel, stride=stride, padding=padding,
                     per_channel=per_channel, act="RELU", index=0)
    if not chained:
        return Graph("grouped", (first,), (x,), (y,))
    z = fm("z", (1, side, side, cout), quant=OUT_Q)
    second = _grouped(rng, y, z, groups=groups, kernel=3, stride=1, padding="SAME", per_channel=per_channel,
                      act="NONE", index=1)
    return Graph("grouped", (first, second), (x,), (z,))


def _depthwise_graph(*, size: int, depth: int, multiplier: int, stride: int, padding: str) -> Graph:
    rng = np.random.default_rng(size * 17 + depth * 3 + multiplier)
    side, out_depth = _out(size, 3, stride, padding), depth * multiplier
    x, y = fm("x", (1, size, size, depth), quant=IN_Q), fm("y", (1, side, side, out_depth), quant=OUT_Q)
    w = const("w", rng.integers(-127, 128, (1, 3, 3, out_depth)), quant=_weights_quant(out_depth, True, axis=3))
    b = const("b", rng.integers(-500, 500, out_depth), DataType.INT32, None)
    dw = op("DEPTHWISE_CONV_2D", [x, w, b], [y], 0, padding=padding, stride_h=stride, stride_w=stride,
            depth_multiplier=multiplier, dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="RELU6")
    return Graph("depthwise", (dw,), (x,), (y,))


def _run_both(tmp_path, graph: Graph, options: dict[str, str]):
    """The NPU operations of the deployable plan, the emitted file's first output on the simulator and
    LiteRT's, for seeded int8 inputs."""
    from npuplan.api import plan_and_emit
    from npuplan.io.tflite_write import write_tflite
    from npuplan.run.litert import ReferenceModel
    from npuplan.run.runner import CompiledModel

    data = write_tflite(Model(graph.name, (graph,)))
    path = tmp_path / f"{graph.name}.tflite"
    path.write_bytes(data)
    planned, emitted = plan_and_emit(path, **options)
    assert not planned.lowered.cpu_ops, [o.reason for o in planned.lowered.cpu_ops]
    rng = np.random.default_rng(3)
    xs = [rng.integers(-128, 128, t.shape, dtype=np.int8) for t in graph.inputs]
    return (planned.lowered.npu_ops, CompiledModel(emitted.data).invoke(xs)[0],
            ReferenceModel(data, label="the model").invoke(xs)[0])


GROUPED = [  # size, cin, cout, groups, kernel, stride, padding, per_channel, chained, scenario
    (9, 32, 32, 2, 3, 1, "SAME", False, False, U55_128),
    (12, 32, 64, 4, 3, 2, "SAME", True, False, U55_128),
    (11, 24, 24, 8, 3, 1, "VALID", True, True, U55_128),  # groups of 3 channels, one grouped layer into another
    (10, 20, 40, 4, 1, 1, "VALID", False, False, U55_128),  # groups of 5 in, 10 out
    (13, 64, 64, 16, 3, 2, "VALID", True, True, U65_DEDICATED),
    (8, 48, 96, 3, 3, 1, "SAME", True, False, U65_DEDICATED),
]


@pytest.mark.parametrize("size,cin,cout,groups,kernel,stride,padding,per_channel,chained,scenario", GROUPED)
def test_a_grouped_conv_runs_on_the_npu_as_litert_runs_it(tmp_path, size, cin, cout, groups, kernel, stride, padding,
                                                          per_channel, chained, scenario):
    graph = _grouped_graph(size=size, cin=cin, cout=cout, groups=groups, kernel=kernel, stride=stride,
                           padding=padding, per_channel=per_channel, chained=chained)
    ops, got, expected = _run_both(tmp_path, graph, scenario)
    assert len(ops) == groups * (2 if chained else 1)
    assert {o.ifm_read_offset.c for o in ops if o.ifm_read_offset is not None} == {
        g * (cin // groups) for g in range(groups)} | ({g * (cout // groups) for g in range(groups)} if chained else set())
    assert got.shape == expected.shape and np.array_equal(got, expected)


@pytest.mark.parametrize("size,depth,multiplier,stride,padding,scenario", [
    (9, 12, 2, 1, "SAME", U55_128),
    (10, 20, 3, 2, "VALID", U55_128),
    (8, 16, 4, 1, "SAME", U65_DEDICATED),
])
def test_a_depthwise_conv_with_a_multiplier_runs_on_the_npu_as_litert_runs_it(tmp_path, size, depth, multiplier, stride,
                                                                              padding, scenario):
    graph = _depthwise_graph(size=size, depth=depth, multiplier=multiplier, stride=stride, padding=padding)
    ops, got, expected = _run_both(tmp_path, graph, scenario)
    assert len(ops) == -(-depth // 8)
    assert got.shape == expected.shape and np.array_equal(got, expected)
