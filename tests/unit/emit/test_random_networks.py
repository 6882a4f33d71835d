"""Seeded random networks (tests/random_graphs.py) planned deployably, emitted and validated: the
validator accepts every emitted file (seed 12 on the 64-MAC Ethos-U55 has a one-row rolling buffer
whose odd rows a stride-2 consumer never reads: dead data, not a clobbered feature map)."""

from __future__ import annotations

import pytest

from npuplan.errors import EmitError
from tests.random_graphs import network_bytes

U55_64 = {"accelerator_config": "ethos-u55-64", "system_config": "Ethos_U55_Deep_Embedded",
          "memory_mode": "Shared_Sram", "optimise": "Size"}


@pytest.mark.parametrize("seed", [12, 1, 5, 9])
def test_random_network_emits_and_validates(vela_api, tmp_path, seed):
    from npuplan.emit import plan_and_emit
    from npuplan.regstream import validate_tflite

    path = tmp_path / f"random_{seed}.tflite"
    path.write_bytes(network_bytes(seed))
    try:
        _, emitted = plan_and_emit(path, **U55_64)
    except EmitError as error:  # a refusal is one line naming the op (e.g. a rewritten TRANSPOSE_CONV)
        assert "\n" not in str(error) and error.op
        return
    report = validate_tflite(emitted.data)
    assert report.npu_operations == emitted.npu_operations


def test_concatenation_copies_are_emitted(vela_api, tmp_path):
    """Seed 4 concatenates along its channels: the copies run on the NPU, each writing its box."""
    from npuplan.emit import plan_and_emit
    from npuplan.regstream import validate_tflite

    path = tmp_path / "random_4.tflite"
    path.write_bytes(network_bytes(4))
    planned, emitted = plan_and_emit(path, accelerator_config="ethos-u55-128",
                                     system_config="Ethos_U55_High_End_Embedded", memory_mode="Shared_Sram")
    copies = [o for o in planned.lowered.npu_ops if o.tflite_type == "CONCATENATION"]
    assert copies and all(o.ofm_write_offset is not None for o in copies)
    assert validate_tflite(emitted.data).npu_operations == emitted.npu_operations
