"""Seeded random networks (bench/random_graphs.py) planned deployably, emitted and validated: the
validator accepts every emitted file (seed 12 on the 64-MAC Ethos-U55 has a one-row rolling buffer
whose odd rows a stride-2 consumer never reads: dead data, not a clobbered feature map)."""

from __future__ import annotations

import pytest

from npuplan.errors import EmitError
from bench.random_graphs import network_bytes

U55_64 = {"accelerator_config": "ethos-u55-64", "system_config": "Ethos_U55_Deep_Embedded",
          "memory_mode": "Shared_Sram", "optimise": "Size"}


@pytest.mark.parametrize("seed", [12, 1, 5, 9])
def test_random_network_emits_and_validates(tmp_path, seed):
    from npuplan.api import plan_and_emit
    from npuplan.regstream import validate_tflite

    path = tmp_path / f"random_{seed}.tflite"
    path.write_bytes(network_bytes(seed, generation=1))
    try:
        _, emitted = plan_and_emit(path, **U55_64)
    except EmitError as error:  # a refusal is one line naming the op (e.g. a rewritten TRANSPOSE_CONV)
        assert "\n" not in str(error) and error.op
        return
    report = validate_tflite(emitted.data)
    assert report.npu_operations == emitted.npu_operations


def test_concatenation_copies_are_emitted(tmp_path):
    """Seed 4 concatenates along its channels: the copies run on the NPU, each writing its box."""
    from npuplan.api import plan_and_emit
    from npuplan.regstream import validate_tflite

    path = tmp_path / "random_4.tflite"
    path.write_bytes(network_bytes(4, generation=1))
    planned, emitted = plan_and_emit(path, accelerator_config="ethos-u55-128",
                                     system_config="Ethos_U55_High_End_Embedded", memory_mode="Shared_Sram")
    copies = [o for o in planned.lowered.npu_ops if o.tflite_type == "CONCATENATION"]
    assert copies and all(o.ofm_write_offset is not None for o in copies)
    assert validate_tflite(emitted.data).npu_operations == emitted.npu_operations


def test_pad_copies_and_fills_are_emitted(tmp_path):
    """Seed 0 pads a feature map: the copy into the middle and the four fills (constants of the zero
    point, stored once in the flash tensor) run on the NPU."""
    from npuplan.api import plan_and_emit
    from npuplan.regstream import validate_tflite

    path = tmp_path / "random_0.tflite"
    path.write_bytes(network_bytes(0, generation=1))
    planned, emitted = plan_and_emit(path, accelerator_config="ethos-u55-128",
                                     system_config="Ethos_U55_High_End_Embedded", memory_mode="Shared_Sram")
    pads = [o for o in planned.lowered.npu_ops if o.tflite_type == "PAD"]
    assert len(pads) == 5 and sum(o.ifm.is_constant for o in pads) == 4
    assert validate_tflite(emitted.data).npu_operations == emitted.npu_operations


def test_a_constant_second_operand_is_read_from_the_flash_tensor(tmp_path):
    import numpy as np

    from npuplan.api import plan_and_emit
    from npuplan.io.tflite_write import write_tflite
    from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
    from npuplan.ir.types import DataType, Quantization
    from npuplan.regstream import validate_tflite
    from npuplan.regstream.events import NpuEvent

    q = Quantization((0.05,), (3,))
    x = Tensor("x", (1, 8, 8, 16), DataType.INT8, q)
    values = np.arange(16, dtype=np.int8).reshape(1, 1, 1, 16)
    c = Tensor("c", (1, 1, 1, 16), DataType.INT8, Quantization((0.02,), (-1,)), data=values)
    out = Tensor("out", (1, 8, 8, 16), DataType.INT8, Quantization((0.07,), (0,)))
    graph = Graph("main", (Op("ADD", (x, c), (out,), frozen_options({"fused_activation_function": "NONE"})),),
                  (x,), (out,))
    path = tmp_path / "add_const.tflite"
    path.write_bytes(write_tflite(Model("add_const", (graph,))))
    planned, emitted = plan_and_emit(path, accelerator_config="ethos-u55-128",
                                     system_config="Ethos_U55_High_End_Embedded", memory_mode="Shared_Sram")
    assert not planned.lowered.cpu_ops
    report = validate_tflite(emitted.data)
    kicks = [e for s in report.streams for e in s.events if isinstance(e, NpuEvent)]
    assert kicks and all(e.ifm2 is not None and e.ifm2.region == 0 for e in kicks)
    assert values.tobytes() in emitted.data
