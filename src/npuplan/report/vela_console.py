"""Vela 5.2's console output, line for line, from npuplan's report model: the network summary (the
labels, units, widths and order of ``vela``'s, its optional weight and cycle blocks) and the
per-layer performance table and CSV of ``--verbose-performance`` (Vela 5.2's columns). npuplan's
own lines come after Vela's (``npuplan_lines``)."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import replace

from npuplan.hw.memory import MemArea
from npuplan.report.files import per_layer_rows, text_cell
from npuplan.report.model import AREAS, Report

# Vela 5.2's per-layer columns: (name, align, width, decimals; None for text).
PER_LAYER = (
    ("Original Operator", "<", 20, None), ("NNG Operator", "<", 20, None), ("Target", "<", 6, None),
    ("Staging Usage", ">", 13, 0), ("Peak% (Staging)", ">", 16, 2), ("Op Cycles", ">", 10, 0),
    ("Network% (cycles)", ">", 17, 2), ("NPU", ">", 10, 0), ("SRAM AC", ">", 10, 0), ("DRAM AC", ">", 10, 0),
    ("OnFlash AC", ">", 10, 0), ("OffFlash AC", ">", 11, 0), ("MAC Count", ">", 10, 0),
    ("Network% (MAC)", ">", 14, 2), ("Util% (MAC)", ">", 12, 2), ("Name", "<", 20, None),
)
_MiB = 1024.0 * 1024.0


def _area_bytes(report: Report, area: MemArea, purpose: str | None = None, direction: str | None = None) -> float:
    return sum(v for (a, p, d), v in report.access_bytes.items()
               if a == area and purpose in (None, p) and direction in (None, d))


def summary_lines(report: Report, *, verbose_weights: bool = False, verbose_cycle_estimate: bool = False,
                  cpu_ops: Sequence[str] | None = None, npu_ops: Sequence[str] | None = None,
                  flash_is_sram: bool = False) -> list[str]:
    """Vela's network summary. ``cpu_ops``/``npu_ops``: the operators ``--show-cpu-operations`` lists;
    ``flash_is_sram``: the on-chip flash is the SRAM's other port (Vela's Sram_Only rule), whose
    traffic Vela counts as SRAM's."""
    if flash_is_sram:
        report = _flash_as_sram(report)
    ips = report.inferences_per_second
    moved = [a for a in AREAS if _area_bytes(report, a) > 0]
    # Vela's figures are its NPU command stream's: a network with nothing on the NPU uses no memory.
    used = [a for a in AREAS if report.memory_used_bytes.get(a, 0) > 0 and report.npu_op_count]
    lines = ["", f"Network summary for {report.network}",
             f"Accelerator configuration        {report.accelerator:>20}",
             f"System configuration             {report.system_config:>20}",
             f"Memory mode                      {report.memory_mode:>20}",
             f"Accelerator clock                        {int(report.core_clock_hz / 1e6):12d} MHz"]
    lines += [f"Design peak {a.label + ' bandwidth':25}    {report.bandwidth_bytes_per_s[a] / 1024.0**3:12.2f} GB/s"
              for a in moved]
    lines.append("")
    lines += [f"Total {a.label + ' used':25}          {report.memory_used_bytes.get(a, 0) / 1024.0:12.2f} KiB"
              for a in used]
    lines.append("")
    lines += _operator_lines(report, cpu_ops, npu_ops)
    lines.append("")
    for area in moved:
        lines += _bandwidth_lines(report, area, ips)
    if verbose_weights:
        lines += [f"Original Weights Size                    {report.total_original_weights / 1024.0:12.2f} KiB",
                  f"NPU Encoded Weights Size                 {report.total_npu_encoded_weights / 1024.0:12.2f} KiB", ""]
    lines.append(f"Neural network macs                      {int(report.nn_macs):12d} MACs/batch")
    if verbose_cycle_estimate:
        lines += _cycle_lines(report, ips)
    lines.append("")
    return lines


def _flash_as_sram(report: Report) -> Report:
    """``report`` with the on-chip flash's accesses counted as the SRAM's."""
    moved: dict[tuple[MemArea, str, str], float] = {}
    for (area, purpose, direction), value in report.access_bytes.items():
        key = (MemArea.SRAM if area == MemArea.ON_CHIP_FLASH else area, purpose, direction)
        moved[key] = moved.get(key, 0.0) + value
    return replace(report, access_bytes=moved)


