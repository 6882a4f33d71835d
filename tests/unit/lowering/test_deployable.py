"""What a deployable plan keeps together or refuses: the writers of one tensor in one NPU
partition, tensors crossing NPU partitions in NHWC, and shapes the file does not declare."""

from __future__ import annotations

from npuplan.ir.lowered import BlockType, CpuOp, Kernel, LoweredGraph, LoweredOp, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.deployable import gather_split_writes, npu_op_reason
from npuplan.lowering.formats import linear_format_tensors

from ._build import fm, op


def _copy(name, src, dst, offset_c):
    return NpuOp(name, "CONCATENATION", "AvgPool", BlockType.POOLING, src, src.shape4d, dst, dst.shape4d,
                 kernel=Kernel(), pool=PoolKind.AVERAGE, ofm_write_offset=Shape4D(0, 0, 0, offset_c),
                 ofm_write_shape=src.shape4d)


def _pool(name, src, dst):
    return NpuOp(name, "AVERAGE_POOL_2D", "AvgPool", BlockType.POOLING, src, src.shape4d, dst, dst.shape4d,
                 kernel=Kernel(), pool=PoolKind.AVERAGE)


def test_copies_of_one_concatenation_split_by_a_cpu_op_run_together():
    a, b, x = fm("a", (1, 4, 4, 16)), fm("b", (1, 4, 4, 16)), fm("x", (1, 4, 4, 16))
    c, d = fm("c", (1, 4, 4, 32)), fm("d", (1, 4, 4, 32))
    first, second = _copy("c0", a, c, 0), _copy("c1", b, c, 16)
    cpu = CpuOp(op("FLOOR", [x], [b]), "not on the NPU")
    reader = _pool("d", c, d)
    ops = (first, cpu, second, reader)
    assert [o.name for o in gather_split_writes(ops)] == [cpu.name, "c0", "c1", "d"]
    together = (cpu, first, second, reader)
    assert gather_split_writes(together) == together  # already in one partition: unchanged


def test_a_map_used_on_both_sides_of_a_cpu_op_stays_nhwc():
    x, a, b, y = fm("x", (1, 4, 4, 16)), fm("a", (1, 4, 4, 16)), fm("b", (1, 4, 4, 16)), fm("y", (1, 4, 4, 16))
    cpu = CpuOp(op("FLOOR", [a], [b]), "not on the NPU")
    produce, skip = _pool("a", x, a), _pool("y", a, y)  # 'a' is read again after the CPU op
    graph = LoweredGraph("g", (produce, cpu, skip), (x,), (y,))
    assert "a" in linear_format_tensors(graph)
    inner = fm("i", (1, 4, 4, 16))
    same_side = LoweredGraph("g", (_pool("i", x, inner), _pool("y", inner, y)), (x,), (y,))
    assert "i" not in linear_format_tensors(same_side)


def test_an_op_writing_more_than_its_tensor_declares_is_refused():
    """A network exported with dynamic dimensions declares placeholder shapes (1 for each unknown
    dimension); an op the lowering worked out on the real shape writes past the declared tensor."""
    x, y = fm("x", (1, 16, 16, 8)), fm("y", (1, 24))
    npu = NpuOp("y", "FULLY_CONNECTED", "Conv2DBias", BlockType.CONV, x, Shape4D(1, 1, 256, 8), y,
                Shape4D(1, 1, 256, 24))
    reason = npu_op_reason(npu)
    assert reason is not None and "declared [1, 24]" in reason and "dynamic shape" in reason


def test_an_operator_whose_only_rewrite_is_a_folded_input_can_stay_on_the_cpu():
    from npuplan.ir.graph import Graph
    from npuplan.ir.types import DataType
    from npuplan.lowering.deployable import folded_inputs_only

    from ._build import const

    shape_in, value, out = fm("dims", (2,), DataType.INT32, None), const("v", 0, DataType.INT8), fm("z", (1, 16))
    source_fill = op("FILL", [shape_in, value], [out], 3)
    source = Graph("main", (source_fill,), (shape_in,), (out,))
    folded = op("FILL", [const("dims_folded", [1, 16], DataType.INT32, None), value], [out], 3)
    assert folded_inputs_only(folded, source)
    rewired = op("FILL", [fm("other", (2,), DataType.INT32, None), value], [out], 3)  # not a constant
    assert not folded_inputs_only(rewired, source)


def test_a_maximum_of_differently_quantized_operands_stays_on_the_cpu():
    from npuplan.ir.types import Quantization

    a, b = fm("a", (1, 4, 4, 16)), fm("b", (1, 4, 4, 16))
    same, other = fm("y", (1, 4, 4, 16)), fm("z", (1, 4, 4, 16), quant=Quantization((0.1,), (0,)))
    for out, emitted in ((same, True), (other, False)):
        npu = NpuOp("y", "MAXIMUM", "Maximum", BlockType.ELEMENTWISE, a, a.shape4d, out, out.shape4d, ifm2=b,
                    ifm2_shape=b.shape4d, elementwise="MAXIMUM")
        assert (npu_op_reason(npu) is None) is emitted


def test_softmax_is_emitted_but_where_its_exp_table_is_undefined() -> None:
    from npuplan.hw.accelerator import accelerator
    from npuplan.lowering import lower

    from ._build import fm, graph, model, op

    def lowered(dtype: DataType, scale: float) -> tuple[LoweredOp, ...]:
        q = Quantization((scale,), (0,))
        x, y = fm("x", (1, 10), dtype, q), fm("y", (1, 10), dtype, q)
        return lower(model(graph([op("SOFTMAX", [x], [y], 0, beta=1.0)], [x], [y])), accelerator("ethos-u55-128"),
                     deployable=True).ops

    assert len(lowered(DataType.INT8, 0.1)) == 28 and all(isinstance(o, NpuOp) for o in lowered(DataType.INT8, 0.1))
    assert len(lowered(DataType.INT16, 0.001)) == 15
    # beta x scale below 2**-27: the table's fixed-point rescale would shift left by a negative amount
    (cpu,) = lowered(DataType.INT8, 1e-9)
    assert isinstance(cpu, CpuOp) and "exp table is undefined" in cpu.reason


def test_an_int32_add_stays_on_the_cpu_for_deployment_naming_the_overflow() -> None:
    """TFLite's int32 ADD/SUB/MUL is unscaled integer arithmetic that wraps; the NPU's saturates.
    The plan keeps it on the NPU (Vela's default core does); the deployable file on the CPU."""
    from npuplan.hw.accelerator import accelerator
    from npuplan.ir.graph import Graph, Model, Tensor
    from npuplan.ir.lowered import CpuOp
    from npuplan.ir.types import DataType
    from npuplan.lowering.lower import lower

    from tests.unit.lowering._build import op

    a, b, y = (Tensor(n, (1, 4, 4, 8), DataType.INT32) for n in "aby")
    model = Model("m", (Graph("main", (op("ADD", [a, b], [y], 0, fused_activation_function="NONE"),), (a, b), (y,)),))
    (cpu,) = lower(model, accelerator("ethos-u55-256"), deployable=True).ops
    assert isinstance(cpu, CpuOp) and "wraps on overflow" in cpu.reason
    assert not isinstance(lower(model, accelerator("ethos-u55-256")).ops[0], CpuOp)
