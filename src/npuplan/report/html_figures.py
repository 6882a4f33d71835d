"""The HTML report's charts as plotly figure specifications: plain ``{"data", "layout"}`` dicts
(plotly.js's own JSON format), built without importing plotly.

Every name from the model in hover text is HTML-escaped: plotly.js reads a few tags in hover text
(``<br>``, ``<b>``, ``<a href>``), so an escaped name shows as text (``&lt;`` as ``<``) and
cannot become a tag or a link. Units: bytes shown in KiB, cycles as counts.

Hover text travels as ``"hoverlines"``: per point a list of lines (the page joins them with
``<br>``), or the index of an earlier trace of the figure whose hover text to share, which keeps
large networks' pages small.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

from npuplan.report.html_model import CycleSplit, HtmlReport, OpRow, TensorRow
from npuplan.report.sram_timeline import KIND_LABELS, SramStep

Figure = dict[str, Any]

# Hover lists at most this many names; the rest are counted.
HOVER_NAMES = 12
# Draw the SRAM budget line when it is within this factor of the peak (a 4 GiB "no limit" budget
# would flatten the chart); otherwise the title states it.
BUDGET_IN_VIEW = 4.0
KIND_COLOURS = {
    "feature_map": "#4c78a8", "rolling": "#72b7b2", "staged": "#f58518", "weight_buffer": "#54a24b",
    "constant": "#b279a2",
}
AREA_COLOURS = {"Sram": "#4c78a8", "Dram": "#f58518", "OnChipFlash": "#54a24b", "OffChipFlash": "#e45756"}


def esc(text: object) -> str:
    """``text`` as plotly hover/label text that shows as typed (no tags, no entities)."""
    return html.escape(str(text), quote=True)


def kib(size_bytes: float) -> float:
    return round(size_bytes / 1024, 3)


def size_text(size_bytes: float) -> str:
    """``size_bytes`` in the largest binary unit that keeps it at least 1 (``"4 GiB"``)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size_bytes >= scale:
            return f"{size_bytes / scale:.4g} {unit}"
    return f"{size_bytes:g} bytes"


def _names(lines: Sequence[str]) -> list[str]:
    shown = list(lines[:HOVER_NAMES])
    if len(lines) > HOVER_NAMES:
        shown.append(f"... and {len(lines) - HOVER_NAMES} more")
    return shown


def _short(name: str, limit: int = 90) -> str:
    return name if len(name) <= limit else name[: limit - 3] + "..."


def _layout(title: str, x_title: str, y_title: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": esc(title)}, "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}}, "margin": {"l": 70, "r": 20, "t": 50, "b": 50},
        "height": 440, "hoverlabel": {"align": "left"}, **extra,
    }


def step_axis(steps: int) -> dict[str, Any]:
    """An x axis over op steps ``0..steps-1``: whole-number ticks, the ends in view."""
    return {"title": {"text": "op step"}, "range": [-0.6, max(steps, 1) - 0.4], "tick0": 0,
            "dtick": max(1, math.ceil(steps / 25)), "zeroline": False}


# ---------------------------------------------------------------------------- SRAM over the schedule


def _live_hover(report: HtmlReport, s: SramStep) -> list[str]:
    op = report.ops[s.step]
    lines = [f"{esc(_short(b.name))} ({KIND_LABELS.get(b.kind, esc(b.kind))}, {kib(b.size_bytes):g} KiB)"
             for b in s.live]
    return [f"<b>step {s.step}</b> {esc(_short(op.name))}", f"{kib(s.total_bytes):g} KiB live in {len(s.live)} buffers",
            *_names(lines)]


