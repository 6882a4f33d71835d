"""BATCH_MATMUL's lowering (``lowering.batch_matmul``): which ones run on the NPU, the operations
and the output scale (Vela 5.2.0's register for zoo/op_batch_matmul's)."""

from __future__ import annotations

from npuplan.ir.lowered import BlockType
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.batch_matmul import convert_batch_matmul, output_scaling
from npuplan.lowering.support import unsupported_reason
from tests.unit.lowering._build import const, fm, op

QA = Quantization(scale=(0.029055336490273476,), zero_point=(8,))
QC = Quantization(scale=(0.37230658531188965,), zero_point=(-48,))


def _matmul(a_shape=(1, 16, 32), b_shape=(1, 16, 32), c_shape=(1, 16, 16), dtype=DataType.INT8, **options):
    options = {"adj_x": False, "adj_y": True, **options}
    a, b, c = fm("a", a_shape, dtype, QA), fm("b", b_shape, dtype, QA), fm("c", c_shape, dtype, QC)
    return op("BATCH_MATMUL", [a, b], [c], 0, **options)


def test_the_output_scale_is_tflite_s_multiplier_as_vela_writes_it():
    # Vela's OFM_SCALE of each ReduceSum of zoo/op_batch_matmul: 0x27_4a4d55f3 (shift 39 above bit 32);
    # the scales' product taken in float64 would give 0x4a4d55d6
    assert output_scaling(_matmul()) == (0x4A4D55F3, 39)


def test_each_output_column_is_a_mul_and_a_reduce_sum_into_its_channel():
    ops = convert_batch_matmul(_matmul())
    assert [o.op_type for o in ops] == ["Mul", "ReduceSum"] * 16
    mul, total = ops[2], ops[3]
    assert mul.ifm2_read_offset == Shape4D(0, 0, 1, 0) and mul.ifm2_shape == Shape4D(1, 1, 1, 32)
    assert mul.ofm.dtype == DataType.INT32 and mul.fixed_point is not None
    assert total.block_type is BlockType.REDUCE_SUM and total.ifm is mul.ofm
    assert total.ofm_write_offset == Shape4D(0, 0, 0, 1) and total.ofm_shape == Shape4D(1, 1, 16, 1)
    assert total.rescale == (0x4A4D55F3, 39)


def test_the_right_operand_is_transposed_first_unless_adj_y():
    ops = convert_batch_matmul(_matmul((1, 4, 12, 8), (1, 4, 8, 10), (1, 4, 12, 10), adj_y=False))
    steps = [o for o in ops if o.writes_transposed]
    assert steps and ops[:len(steps)] == tuple(steps) and all(o.tflite_type == "BATCH_MATMUL" for o in ops)
    assert steps[-1].ofm.shape == (1, 4, 10, 8) and ops[len(steps)].ifm2 is steps[-1].ofm
    assert len(ops) == len(steps) + 2 * 10


def test_what_stays_on_the_cpu():
    assert unsupported_reason(_matmul()) is None
    assert "int8" in (unsupported_reason(_matmul(dtype=DataType.INT16)) or "")
    assert unsupported_reason(_matmul((1, 32, 16), (1, 16, 32), (1, 16, 16), adj_x=True)) is None  # A transposed first
    a, c = fm("a", (1, 16, 32), quant=QA), fm("c", (1, 16, 16), quant=QC)
    constant = op("BATCH_MATMUL", [a, const("b", [[[1] * 32] * 16])], [c], 0, adj_x=False, adj_y=True)
    assert "constant" in (unsupported_reason(constant) or "")
    assert "batch axes" in (unsupported_reason(_matmul((1, 2, 16, 32), (1, 1, 16, 32), (1, 2, 16, 16))) or "")
    # (a batch of 4-D maps runs as rows of heads first: ``lowering.batches``)
    assert "merge" in (unsupported_reason(_matmul((2, 3, 16, 32), (2, 3, 16, 32), (2, 3, 16, 16))) or "")
