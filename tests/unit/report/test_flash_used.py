"""The report's flash figure counts what the flash holds besides the weight streams: LUT tables and
constant operands, as the emitted file lays them out and as Vela 5.2.0 counts them (its
``off_chip_flash_memory_used`` on the same files and scenario, read from its summary CSV: a
reference npuplan did not write). The weight streams alone left ds_cnn_kws at 29.11 KiB."""

from __future__ import annotations

from pathlib import Path

import pytest

import npuplan
from npuplan.hw.memory import MemArea
from npuplan.report import build_report

DATA = Path(__file__).resolve().parents[2] / "data"
SCENARIO = dict(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                memory_mode="Shared_Sram", optimise="Performance")
VELA_FLASH_KIB = {"ds_cnn_kws": 30.4375, "resnet8_cifar": 82.125}  # Vela 5.2.0, default core


@pytest.mark.parametrize("name", sorted(VELA_FLASH_KIB))
def test_flash_used_counts_the_softmax_tables_as_vela_does(name: str) -> None:
    plan = npuplan.plan(DATA / f"{name}.tflite", **SCENARIO)
    assert any(npu.lut is not None for npu in plan.lowered.npu_ops)  # the softmax's tables
    flash_kib = build_report(plan).memory_used_bytes[MemArea.OFF_CHIP_FLASH] / 1024
    assert flash_kib == pytest.approx(VELA_FLASH_KIB[name], rel=0.01)