def sram_figure(report: HtmlReport) -> Figure:
    """Fast-memory bytes live at each op step, stacked by buffer kind, with the budget and the
    peak step marked; hovering the total lists the buffers live at that step."""
    steps = [s.step for s in report.sram]
    data: list[dict[str, Any]] = []
    for kind, label in KIND_LABELS.items():
        values = [kib(s.bytes_of(kind)) for s in report.sram]
        if any(values):
            data.append({"type": "bar", "name": label, "x": steps, "y": values,
                         "marker": {"color": KIND_COLOURS[kind]}, "hovertemplate": "%{y:.1f} KiB<extra>" + label + "</extra>"})
    totals = [kib(s.total_bytes) for s in report.sram]
    data.append({"type": "scatter", "mode": "lines", "name": "live total", "x": steps, "y": totals,
                 "line": {"color": "#333", "width": 1}, "hoverlines": [_live_hover(report, s) for s in report.sram],
                 "hoverinfo": "text"})
    peak = report.peak_step
    shapes, annotations = [], []
    title = f"{report.sram_area} live bytes per op step"
    if peak >= 0:
        data.append({"type": "scatter", "mode": "markers", "name": "peak", "x": [peak], "y": [totals[peak]],
                     "marker": {"symbol": "star", "size": 14, "color": "#d62728"}, "hoverinfo": "skip"})
        annotations.append({"x": peak, "y": totals[peak], "text": f"peak {totals[peak]:g} KiB at step {peak}",
                            "showarrow": True, "arrowhead": 2, "ax": 40, "ay": -30})
    budget = report.sram_budget_bytes
    top = max(totals, default=0.0)
    if budget and kib(budget) <= BUDGET_IN_VIEW * max(top, 1.0):
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": kib(budget), "y1": kib(budget),
                       "line": {"color": "#d62728", "dash": "dash"}})
        annotations.append({"xref": "paper", "x": 0, "y": kib(budget), "xanchor": "left", "yanchor": "bottom",
                            "text": f"budget (arena cache size) {size_text(budget)}", "showarrow": False})
    else:
        title += f" (budget {size_text(budget)}, off the chart)"
    if report.sram_allocated_bytes:
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": kib(report.sram_allocated_bytes),
                       "y1": kib(report.sram_allocated_bytes), "line": {"color": "#888", "dash": "dot", "width": 1}})
        annotations.append({"xref": "paper", "x": 1, "y": kib(report.sram_allocated_bytes), "xanchor": "right",
                            "yanchor": "bottom", "showarrow": False,
                            "text": f"allocated peak address {size_text(report.sram_allocated_bytes)}"})
    layout = _layout(title, "op step", "KiB", barmode="stack", bargap=0.05, hovermode="closest",
                     shapes=shapes, annotations=annotations, xaxis=step_axis(len(report.ops)))
    return {"data": data, "layout": layout}


# ---------------------------------------------------------------------------- cycles per op


def _cycle_hover(op: OpRow, c: CycleSplit) -> list[str]:
    access = [f"{esc(area)} transfers: {v:,.0f}" for area, v in c.access_cycles.items() if v]
    return [f"<b>step {op.step}</b> {esc(_short(op.name))}",
            f"{esc(op.operator)}: {c.total_cycles:,.0f} cycles, bound by {esc(c.bound_by)}",
            f"compute: {c.compute_cycles:,.0f}", *access, "lower bound: "
            f"{c.lower_bound_cycles:,.0f} (MACs {c.mac_bound_cycles:,.0f}, weights {c.weight_bound_cycles:,.0f})"]


def cycles_figure(report: HtmlReport) -> Figure:
    """Each NPU op's compute cycles beside each memory's transfer cycles, its lower bound marked;
    ops bound by a memory are flagged."""
    npu = [op for op in report.ops if op.cycles is not None]
    steps = [op.step for op in npu]
    splits = [op.cycles for op in npu if op.cycles is not None]
    hover = [_cycle_hover(op, c) for op, c in zip(npu, splits)]
    data: list[dict[str, Any]] = [{"type": "bar", "name": "compute", "x": steps, "y": [c.compute_cycles for c in splits],
                                   "marker": {"color": "#9d9d9d"}, "hoverlines": hover, "hoverinfo": "text"}]
    areas = sorted({a for c in splits for a, v in c.access_cycles.items() if v})
    for area in areas:
        data.append({"type": "bar", "name": f"{esc(area)} transfers", "x": steps,
                     "y": [c.access_cycles.get(area, 0.0) for c in splits],
                     "marker": {"color": AREA_COLOURS.get(area, "#999")}, "hoverlines": 0, "hoverinfo": "text"})
    data.append({"type": "scatter", "mode": "markers", "name": "lower bound",
                 "x": steps, "y": [c.lower_bound_cycles for c in splits],
                 "marker": {"symbol": "line-ew-open", "size": 12, "color": "#000", "line": {"width": 2}},
                 "hoverlines": 0, "hoverinfo": "text"})
    bound = [(op.step, c.total_cycles) for op, c in zip(npu, splits) if c.bound_by != "compute"]
    data.append({"type": "scatter", "mode": "markers", "name": f"memory-bound ops ({len(bound)})",
                 "x": [s for s, _ in bound], "y": [v for _, v in bound],
                 "marker": {"symbol": "triangle-down", "size": 9, "color": "#d62728"}, "hoverinfo": "skip"})
    # An estimate under its own lower bound means transfers the cost model hides (weight slices
    # streamed during the op but not charged to it): worth a look, so marked.
    under = [(op.step, c.lower_bound_cycles) for op, c in zip(npu, splits)
             if c.lower_bound_cycles > c.total_cycles * (1 + 1e-6)]
    if under:
        data.append({"type": "scatter", "mode": "markers", "name": f"estimate below its lower bound ({len(under)})",
                     "x": [s for s, _ in under], "y": [v for _, v in under],
                     "marker": {"symbol": "x", "size": 10, "color": "#9467bd"}, "hoverinfo": "skip"})
    menus = [{"type": "buttons", "direction": "right", "x": 0, "xanchor": "left", "y": 1.12, "buttons": [
        {"label": "linear", "method": "relayout", "args": [{"yaxis.type": "linear"}]},
        {"label": "log", "method": "relayout", "args": [{"yaxis.type": "log"}]},
    ]}]
    layout = _layout("Cycles per NPU op: compute and each memory's transfers (the op takes the longest)",
                     "op step", "cycles", barmode="group", bargap=0.15, hovermode="closest", updatemenus=menus,
                     xaxis=step_axis(len(report.ops)))
    if not npu:
        layout["annotations"] = [{"text": "no op runs on the NPU", "xref": "paper", "yref": "paper", "x": 0.5,
                                  "y": 0.5, "showarrow": False}]
    return {"data": data, "layout": layout}


