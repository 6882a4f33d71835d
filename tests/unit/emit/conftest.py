"""Shared fixtures of the emitter tests (``vela_api``: Vela's API, for the tests comparing with it;
skipped cleanly without the deploy extra)."""

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
def ds_cnn_emitted(ds_cnn_plan):
    from npuplan.emit import emit_tflite

    return emit_tflite(ds_cnn_plan)


def emit_graph(tmp_path: Path, graph, options=None):
    """``graph`` written as a file, planned deployably and emitted with every operator on the NPU;
    the plan, the emitted file and its validation report."""
    from npuplan.api import plan_and_emit
    from npuplan.io.tflite_write import write_tflite
    from npuplan.ir.graph import Model
    from npuplan.regstream import validate_tflite

    path = tmp_path / f"{graph.name}.tflite"
    path.write_bytes(write_tflite(Model(graph.name, (graph,))))
    planned, emitted = plan_and_emit(path, **(options or U55_128))
    assert not planned.lowered.cpu_ops, [o.reason for o in planned.lowered.cpu_ops]
    return planned, emitted, validate_tflite(emitted.data)
