"""``npuplan report PLAN.json [PLAN_B.json] -o FILE.html``: the HTML report of a written plan, or
two plans side by side; the file is written whole or not at all."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from npuplan.commands.plan_file import load_plan_document
from npuplan.errors import NpuplanError
from npuplan.report.files import write_files
from npuplan.report.html import render
from npuplan.report.html_model import HtmlReport, html_report


def read_html_report(path: str | Path) -> HtmlReport:
    """The report model of the plan JSON at ``path``; raises ``PlanFileError`` (exit status 2)."""
    return html_report(load_plan_document(path), path)


def write_html_report(plans: Sequence[str | Path], output: str | Path) -> Path:
    """Write the report of one plan JSON, or the comparison of two, to ``output``."""
    from npuplan.report.html_diff import render_diff

    out = Path(output)
    if any(out.resolve() == Path(p).resolve() for p in plans):
        raise NpuplanError(f"the report '{out}' would overwrite its own plan JSON: choose another -o")
    reports = [read_html_report(p) for p in plans]
    page = render(reports[0]) if len(reports) == 1 else render_diff(reports[0], reports[1])
    write_files({out: page}, out.parent)
    return out