# ---------------------------------------------------------------------------- cascades and stripes


def _stripe(op: OpRow) -> str:
    if op.placement == "cpu":
        return f"CPU: {esc(op.reason)}"
    ofm_rows = op.ofm_stripe[1] if len(op.ofm_stripe) == 4 else 0
    height = op.ofm_shape[1] if len(op.ofm_shape) == 4 else 0
    ifm_rows = op.ifm_stripe[1] if len(op.ifm_stripe) == 4 else 0
    return (f"OFM stripe {ofm_rows} of {height} rows, IFM stripe {ifm_rows} rows, block {esc(op.block_config)}, "
            f"weights {esc(op.weight_buffering)}")


def cascade_figure(report: HtmlReport) -> Figure:
    """The op sequence as a Gantt-like strip: one bar per op (NPU or CPU), one per cascade over
    the ops it runs stripe by stripe; hover gives stripe heights and block configs."""
    data: list[dict[str, Any]] = []
    for placement, label, colour in (("npu", "NPU op", "#4c78a8"), ("cpu", "CPU op", "#e45756")):
        ops = [op for op in report.ops if op.placement == placement]
        if ops:
            data.append({"type": "bar", "orientation": "h", "name": label, "y": ["ops"] * len(ops),
                         "base": [op.step - 0.45 for op in ops], "x": [0.9] * len(ops), "marker": {"color": colour},
                         "hoverlines": [[f"<b>step {op.step}</b> {esc(_short(op.name))}", _stripe(op)] for op in ops],
                         "hoverinfo": "text"})
    by_name = {op.name: op for op in report.ops}
    cascades = [c for c in report.cascades if c.first_step >= 0]
    if cascades:
        hover: list[list[str]] = []
        for c in cascades:
            lines = [f"{esc(_short(n, 60))}: {_stripe(by_name[n])}" for n in c.ops if n in by_name]
            hover.append([f"<b>cascade {c.id}</b>, steps {c.first_step}-{c.last_step}, "
                         f"{kib(c.sram_bytes):g} KiB", *_names(lines)])
        data.append({"type": "bar", "orientation": "h", "name": "cascade", "y": ["cascades"] * len(cascades),
                     "base": [c.first_step - 0.45 for c in cascades],
                     "x": [c.last_step - c.first_step + 0.9 for c in cascades],
                     "marker": {"color": "#54a24b"}, "hoverlines": hover, "hoverinfo": "text"})
    layout = _layout("Cascades and stripes along the op sequence", "op step", "", barmode="overlay",
                     height=260, hovermode="closest", xaxis=step_axis(len(report.ops)))
    return {"data": data, "layout": layout}


# ---------------------------------------------------------------------------- where tensors live


def memory_map_figures(report: HtmlReport) -> list[tuple[str, Figure]]:
    """Per memory area, each buffer as a box: its live op steps across, its addresses up."""
    out = []
    for area in sorted({t.area for t in report.tensors}):
        rows = [t for t in report.tensors if t.area == area and t.first_step >= 0]
        if rows:
            out.append((area, _memory_map(area, rows, len(report.ops))))
    return out


def _memory_map(area: str, rows: Sequence[TensorRow], steps: int) -> Figure:
    data = []
    for kind, label in KIND_LABELS.items():
        mine = [t for t in rows if t.kind == kind]
        if not mine:
            continue
        data.append({
            "type": "bar", "name": label, "x": [(t.first_step + t.last_step) / 2 for t in mine],
            "width": [t.last_step - t.first_step + 0.9 for t in mine], "base": [kib(t.offset) for t in mine],
            "y": [max(kib(t.size_bytes), 0.001) for t in mine], "marker": {"color": KIND_COLOURS[kind],
                                                                           "line": {"width": 0.5, "color": "#fff"}},
            "hoverlines": [[esc(_short(t.name)), f"{label}, {t.size_bytes:,} bytes at offset {t.offset:,}",
                            f"steps {t.first_step}-{t.last_step}"] for t in mine],
            "hoverinfo": "text", "opacity": 0.85,
        })
    layout = _layout(f"{area}: buffers by address over the op steps", "op step", "address (KiB)",
                     barmode="overlay", hovermode="closest", height=360, xaxis=step_axis(steps))
    return {"data": data, "layout": layout}
