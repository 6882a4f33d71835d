"""The HTML plan report (``npuplan plan --html``, ``npuplan report PLAN.json``): the summary
figures, SRAM over the schedule, cycles per op against their lower bounds, the cascades and
stripes, where each buffer lives and the op table, in one self-contained page."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from npuplan.report.html_figures import (
    cascade_figure, cycles_figure, kib, memory_map_figures, size_text, sram_figure,
)
from npuplan.report.html_model import HtmlReport, html_report
from npuplan.report.html_page import chart, number_text, page, table, text
from npuplan.report.sram_timeline import KIND_LABELS

# The summary figures shown as cards at the top: (summary CSV column, label, scale, unit).
CARDS = (
    ("inference_time", "inference time", 1e3, "ms"),
    ("inferences_per_second", "inferences per second", 1, ""),
    ("cycles_total", "cycles", 1, ""),
    ("sram_memory_used", "SRAM used", 1, "KiB"),
    ("off_chip_flash_memory_used", "off-chip flash used", 1, "KiB"),
    ("dram_memory_used", "DRAM used", 1, "KiB"),
    ("nn_macs", "MACs", 1, ""),
    ("npu_operators", "NPU ops", 1, ""),
    ("cpu_operators", "CPU ops", 1, ""),
)


def report_html(document: Mapping[str, Any], source: str | Path) -> bytes:
    """The report page (UTF-8) of a plan document (the plan JSON's contents) read from ``source``."""
    return render(html_report(document, source))


def _cards(report: HtmlReport) -> str:
    out = []
    for key, label, scale, unit in CARDS:
        value = report.summary_value(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append(f'<div class="card"><b>{number_text(value * scale)} {text(unit)}</b><span>{text(label)}</span></div>')
    return f'<div class="cards">{"".join(out)}</div>'


def _summary(report: HtmlReport) -> str:
    rows = [(k, v) for k, v in report.summary]
    return (_cards(report) + "<details><summary>every summary figure (as in the summary CSV)</summary>"
            + table(("figure", "value"), rows, sortable=False) + "</details>")


def _target(report: HtmlReport) -> str:
    return table(("option", "value"), report.target, sortable=False)


def _op_rows(report: HtmlReport) -> tuple[list[list[object]], list[str]]:
    rows, classes = [], []
    for op in report.ops:
        c = op.cycles
        stripe = op.ofm_stripe[1] if len(op.ofm_stripe) == 4 else None
        rows.append([
            op.step, op.name, op.placement.upper(), op.tflite_operator, op.operator or None,
            op.reason or None, op.cascade if op.cascade >= 0 else None, op.block_config or None, stripe,
            op.weight_buffering or None, op.sram_usage_bytes if op.placement == "npu" else None,
            c.total_cycles if c else None, c.compute_cycles if c else None, c.bound_by if c else None,
            c.lower_bound_cycles if c else None, c.macs if c else None,
        ])
        classes.append("cpu" if op.placement == "cpu" else "")
    return rows, classes


OP_HEADERS = ("step", "name", "placement", "TFLite operator", "NPU operator", "CPU reason", "cascade",
              "block config", "OFM stripe rows", "weights", "SRAM bytes", "cycles", "compute cycles", "bound by",
              "lower bound cycles", "MACs")
TENSOR_HEADERS = ("name", "area", "kind", "bytes", "offset", "shape", "first step", "last step")


def _tensor_rows(report: HtmlReport) -> list[list[object]]:
    return [[t.name, t.area, KIND_LABELS.get(t.kind, t.kind), t.size_bytes, t.offset,
             "x".join(str(d) for d in t.shape) or None, t.first_step if t.first_step >= 0 else None,
             t.last_step if t.last_step >= 0 else None] for t in report.tensors]


def _notes(report: HtmlReport) -> str:
    parts = []
    if report.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{text(n)}</li>" for n in report.notes) + "</ul>")
    if report.removed_ops:
        parts.append("<details><summary>ops removed by lowering (" + str(len(report.removed_ops)) + ")</summary>"
                     + table(("name", "reason"), report.removed_ops, name_columns=(0,)) + "</details>")
    return "".join(parts)


def _sram_text(report: HtmlReport) -> str:
    peak = report.peak_step
    if peak < 0:
        return ""
    s = report.sram[peak]
    return (f"<p>Peak: {number_text(kib(s.total_bytes))} KiB live at step {peak} "
            f"(<code>{text(report.ops[peak].name)}</code>), {len(s.live)} buffers; "
            f"allocated peak address {number_text(kib(report.sram_allocated_bytes))} KiB; "
            f"budget {size_text(report.sram_budget_bytes)}.</p>")


def render(report: HtmlReport) -> bytes:
    """The page of one plan (UTF-8)."""
    figures = [dict(sram_figure(report), id="chart-sram"), dict(cycles_figure(report), id="chart-cycles"),
               dict(cascade_figure(report), id="chart-cascades")]
    maps = memory_map_figures(report)
    figures += [dict(fig, id=f"chart-map-{k}") for k, (_, fig) in enumerate(maps)]
    op_rows, op_classes = _op_rows(report)
    body = "".join((
        f"<h1>npuplan report: {text(report.network)}</h1>",
        f'<p class="sub">{text(report.source)}</p>',
        _summary(report),
        "<details><summary>target and options</summary>", _target(report), "</details>",
        _notes(report),
        "<h2>SRAM over the schedule</h2>", _sram_text(report), chart("chart-sram"),
        "<h2>Cycles per op</h2><p>Bars: compute and each memory's transfer time; the op takes the longest. "
        "Dash: the op's lower bound (MACs at the array's peak rate, weight bytes at their memory's bandwidth). "
        "Triangles: ops bound by a memory. Crosses: estimates below their own lower bound (weight transfers "
        "the cost model does not charge to the op).</p>", chart("chart-cycles"),
        "<h2>Cascades and stripes</h2>", chart("chart-cascades"),
        "<h2>Where each buffer lives</h2>",
        *(chart(f"chart-map-{k}") for k in range(len(maps))),
        '<details><summary>buffer table</summary><div class="scroll">',
        table(TENSOR_HEADERS, _tensor_rows(report), name_columns=(0,)), "</div></details>",
        "<h2>Ops</h2><p>Click a header to sort.</p>",
        table(OP_HEADERS, op_rows, row_classes=op_classes, name_columns=(1, 5)),
    ))
    return page(f"npuplan report: {report.network}", body, figures)
