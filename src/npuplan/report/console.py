"""Console output in the manner of Vela's network summary."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from npuplan.report.model import AREAS, Report, build_report

if TYPE_CHECKING:
    from npuplan.result import Plan


def _per_layer_lines(report: Report, width: int | None) -> list[str]:
    """The per-layer table within ``width`` columns (None: whole), numbers never cut."""
    from npuplan.report.files import PER_LAYER_COLUMNS, per_layer_rows
    from npuplan.report.text_table import table_lines

    texts = [i for i, c in enumerate(PER_LAYER_COLUMNS) if c in ("TFLite_operator", "NNG Operator", "Name")]
    rows = [[f"{v:.2f}" if isinstance(v, float) and not float(v).is_integer() else
             (f"{int(v)}" if isinstance(v, float) else str(v)) for v in row] for row in per_layer_rows(report)]
    lines = [f"Performance for NPU graph {report.network}"]
    return lines + table_lines(PER_LAYER_COLUMNS, rows, width=width, text_columns=texts)


def terminal_width(out: TextIO) -> int | None:
    """The terminal's columns when ``out`` is one; None for a file or pipe (no width to fit)."""
    try:
        if not out.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    return shutil.get_terminal_size().columns


def _summary_lines(report: Report) -> list[tuple[str, str]]:
    lines = [
        ("Accelerator configuration", report.accelerator),
        ("System configuration", report.system_config),
        ("Memory mode", report.memory_mode),
        ("Accelerator clock", f"{report.core_clock_hz / 1e6:.0f} MHz"),
    ]
    used = [a for a in AREAS if report.memory_used_bytes.get(a, 0) > 0 or report.total_bytes(a) > 0]
    for area in used:
        lines.append((f"Design peak {area.label} bandwidth", f"{report.bandwidth_bytes_per_s[area] / 1024**3:.2f} GB/s"))
    for area in used:
        lines.append((f"Total {area.label} used", f"{report.memory_used_bytes.get(area, 0) / 1024:.2f} KiB"))
    total = report.npu_op_count + report.cpu_op_count
    lines += [
        ("CPU operators", f"{report.cpu_op_count} ({100.0 * report.cpu_op_count / total if total else 0:.1f}%)"),
        ("NPU operators", f"{report.npu_op_count} ({100.0 * report.npu_op_count / total if total else 0:.1f}%)"),
        ("Neural network macs", f"{report.nn_macs} MACs/batch"),
        ("NPU cycles", f"{report.cycles_npu:.0f} cycles/batch"),
    ]
    for area in used:
        lines.append((f"{area.label} access cycles", f"{report.cycles_access.get(area, 0.0):.0f} cycles/batch"))
    lines += [
        ("Total cycles", f"{report.cycles_total:.0f} cycles/batch"),
        ("Batch inference time", f"{report.inference_time_s * 1000:.2f} ms, {report.inferences_per_second:.2f} inferences/s"),
        ("Compile time", f"{report.compile_seconds:.2f} s"),
    ]
    return lines


def render_console(
    plan: "Plan",
    *,
    verbose_performance: bool = False,
    show_cpu_operations: bool = False,
    written: list[Path] | None = None,
    report: Report | None = None,
    file: TextIO | None = None,
) -> None:
    """Print the network summary (and optionally the per-layer table and op placements).

    Everything is plain lines (names printed as they are); the per-layer table fits a terminal's
    width without cutting a number (``report.text_table``) and is whole on a file or pipe.
    """
    out = file or sys.stdout
    report = build_report(plan) if report is None else report
    lines = _per_layer_lines(report, terminal_width(out)) if verbose_performance else []
    lines += [f"\nNetwork summary for {report.network}"]
    lines += [f"{label:<40} {value}" for label, value in _summary_lines(report)]
    if show_cpu_operations:
        lines.append("")
        for op in plan.lowered.ops:
            if hasattr(op, "reason"):
                lines.append(f"   CPU: {op.tflite_type} = {op.name} ({op.reason})")  # type: ignore[union-attr]
            else:
                lines.append(f"   NPU: {op.op_type} = {op.name}")  # type: ignore[union-attr]
        lines += [f"   removed: {name} ({reason})" for name, reason in plan.lowered.removed]
    lines += [f"note: {note}" for note in report.notes]
    if written:
        lines.append("\nWrote " + ", ".join(str(p) for p in written))
    print("\n".join(lines), file=out)
