"""The sweep chart: inferences per second against SRAM used, one panel per model, one colour per
accelerator, each accelerator's Pareto front (no other point is both faster and smaller) drawn as
a line. A self-contained HTML page (plotly's JavaScript embedded: it opens offline).

``plotly`` is an optional extra (``pip install "npuplan[report]"``), imported inside
``sweep_html`` only.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from npuplan.records import record

INSTALL_HINT = 'pip install "npuplan[report]"'
PANEL_HEIGHT_PX = 380


@record
class ChartPoint:
    """One planned sweep point: SRAM used in KiB, inferences per second, and its hover text."""

    sram_kib: float
    inferences_per_second: float
    label: str


def pareto_front(points: Sequence[ChartPoint]) -> list[ChartPoint]:
    """The points no other point beats on both axes (less or equal SRAM and at least the same
    rate, one strictly), by increasing SRAM."""
    front: list[ChartPoint] = []
    for point in sorted(points, key=lambda p: (p.sram_kib, -p.inferences_per_second)):
        if not front or point.inferences_per_second > front[-1].inferences_per_second:
            front.append(point)
    return front


def chart_points(rows: Sequence[Mapping[str, object]]) -> dict[str, dict[str, list[ChartPoint]]]:
    """The ``ok`` rows of a sweep CSV as chart points by network, then by accelerator (in order)."""
    grouped: dict[str, dict[str, list[ChartPoint]]] = {}
    for row in rows:
        if row.get("status") != "ok":
            continue
        network, accel = str(row["network"]), str(row["accelerator_configuration"])
        label = "<br>".join(html.escape(str(v)) for v in (
            network, accel, f"{row['system_config']} / {row['memory_mode']}",
            f"optimise {row['option_optimise']}, arena {float(str(row['arena_cache_size'])):.1f} KiB",
            f"{float(str(row['cycles_total'])):.0f} cycles"))
        point = ChartPoint(float(str(row["sram_memory_used"])), float(str(row["inferences_per_second"])), label)
        grouped.setdefault(network, {}).setdefault(accel, []).append(point)
    return grouped


def sweep_html(rows: Sequence[Mapping[str, object]], *, title: str = "npuplan sweep") -> str:
    """The chart of ``rows`` (sweep CSV rows) as one self-contained HTML page. Raises
    ``ImportError`` when plotly is not installed."""
    import plotly.graph_objects as go
    from plotly.colors import qualitative
    from plotly.subplots import make_subplots

    grouped = chart_points(rows)
    networks = list(grouped) or ["(no planned point)"]
    figure = make_subplots(rows=len(networks), cols=1, subplot_titles=[html.escape(n) for n in networks],
                           vertical_spacing=min(0.3 / len(networks), 0.08))
    colours: dict[str, str] = {}
    for panel, network in enumerate(networks, start=1):
        for accel, points in grouped.get(network, {}).items():
            first = accel not in colours
            colour = colours.setdefault(accel, qualitative.Plotly[len(colours) % len(qualitative.Plotly)])
            name = html.escape(accel)
            figure.add_trace(go.Scatter(
                x=[p.sram_kib for p in points], y=[p.inferences_per_second for p in points], mode="markers",
                name=name, legendgroup=name, showlegend=first, marker=dict(color=colour, size=8, opacity=0.6),
                text=[p.label for p in points], hovertemplate="%{text}<extra></extra>"), row=panel, col=1)
            front = pareto_front(points)
            figure.add_trace(go.Scatter(
                x=[p.sram_kib for p in front], y=[p.inferences_per_second for p in front], mode="lines+markers",
                line=dict(color=colour, shape="hv"), name=f"{name} Pareto front", legendgroup=name,
                showlegend=first, marker=dict(color=colour, size=11, symbol="diamond", line=dict(width=1, color="black")),
                text=[p.label for p in front], hovertemplate="Pareto front<br>%{text}<extra></extra>"), row=panel, col=1)
        figure.update_xaxes(title_text="SRAM used (KiB)", row=panel, col=1)
        figure.update_yaxes(title_text="inferences/s", row=panel, col=1)
    figure.update_layout(title=html.escape(title), height=PANEL_HEIGHT_PX * len(networks) + 120, template="plotly_white")
    return str(figure.to_html(include_plotlyjs=True, full_html=True))
