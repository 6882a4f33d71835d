"""Report files: Vela's summary and per-layer CSVs and npuplan's plan JSON.

All contents are rendered in memory first and then moved into place, so a failure never leaves a
half-written file behind.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from npuplan.report.model import AREAS, DIRECTIONS, Report, build_report
from npuplan.report.plan_json import plan_json

if TYPE_CHECKING:
    from npuplan.api import Plan

SUMMARY_COLUMNS = (
    "experiment", "network", "accelerator_configuration", "system_config", "memory_mode", "core_clock",
    "arena_cache_size", "sram_bandwidth", "dram_bandwidth", "on_chip_flash_bandwidth", "off_chip_flash_bandwidth",
    "weights_storage_area", "feature_map_storage_area", "inferences_per_second", "batch_size", "inference_time",
    "passes_before_fusing", "passes_after_fusing", "sram_memory_used", "dram_memory_used",
    "on_chip_flash_memory_used", "off_chip_flash_memory_used", "total_original_weights",
    "total_npu_encoded_weights",
    *(f"{a.csv_prefix}_{kind}" for a in AREAS for kind in (
        "feature_map_read_bytes", "feature_map_write_bytes", "weight_read_bytes", "weight_write_bytes", "total_bytes")),
    "nn_macs", "nn_tops", "cycles_npu", "cycles_sram_access", "cycles_dram_access", "cycles_on_chip_flash_access",
    "cycles_off_chip_flash_access", "cycles_total", "npu_operators", "cpu_operators",
)

PER_LAYER_COLUMNS = (
    "TFLite_operator", "NNG Operator", "SRAM Usage", "Peak%", "Op Cycles", "Network%", "NPU", "SRAM AC", "DRAM AC",
    "OnFlash AC", "OffFlash AC", "MAC Count", "Network%", "Util%", "Name",
)


def summary_row(report: Report) -> dict[str, object]:
    """The summary CSV's values by column, in Vela's units (KiB for memory, GiB/s for bandwidth)."""
    row: dict[str, object] = {
        "experiment": "default",
        "network": report.network,
        "accelerator_configuration": report.accelerator,
        "system_config": report.system_config,
        "memory_mode": report.memory_mode,
        "core_clock": float(report.core_clock_hz),
        "arena_cache_size": report.arena_cache_size_bytes / 1024,
        "weights_storage_area": report.weights_area.label,
        "feature_map_storage_area": report.feature_map_area.label,
        "inferences_per_second": report.inferences_per_second,
        "batch_size": 1,
        "inference_time": report.inference_time_s,
        "passes_before_fusing": report.passes_before_fusing,
        "passes_after_fusing": report.passes_after_fusing,
        "total_original_weights": report.total_original_weights,
        "total_npu_encoded_weights": report.total_npu_encoded_weights,
        "nn_macs": report.nn_macs,
        "nn_tops": report.nn_macs * 2 * report.inferences_per_second / 1e12,
        "cycles_npu": report.cycles_npu,
        "cycles_total": report.cycles_total,
        "npu_operators": report.npu_op_count,
        "cpu_operators": report.cpu_op_count,
    }
    for area in AREAS:
        p = area.csv_prefix
        row[f"{p}_bandwidth"] = report.bandwidth_bytes_per_s[area] / 1024**3
        row[f"{p}_memory_used"] = report.memory_used_bytes.get(area, 0) / 1024
        for purpose, label in (("feature_map", "feature_map"), ("weights", "weight")):
            for direction in DIRECTIONS:
                row[f"{p}_{label}_{direction}_bytes"] = report.access_bytes.get((area, purpose, direction), 0.0)
        row[f"{p}_total_bytes"] = report.total_bytes(area)
        row[f"cycles_{p}_access"] = report.cycles_access.get(area, 0.0)
    return row


# A cell a spreadsheet would read as a formula starts with one of these.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# What a name may keep in a file name; anything else becomes '_'.
_FILE_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def text_cell(value: object) -> object:
    """``value`` as a CSV cell that stays text: a string a spreadsheet would evaluate as a formula
    gets a leading apostrophe (the usual CSV-injection defence). Numbers are left as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def file_name_part(name: str) -> str:
    """``name`` made safe to be part of a file name: no separators, no '..', nothing hidden."""
    safe = _FILE_NAME_UNSAFE.sub("_", name).strip(".")
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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(files: Mapping[Path, str | bytes]) -> None:
    """Write every file to a temporary file beside it, then move them all into place: a failure
    (or a reader) never sees half a file. The files get the permissions a plain ``open`` would
    give them (0666 less the umask), not the temporary file's 0600."""
    staged: list[tuple[str, Path]] = []
    mode = 0o666 & ~_umask()
    try:
        for path, text in files.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            with os.fdopen(fd, "wb") as handle:
                handle.write(text if isinstance(text, bytes) else text.encode("utf-8"))
                os.fchmod(handle.fileno(), mode)
            staged.append((tmp, path))
        for tmp, path in staged:
            os.replace(tmp, path)
    finally:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)


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
