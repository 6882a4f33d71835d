"""The int8 fully connected and convolution output stage's three roundings (bench/fc_rounding.py, written from
TFLite's formulas) and which one each side follows: checked against LiteRT's two kernel sets (a
reference npuplan did not write) and npuplan's compiled file, element for element, as the README
states them."""

from __future__ import annotations

import importlib
import tempfile
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"
DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture()
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module("fc_rounding")


@pytest.mark.parametrize(("acc", "m", "e", "double", "half_up", "single"), [
    (-7506, 1208615676, -8, -17, -16, -17),  # op_fc_tokens: exactly -16.5 after the first rounding
    (8792, 1219204264, -8, 20, 20, 19),  # 19.498: the first rounding lifts it to 19.5
    (1000, 1 << 30, 0, 500, 500, 500),  # no shift: all agree
])
def test_the_three_roundings(bench: ModuleType, acc: int, m: int, e: int, double: int, half_up: int,
                             single: int) -> None:
    args = (np.array([acc], np.int64), np.array([m], np.int64), np.array([e], np.int64))
    assert int(bench.double_rounding(*args)[0]) == double
    assert int(bench.double_rounding_half_up(*args)[0]) == half_up
    assert int(bench.single_rounding(*args)[0]) == single


def test_quantized_multiplier_is_tflite_s(bench: ModuleType) -> None:
    assert bench.quantized_multiplier(0.5) == (1 << 30, 0)
    assert bench.quantized_multiplier(1.0) == (1 << 30, 1)
    m, e = bench.quantized_multiplier(0.0024)
    assert 1 << 30 <= m < 1 << 31 and abs(m * 2.0 ** (e - 31) - 0.0024) < 1e-12


@pytest.mark.parametrize(("name", "index", "reference_rule", "samples"), [
    ("autoencoder_ad", 9, "single", 5),  # the last FULLY_CONNECTED, where npuplan's file first differs from LiteRT
    ("tiny_yolo_160", 0, "double", 1),  # a 3x3 SAME CONV_2D on 160x160x3: LiteRT's reference conv rounds as the NPU
])
def test_each_side_follows_its_rule(monkeypatch: pytest.MonkeyPatch, name: str, index: int, reference_rule: str,
                                    samples: int) -> None:
    pytest.importorskip("ai_edge_litert", reason='LiteRT (the "run" extra) is the reference')
    monkeypatch.syspath_prepend(str(BENCH))
    run_explain = importlib.import_module("run_explain")
    from npuplan.io.tflite import read_tflite
    from npuplan.run import CompiledModel, ReferenceModel

    model = read_tflite(DATA / f"{name}.tflite")
    op = model.main.ops[index]
    data = run_explain.probe_model(model, index)
    options = dict(accelerator_config="ethos-u55-128")
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "probe.tflite"
        path.write_bytes(data)
        compiled = CompiledModel(run_explain.plan_and_emit(path, **options)[1].data)
    sides = {"optimised": ReferenceModel(data).invoke, "reference": ReferenceModel(data, reference_kernels=True).invoke,
             "npuplan": compiled.invoke}
    found = {side: run_explain.match(op, side, *run_explain.layer_values(run, compiled.input_specs, samples, 0))
             for side, run in sides.items()}
    full = {side: {rule for rule, n in m.matches.items() if n == m.elements} for side, m in found.items()}
    assert "double" in full["npuplan"] and "double-half-up" in full["optimised"] and reference_rule in full["reference"]
    assert "double-half-up" not in full["npuplan"] and "double-half-up" not in full["reference"], full  # rules differ here
