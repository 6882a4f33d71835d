"""Report files: Vela's summary and per-layer CSVs and npuplan's plan JSON.

All contents are rendered in memory first and then moved into place, so a failure never leaves a
half-written file behind.
"""

from __future__ import annotations

import csv
import io
import json
import string
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from npuplan.io.atomic import write_atomically
from npuplan.report.model import AREAS, Report, build_report
from npuplan.report.plan_json import plan_json
from npuplan.report.summary import SUMMARY_COLUMNS, summary_row

if TYPE_CHECKING:
    from npuplan.result import Plan

PER_LAYER_COLUMNS = (
    "TFLite_operator", "NNG Operator", "SRAM Usage", "Peak%", "Op Cycles", "Network%", "NPU", "SRAM AC", "DRAM AC",
    "OnFlash AC", "OffFlash AC", "MAC Count", "Network%", "Util%", "Name",
)


# A cell a spreadsheet would read as a formula starts with one of these.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# What a name may keep in a file name; anything else becomes '_' (a set: a regular expression's
# compile costs every plan ~0.6 M instructions, more than the names it is used on).
_FILE_NAME_SAFE = frozenset(string.ascii_letters + string.digits + "_.-")


def text_cell(value: object) -> object:
    """``value`` as a CSV cell that stays text: a string a spreadsheet would evaluate as a formula
    gets a leading apostrophe (the usual CSV-injection defence). Numbers are left as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def file_name_part(name: str) -> str:
    """``name`` made safe to be part of a file name: no separators, no '..', nothing hidden."""
    safe = "".join(c if c in _FILE_NAME_SAFE else "_" for c in name).strip(".")
    return safe or "_"


def _csv_text(header: tuple[str, ...], rows: list[list[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([text_cell(v) for v in row] for row in rows)
    return buffer.getvalue()


def summary_csv(report: Report) -> str:
    row = summary_row(report)
    return _csv_text(SUMMARY_COLUMNS, [[row[c] for c in SUMMARY_COLUMNS]])


def per_layer_rows(report: Report) -> list[list[object]]:
    """Vela's per-layer table rows (percentages of the network peak, cycles and MACs)."""
    peak = max((layer.sram_usage_bytes for layer in report.layers), default=0)
    total_cycles = sum(layer.op_cycles for layer in report.layers)
    total_macs = sum(layer.macs for layer in report.layers)
    macs_per_cycle = _macs_per_cycle(report)
    rows = []
    for layer in report.layers:
        util = 100.0 * layer.macs / (layer.op_cycles * macs_per_cycle) if layer.op_cycles else 0.0
        rows.append([
            layer.tflite_operator,
            layer.nng_operator,
            layer.sram_usage_bytes,
            100.0 * layer.sram_usage_bytes / peak if peak else 0.0,
            layer.op_cycles,
            100.0 * layer.op_cycles / total_cycles if total_cycles else 0.0,
            layer.npu_cycles,
            *(layer.access_cycles.get(area, 0.0) for area in AREAS),
            layer.macs,
            100.0 * layer.macs / total_macs if total_macs else 0.0,
            util,
            layer.name,
        ])
    return rows


def _macs_per_cycle(report: Report) -> int:
    from npuplan.hw.accelerator import ACCELERATORS

    for accel in ACCELERATORS.values():
        if accel.vela_name == report.accelerator:
            return accel.macs_per_cycle * accel.cores
    return 1


def per_layer_csv(report: Report) -> str:
    return _csv_text(PER_LAYER_COLUMNS, per_layer_rows(report))


def write_reports(plan: "Plan", output_dir: str | Path, report: Report | None = None, *,
                  html: bool = False) -> list[Path]:
    """Write the summary CSV, per-layer CSV and plan JSON (from ``report``, built from the plan
    when not given), and with ``html`` the HTML report; return their paths."""
    report = build_report(plan) if report is None else report
    directory = Path(output_dir)
    network, system = file_name_part(report.network), file_name_part(report.system_config)
    plan_path = directory / f"{network}_plan.json"
    files: dict[Path, str | bytes] = {
        directory / f"{network}_summary_{system}.csv": summary_csv(report),
        directory / f"{network}_per-layer.csv": per_layer_csv(report),
        plan_path: plan_json(plan, report),
    }
    if html:  # from the plan JSON's text, so the page is exactly what `npuplan report` makes of it
        from npuplan.report.html import report_html

        files[directory / f"{network}_report.html"] = report_html(json.loads(files[plan_path]), plan_path)
    write_files(files, directory)
    return list(files)


def write_files(files: Mapping[Path, str | bytes], directory: Path) -> None:
    """Write every file of ``files`` (text as UTF-8; creating ``directory``) or none; raises
    ``NpuplanError``."""
    from npuplan.errors import NpuplanError

    try:
        directory.mkdir(parents=True, exist_ok=True)
        write_atomically(files)
    except OSError as error:
        raise NpuplanError(f"cannot write reports to '{directory}': {error.strerror or error}") from None
