"""UNIDIRECTIONAL_SEQUENCE_LSTM unrolled into its gate operations (Vela legacy's lowering)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from npuplan.api import plan
from npuplan.commands import validate_plan
from npuplan.hw.accelerator import accelerator
from npuplan.io.tflite import read_tflite
from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Op, Tensor
from npuplan.ir.lowered import Activation, BlockType, CpuOp
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering import lower

from ._build import Q, WQ, const, graph, model, op

U55_128 = accelerator("ethos-u55-128")
STEPS, FEATURES, CELLS = 3, 4, 8


def _lstm(*, time_major: bool = False, batches: int = 1, drop: tuple[int, ...] = (), variable: bool = True,
          intermediates: int = 5) -> Op:
    rng = np.random.default_rng(0)
    shape = (STEPS, batches, FEATURES) if time_major else (batches, STEPS, FEATURES)
    x = Tensor("x", shape, DataType.INT8, Q)
    y = Tensor("y", (*shape[:2], CELLS), DataType.INT8, Q)
    inputs: list[Tensor | None] = [x]
    inputs += [const(f"w{g}", rng.integers(-20, 20, (CELLS, FEATURES)), DataType.INT8, WQ) for g in range(4)]
    inputs += [const(f"r{g}", rng.integers(-20, 20, (CELLS, CELLS)), DataType.INT8, WQ) for g in range(4)]
    inputs += [None] * 3 + [const(f"b{g}", np.zeros(CELLS), DataType.INT32, None) for g in range(4)] + [None] * 2
    inputs += [Tensor("h", (batches, CELLS), DataType.INT8, Q, None, is_variable=variable),
               Tensor("c", (batches, CELLS), DataType.INT16, Quantization((2.0**-11,), (0,)), None,
                      is_variable=variable)]
    inputs += [None] * 4
    for index in drop:
        inputs[index] = None
    scales = [Tensor(f"i{k}", (), DataType.INT16, Quantization((2.0**-12,), (0,))) for k in range(intermediates)]
    return replace(op("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y], 0, time_major=time_major, cell_clip=0.0,
                      fused_activation_function="TANH"), intermediates=tuple(scales))


def _lowered(lstm: Op):
    x, y = lstm.inputs[0], lstm.outputs[0]
    assert x is not None
    return lower(model(graph([lstm], [x], [y])), U55_128)


def test_each_step_is_four_gates_the_cell_and_output_states_and_a_copy_into_its_row() -> None:
    lowered = _lowered(_lstm())
    ops = lowered.npu_ops
    assert not lowered.cpu_ops and len(ops) == STEPS * 18  # 4 x (2 FC + ADD), 3 cell, tanh, MUL, copy
    first = ops[0]
    assert first.name == "output_gate#0.0:x_feature#0.0_fc" and first.block_type is BlockType.VECTOR_PRODUCT
    assert first.ifm_read_offset == Shape4D(0, 0, 0, 0) and first.ifm_shape == Shape4D(1, 1, 1, FEATURES)
    assert first.ofm.dtype == DataType.INT16 and first.weights is not None and first.weights.shape == (CELLS, 1, 1, 4)
    recurrent = ops[1]
    assert recurrent.name == "output_gate#0.0:h_state#0_fc" and recurrent.ifm.name == "h"
    adds = {o.name: o.activation for o in ops[:18] if o.name.endswith("gate#0.0_add")}
    assert adds == {"input_gate#0.0_add": Activation.SIGMOID, "forget_gate#0.0_add": Activation.SIGMOID,
                    "cell_gate#0.0_add": Activation.TANH, "output_gate#0.0_add": Activation.SIGMOID}
    copies = [o for o in ops if o.ofm.name == "y"]
    assert [c.ofm_write_offset for c in copies] == [Shape4D(0, 0, t, 0) for t in range(STEPS)]
    # the next step's recurrent input is this step's output state, by Vela's name
    assert ops[19].name == "output_gate#0.1:output_state#0.0_mul_tens0_fc"
    # the variable states hold data from before the inference and keep it after
    assert {t.name for t in lowered.inputs} == {"x", "h", "c"} and {"h", "c"} <= {t.name for t in lowered.outputs}


def test_time_major_steps_run_every_batch_at_once() -> None:
    ops = _lowered(_lstm(time_major=True, batches=2)).npu_ops
    assert len(ops) == STEPS * 18
    assert ops[0].ifm_shape == Shape4D(1, 1, 2, FEATURES) and ops[0].ifm_read_offset == Shape4D(0, 0, 0, 0)
    assert ops[18].ifm_read_offset == Shape4D(0, 1, 0, 0)


def test_lstm_variants_vela_does_not_run_stay_on_the_cpu() -> None:
    cases = [(dict(drop=(1, 5)), "CIFG"), (dict(variable=False), "variable"), (dict(intermediates=0), "intermediate")]
    for kwargs, fragment in cases:
        (cpu,) = _lowered(_lstm(**kwargs)).ops  # type: ignore[arg-type]
        assert isinstance(cpu, CpuOp) and fragment in cpu.reason


def test_an_lstm_file_keeps_its_intermediates_plans_and_validates(tmp_path: Path) -> None:
    lstm = _lstm()
    x = lstm.inputs[0]
    assert x is not None
    path = tmp_path / "lstm.tflite"
    path.write_bytes(write_tflite(Model("lstm", (Graph("main", (lstm,), (x,), lstm.outputs),))))
    (read,) = read_tflite(path).main.ops
    assert [t.name for t in read.intermediates] == [f"i{k}" for k in range(5)]
    result = plan(path, accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                  memory_mode="Shared_Sram")
    assert not result.lowered.cpu_ops and len(result.lowered.npu_ops) == STEPS * 18
    validate_plan(result)


def test_lstm_tensors_that_do_not_fit_together_stay_on_the_cpu() -> None:
    lstm = _lstm()
    x = Tensor("x", (1, STEPS, FEATURES + 1), DataType.INT8, Q)  # one feature more than the weights take
    (cpu,) = _lowered(replace(lstm, inputs=(x, *lstm.inputs[1:]))).ops
    assert isinstance(cpu, CpuOp) and "input weights must have the shape [8, 5]" in cpu.reason
