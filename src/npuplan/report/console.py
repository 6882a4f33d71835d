"""Console output in the manner of Vela's network summary, drawn with rich."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from npuplan.report.model import AREAS, Report, build_report

if TYPE_CHECKING:  # rich is imported where it draws: a --quiet compile never pays its import
    from rich.console import Console
    from rich.table import Table

    from npuplan.api import Plan


def _per_layer_table(report: Report) -> Table:
    from rich.table import Table

    from npuplan.report.files import PER_LAYER_COLUMNS, per_layer_rows

    table = Table(title=f"Performance for NPU graph {report.network}", show_lines=False)
    for column in PER_LAYER_COLUMNS:
        table.add_column(column, justify="left" if column in ("TFLite_operator", "NNG Operator", "Name") else "right")
    for row in per_layer_rows(report):
        table.add_row(*(f"{v:.2f}" if isinstance(v, float) and not float(v).is_integer() else
                        (f"{int(v)}" if isinstance(v, float) else str(v)) for v in row))
    return table


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
    console: Console | None = None,
) -> None:
    """Print the network summary (and optionally the per-layer table and op placements)."""
    from rich.console import Console

    out = console or Console(highlight=False, soft_wrap=True)
    report = build_report(plan)
    if verbose_performance:
        out.print(_per_layer_table(report))
    out.print(f"\nNetwork summary for {report.network}")
    for label, value in _summary_lines(report):
        out.print(f"{label:<40} {value}")
    if show_cpu_operations:
        out.print("")
        for op in plan.lowered.ops:
            if hasattr(op, "reason"):
                out.print(f"   CPU: {op.tflite_type} = {op.name} ({op.reason})")  # type: ignore[union-attr]
            else:
                out.print(f"   NPU: {op.op_type} = {op.name}")  # type: ignore[union-attr]
        for name, reason in plan.lowered.removed:
            out.print(f"   removed: {name} ({reason})")
    for note in report.notes:
        out.print(f"note: {note}")
    if written:
        out.print("\nWrote " + ", ".join(str(p) for p in written))
