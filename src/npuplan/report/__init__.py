"""Renderers of one report model: console, CSV and JSON; the HTML report (``html``) reads the plan JSON."""

from npuplan.report.console import render_console
from npuplan.report.files import write_reports
from npuplan.report.model import LayerRow, Report, build_report

__all__ = ["LayerRow", "Report", "build_report", "render_console", "write_reports"]
