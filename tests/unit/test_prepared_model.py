"""``PreparedModel``: plans sharing one reading, lowering and weight-encoding memo equal fresh plans."""

from __future__ import annotations

import pytest

from npuplan.api import PreparedModel, make_options, plan, plan_prepared
from npuplan.report import build_report
from npuplan.report.summary import summary_row

POINTS = (
    dict(accelerator_config="ethos-u55-64", optimise="Size"),
    dict(accelerator_config="ethos-u65-256", optimise="Performance", arena_cache_size=96 * 1024),
    dict(accelerator_config="ethos-u55-64", optimise="Performance", arena_cache_size=160 * 1024),
    dict(accelerator_config="ethos-u65-256", optimise="Size", system_config="Ethos_U65_High_End",
         memory_mode="Dedicated_Sram_384KB"),
)


def _row(result: object) -> dict[str, object]:
    return summary_row(build_report(result))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["ds_cnn_kws.tflite", "tiny_yolo_160.tflite"])
def test_shared_plans_equal_fresh_plans(data_dir, name):
    path = data_dir / name
    prepared = PreparedModel.read(path)
    shared = [_row(plan_prepared(prepared, make_options(**point))) for point in POINTS]
    fresh = [_row(plan(path, **point)) for point in POINTS]
    assert shared == fresh
    # one lowering (and its concat-in-place variant) and one encoding memo per accelerator
    assert sorted(prepared._encodings) == ["ethos-u55-64", "ethos-u65-256"]
    assert {key[0] for key in prepared._lowered} == {"ethos-u55-64", "ethos-u65-256"}


def test_prepared_model_lowers_once_per_accelerator(data_dir):
    prepared = PreparedModel.read(data_dir / "ds_cnn_kws.tflite")
    first = plan_prepared(prepared, make_options(accelerator_config="ethos-u55-64"))
    second = plan_prepared(prepared, make_options(accelerator_config="ethos-u55-64", optimise="Size"))
    assert first.lowered is second.lowered
    assert first.weight_encodings is second.weight_encodings
    assert first.network == "ds_cnn_kws" and first.model_path == str(data_dir / "ds_cnn_kws.tflite")
