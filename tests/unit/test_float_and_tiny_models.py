"""End-to-end on tiny written models: a float model plans on the CPU with a reason; int8 on the NPU."""

from __future__ import annotations

import npuplan
from tests.tflite_builder import ADD, FLOAT32, INT8, elementwise_model


def test_float_model_runs_on_cpu_with_reason(tmp_path):
    path = tmp_path / "float_add.tflite"
    path.write_bytes(elementwise_model(opcode=ADD, dtype=FLOAT32))
    plan = npuplan.plan(path)
    assert len(plan.lowered.npu_ops) == 0
    (cpu,) = plan.lowered.cpu_ops
    assert cpu.tflite_type == "ADD"
    assert "float" in cpu.reason.lower() or "type" in cpu.reason.lower()


def test_int8_add_runs_on_npu(tmp_path):
    path = tmp_path / "int8_add.tflite"
    path.write_bytes(elementwise_model(opcode=ADD, dtype=INT8))
    plan = npuplan.plan(path)
    assert [op.tflite_type for op in plan.lowered.npu_ops] == ["ADD"]
    (scheduled,) = plan.schedule.ops
    assert scheduled.cost is not None and scheduled.cost.total_cycles > 0
