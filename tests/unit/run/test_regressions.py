"""Emitted files that once computed otherwise than TFLite, now bit-exact (checked against LiteRT's
reference kernels, the ones TensorFlow Lite Micro runs: a reference npuplan did not write)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("ai_edge_litert", reason="needs LiteRT: pip install 'npuplan[run]'")

from npuplan.run import check_model  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data"


def test_a_global_average_pool_averages_raw_values_as_tflite() -> None:
    # resnet8_cifar's 8x8 AVERAGE_POOL_2D: with its zero points taken out first, the division's
    # rounding saw other signs than TFLite's and 4 of 64 channels were off by one
    result = check_model(DATA / "resnet8_cifar.tflite", samples=2, seed=0, reference_kernels=True,
                         accelerator_config="ethos-u55-128")
    assert all(d.agrees for d in result.diffs), [str(d) for d in result.diffs]