def _operator_lines(report: Report, cpu_ops: Sequence[str] | None, npu_ops: Sequence[str] | None) -> list[str]:
    listed = cpu_ops is not None and npu_ops is not None
    counts = (("CPU", report.cpu_op_count, cpu_ops or ()), ("NPU", report.npu_op_count, npu_ops or ()))
    total = max(report.cpu_op_count + report.npu_op_count, 1)
    lines = []
    for kind, count, ops in counts:
        lines.append(f"{kind} operators = {count:d} ({count / total:4.1%})")
        if listed:
            lines += [f"   {kind}: {op}" for op in ops]
    return lines


def _bandwidth_lines(report: Report, area: MemArea, ips: float) -> list[str]:
    label = area.label + " bandwidth"
    total = _area_bytes(report, area)
    average = total * ips / 1024.0 / 1024.0 / 1000.0 if math.isfinite(ips) else float("nan")
    return [
        f"Average {label:25}        {average:12.2f} GB/s",
        f"Input   {label:25}        {_area_bytes(report, area, 'feature_map', 'read') / _MiB:12.2f} MB/batch",
        f"Weight  {label:25}        {_area_bytes(report, area, 'weights') / _MiB:12.2f} MB/batch",
        f"Output  {label:25}        {_area_bytes(report, area, 'feature_map', 'write') / _MiB:12.2f} MB/batch",
        f"Total   {label:25}        {total / _MiB:12.2f} MB/batch",
        f"Total   {label:25} per input {total / _MiB:9.2f} MB/inference (batch size 1)",
        "",
    ]


def _cycle_lines(report: Report, ips: float) -> list[str]:
    cycles = [("NPU", report.cycles_npu), *((f"{a.label} access", report.cycles_access.get(a, 0.0)) for a in AREAS),
              ("Total", report.cycles_total)]
    lines = ["", "Info: The numbers below are internal compiler estimates.",
             "For performance numbers the compiled network should be run on an FVP Model or FPGA.", "",
             f"Network Tops/s                           {report.nn_macs * 2 * ips / 1e12:12.2f} Tops/s", ""]
    lines += [f"{name + ' cycles':30}           {int(value):12d} cycles/batch" for name, value in cycles]
    lines += ["", f"Batch Inference time              {report.inference_time_s * 1000:7.2f} ms,"
                  f" {ips:7.2f} inferences/s (batch size 1)"]
    return lines


def npuplan_lines(report: Report) -> list[str]:
    """npuplan's own figures, printed after Vela's summary (Vela 5.2 prints no cycle estimate
    unless asked)."""
    return [f"npuplan estimate: {int(report.cycles_total)} cycles/batch, {report.inference_time_s * 1000:.3f} ms, "
            f"{report.inferences_per_second:.2f} inferences/s; compiled in {report.compile_seconds:.2f} s"]


def per_layer_values(report: Report) -> list[list[object]]:
    """Vela 5.2's per-layer rows: npuplan's per-layer rows with the ``Target`` column."""
    return [[*row[:2], "NPU", *row[2:]] for row in per_layer_rows(report)]


def per_layer_table(report: Report, label: str) -> list[str]:
    """The per-layer table as Vela 5.2 prints it (``label``: the output path without suffix)."""
    head = " ".join(f"{name:{align}{width}}" for name, align, width, _ in PER_LAYER) + " "
    rule = " ".join("-" * max(width, len(name)) for name, _, width, _ in PER_LAYER) + " "
    lines = ["", "#" * 80, f"Performance for NPU Grap {label}", head, rule]
    for row in per_layer_values(report):
        cells = []
        for value, (_, align, width, decimals) in zip(row, PER_LAYER):
            text = str(value) if decimals is None else f"{float(value):.{decimals}f}"  # type: ignore[arg-type]
            cells.append(f"{text:{align}{width}}")
        lines.append(" ".join(cells) + " ")
    return lines


def per_layer_csv_text(report: Report) -> str:
    """``<network>_per-layer.csv`` with Vela 5.2's header."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([name for name, _, _, _ in PER_LAYER])
    for row in per_layer_values(report):
        writer.writerow([text_cell(v) if isinstance(v, str) else (int(v) if isinstance(v, float) and v.is_integer()
                                                                   else v) for v in row])
    return out.getvalue()
