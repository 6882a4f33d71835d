"""The charts' figure specs (plain dicts, no plotly needed) agree with the report model."""

from __future__ import annotations

import dataclasses

import pytest

from npuplan.report.html_figures import cascade_figure, cycles_figure, kib, memory_map_figures, sram_figure
from npuplan.report.html_model import html_report

from .plans import plan_document


@pytest.fixture(scope="module")
def report(data_dir):
    return html_report(plan_document(data_dir / "resnet8_cifar.tflite"), "plan.json")


def test_sram_bars_stack_to_the_live_total_and_mark_the_peak(report) -> None:
    figure = sram_figure(report)
    bars = [t for t in figure["data"] if t["type"] == "bar"]
    for k, step in enumerate(report.sram):
        assert sum(t["y"][k] for t in bars) == pytest.approx(kib(step.total_bytes), abs=0.01)
    peak = next(t for t in figure["data"] if t["name"] == "peak")
    assert peak["x"] == [report.peak_step]
    hover = "<br>".join(next(t for t in figure["data"] if t["name"] == "live total")["hoverlines"][report.peak_step])
    assert all(b.name[:80] in hover for b in report.sram[report.peak_step].live)
    # The default 4 GiB budget is far off the chart: stated in the title, not drawn.
    assert "off the chart" in figure["layout"]["title"]["text"]
    tight = dataclasses.replace(report, sram_budget_bytes=2 * report.sram_allocated_bytes)
    assert any("budget" in a["text"] for a in sram_figure(tight)["layout"]["annotations"])


def test_cycles_traces_cover_every_npu_op_and_flag_what_the_model_says(report) -> None:
    figure = cycles_figure(report)
    npu = [op for op in report.ops if op.cycles is not None]
    compute = next(t for t in figure["data"] if t["name"] == "compute")
    assert compute["x"] == [op.step for op in npu]
    bound = next(t for t in figure["data"] if t["name"].startswith("memory-bound"))
    assert bound["x"] == [op.step for op in npu if op.cycles.bound_by != "compute"]
    under = [op.step for op in npu if op.cycles.lower_bound_cycles > op.cycles.total_cycles * (1 + 1e-6)]
    flagged = [t for t in figure["data"] if t["name"].startswith("estimate below")]
    assert (flagged[0]["x"] if flagged else []) == under


@pytest.fixture(scope="module")
def cascaded(data_dir):
    """resnet8_cifar's Size plan (its Performance plan fits whole: no cascade to draw)."""
    return html_report(plan_document(data_dir / "resnet8_cifar.tflite", optimise="Size"), "plan.json")


def test_cascade_and_memory_map_bars_match_the_model(cascaded) -> None:
    report = cascaded
    assert report.cascades
    figure = cascade_figure(report)
    cascades = next(t for t in figure["data"] if t["name"] == "cascade")
    assert len(cascades["base"]) == len(report.cascades)
    maps = dict(memory_map_figures(report))
    assert report.sram_area in maps
    boxes = sum(len(t["x"]) for t in maps[report.sram_area]["data"])
    assert boxes == len([t for t in report.tensors if t.area == report.sram_area and t.first_step >= 0])
