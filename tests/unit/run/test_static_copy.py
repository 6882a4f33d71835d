"""bench/static_copy.py and run_diff's Vela reference for a model exported with a dynamic batch:
the static copy computes what the original computes (checked by LiteRT, which npuplan did not
write), and run_diff compares npuplan's file with Vela's file of that copy where Vela's default
core refuses the original."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("ai_edge_litert", reason='LiteRT (the "run" extra) is the reference')

from npuplan.io.tflite import parse_tflite  # noqa: E402
from npuplan.run import ReferenceModel, compare_runs  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data"
BENCH = Path(__file__).resolve().parents[3] / "bench"
VELA = Path(sys.executable).parent / "vela"
DYNAMIC = DATA / "tiny_yolo_160.tflite"  # batch -1; its upsampling's RESHAPE target is SHAPE -> STRIDED_SLICE -> PACK


@pytest.fixture()
def bench(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, ModuleType]:
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("static_copy"), importlib.import_module("run_diff")


def test_the_static_copy_folds_the_shape_arithmetic_and_computes_as_the_original(bench: tuple[ModuleType, ModuleType]) -> None:
    static_copy = bench[0].static_copy
    original = DYNAMIC.read_bytes()
    copy = static_copy(original)
    graph = parse_tflite(copy).main
    assert not [op for op in graph.ops if op.type in ("SHAPE", "STRIDED_SLICE", "PACK")]
    assert all(t.signature is None for t in graph.tensors())
    diffs = compare_runs(ReferenceModel(copy), ReferenceModel(original), samples=1, seed=0)
    assert all(d.agrees for d in diffs), [str(d) for d in diffs]


def test_a_model_without_dynamic_dimensions_has_no_static_copy(bench: tuple[ModuleType, ModuleType]) -> None:
    assert bench[0].static_copy((DATA / "sim" / "models" / "add.tflite").read_bytes()) is None


@pytest.mark.skipif(not VELA.exists(), reason="Vela's command-line program is not installed beside this Python")
def test_run_diff_takes_vela_s_file_of_the_static_copy_where_the_default_core_refuses_the_model(
        bench: tuple[ModuleType, ModuleType]) -> None:
    run_diff = bench[1]
    options = run_diff.SCENARIOS["u55_128_highend_shared_perf"]
    side = run_diff.vela_side(DYNAMIC, options, VELA, DYNAMIC.read_bytes(), 1, 0)
    assert side.label == "vela (static copy)" and len(side.diffs) == 2, side.error
