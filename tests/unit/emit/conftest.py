"""Shared fixtures of the emitter tests: skipped cleanly without the deploy extra."""

from __future__ import annotations

from pathlib import Path

import pytest

from npuplan.api import plan

DATA = Path(__file__).resolve().parents[2] / "data"
U55_128 = {"accelerator_config": "ethos-u55-128", "system_config": "Ethos_U55_High_End_Embedded",
           "memory_mode": "Shared_Sram"}
U65_DEDICATED = {"accelerator_config": "ethos-u65-256", "system_config": "Ethos_U65_High_End",
                 "memory_mode": "Dedicated_Sram_384KB"}


@pytest.fixture(scope="session")
def vela_api():
    return pytest.importorskip("ethosu.vela.api", reason="the deploy extra (ethos-u-vela) is not installed")


@pytest.fixture(scope="session")
def ds_cnn_plan():
    return plan(DATA / "ds_cnn_kws.tflite", deployable=True, **U55_128)


@pytest.fixture(scope="session")
def ds_cnn_emitted(vela_api, ds_cnn_plan):
    from npuplan.emit import emit_tflite

    return emit_tflite(ds_cnn_plan)
