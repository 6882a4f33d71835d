"""The ``npuplan sweep`` and ``npuplan fit`` commands: their arguments and what they run.

Only ``argparse`` is imported at start-up; the planning modules are imported by the commands.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npuplan.cli_options import add_fixed_options, fixed_options
from npuplan.options import DEFAULT_CONFIG, Optimise

if TYPE_CHECKING:
    from npuplan.sweep.fit import FitResult
    from npuplan.sweep.points import SweepPoint
    from npuplan.sweep.runner import RowSink

HTML_NAME = "sweep.html"


def add_sweep_parser(commands: Any) -> None:
    """The ``sweep`` subcommand's arguments, on ``commands`` (argparse's subparsers)."""
    p = commands.add_parser("sweep", help="plan every combination of option values and write sweep.csv/.html")
    p.add_argument("models", nargs="+", metavar="MODEL.tflite", help="quantized TFLite model(s)")
    p.add_argument("--config", action="append", default=[], metavar="FILE.ini",
                   help="Vela-format .ini config file(s), read for every point")
    p.add_argument("--accelerator-config", default="ethos-u55-128", metavar="A,B,...", help="accelerator presets")
    p.add_argument("--system-config", default=DEFAULT_CONFIG, metavar="X,Y,...", help="system config names")
    p.add_argument("--memory-mode", default=DEFAULT_CONFIG, metavar="M,N,...", help="memory mode names")
    p.add_argument("--optimise", default=Optimise.PERFORMANCE.value, metavar="Performance,Size", help="optimise goals")
    p.add_argument("--arena-cache-size", default="default", metavar="128k,256k,...",
                   help="SRAM budgets in bytes, k (1024) or M (1048576) suffixes; 'default' is the memory mode's")
    add_fixed_options(p)
    p.add_argument("--output-dir", required=True, help="where sweep.csv and sweep.html are written")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="plan in N worker processes")
    p.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help='run the points as Ray tasks: a local Ray, or the cluster at ADDRESS (pip install "npuplan[ray]")')
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary line")
    p.add_argument("--debug", action="store_true", help="on an internal error, print the traceback")


def add_fit_parser(commands: Any) -> None:
    """The ``fit`` subcommand's arguments, on ``commands`` (argparse's subparsers)."""
    p = commands.add_parser("fit", help="the smallest arena cache size reaching an inference rate, per accelerator")
    p.add_argument("network", metavar="MODEL.tflite", help="quantized TFLite model")
    p.add_argument("--fps", type=float, required=True, metavar="F", help="inferences per second to reach")
    p.add_argument("--config", action="append", default=[], metavar="FILE.ini", help="Vela-format .ini config file(s)")
    p.add_argument("--accelerator-config", default="ethos-u55-128", metavar="A,B,...", help="accelerator presets")
    p.add_argument("--system-config", default=DEFAULT_CONFIG, help="system config name")
    p.add_argument("--memory-mode", default=DEFAULT_CONFIG, help="memory mode name")
    p.add_argument("--optimise", default=Optimise.PERFORMANCE.value, metavar="{Performance,Size}",
                   help="what to optimise for")
    add_fixed_options(p)
    p.add_argument("--granularity", type=int, default=16, metavar="BYTES",
                   help="budgets searched are multiples of this (a multiple of 16)")
    p.add_argument("--output-dir", default="output",
                   help="the found plan's reports go in OUTPUT_DIR/<accelerator>/")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--debug", action="store_true", help="on an internal error, print the traceback")


def run_sweep(args: argparse.Namespace) -> int:
    """Plan the sweep's pending points, write ``sweep.csv`` (and ``sweep.html`` with plotly)."""
    from npuplan.errors import UsageError
    from npuplan.report.progress import count_progress
    from npuplan.sweep.points import AXES, split_values, sweep_points
    from npuplan.sweep.table import CSV_NAME, SweepTable

    started = time.perf_counter()
    if args.jobs < 1:
        raise UsageError(f"invalid value '{args.jobs}' for --jobs: must be at least 1")
    axes = {option: split_values(getattr(args, option.replace("-", "_")), option) for option, _ in AXES}
    points = sweep_points(args.models, axes, fixed_options(args))
    out = Path(args.output_dir)
    table = SweepTable(out / CSV_NAME, points)
    pending = table.pending()
    with count_progress(len(pending), "sweeping", enabled=not args.quiet) as advance:

        def on_row(point: SweepPoint, row: dict[str, object]) -> None:
            table.add(point, row)
            advance()

        try:
            _run_points(pending, on_row, args)
        except BaseException:
            if table.added:  # keep what was planned: a re-run resumes from it
                table.flush()
            raise
    table.flush()
    html = _write_html(table.rows(), out / HTML_NAME)
    if not args.quiet:
        statuses = Counter(str(row["status"]) for row in table.rows()[: len(points)])
        counts = ", ".join(f"{n} {status}" for status, n in statuses.items())
        written = ", ".join(str(p) for p in (out / CSV_NAME, html) if p is not None)
        print(f"swept {len(points)} points ({len(pending)} planned, {len(points) - len(pending)} already in "
              f"{CSV_NAME}): {counts}; {time.perf_counter() - started:.1f} s; wrote {written}")
    return 0


def _run_points(pending: list[SweepPoint], on_row: RowSink, args: argparse.Namespace) -> None:
    """Plan ``pending`` on Ray (``--ray``), in worker processes (``--jobs``) or here."""
    if args.ray is not None:
        from npuplan.sweep.ray_backend import run_points_on_ray

        if pending:
            run_points_on_ray(pending, on_row, address=args.ray or None,
                              num_cpus=args.jobs if args.jobs > 1 else None)
        return
    from npuplan.sweep.runner import run_points

    run_points(pending, on_row, jobs=args.jobs)


def _write_html(rows: list[Mapping[str, object]], path: Path) -> Path | None:
    """Write the sweep chart to ``path``; without plotly, say how to get it and return ``None``."""
    from npuplan.report.sweep_html import INSTALL_HINT, sweep_html
    from npuplan.sweep.table import write_text_atomically

    try:
        text = sweep_html(rows, title=f"npuplan sweep: {path.parent}")
    except ImportError:
        print(f"npuplan: note: {path.name} not written: the chart needs plotly ({INSTALL_HINT})", file=sys.stderr)
        return None
    write_text_atomically(path, text)
    return path


def run_fit(args: argparse.Namespace) -> int:
    """Fit each accelerator's arena cache size to ``--fps``; status 1 when one cannot reach it (the
    others' reports are written and their lines printed)."""
    from npuplan.api import PreparedModel, make_options
    from npuplan.report import write_reports
    from npuplan.report.files import file_name_part
    from npuplan.sweep.fit import check_fit_values, fit_budget, largest_budget
    from npuplan.sweep.points import split_values

    check_fit_values(args.fps, args.granularity)
    accelerators = split_values(args.accelerator_config, "accelerator-config")
    keywords = dict(system_config=args.system_config, memory_mode=args.memory_mode, optimise=args.optimise,
                    **fixed_options(args))
    options = [make_options(accelerator_config=a, **keywords) for a in accelerators]
    for option in options:  # every accelerator's options checked before anything is planned or written
        largest_budget(option)
    model = PreparedModel.read(args.network)
    status = 0
    for option in options:
        result = fit_budget(model, option, args.fps, granularity_bytes=args.granularity)
        if result.answer is None or result.answer.plan is None:
            status = 1
            print(_missed(result), file=sys.stderr)
            continue
        written = write_reports(result.answer.plan, Path(args.output_dir) / file_name_part(result.accelerator))
        if not args.quiet:
            print(_reached(result, written[0].parent))
    return status


def _reached(result: FitResult, where: Path) -> str:
    answer, below = result.answer, result.below
    assert answer is not None and answer.plan is not None
    check = "" if below is None else (
        f"; {below.budget_bytes} bytes: " + ("no plan fits" if below.plan is None
                                             else f"{below.inferences_per_second:.1f} inferences/s"))
    return (f"{result.accelerator}: --arena-cache-size {answer.budget_bytes} ({answer.budget_bytes / 1024:.1f} KiB) "
            f"reaches {answer.inferences_per_second:.1f} inferences/s (target {result.target_fps:g}; "
            f"SRAM used {answer.plan.sram_memory_used_bytes} bytes{check}; {result.plans} plans); reports in {where}")


def _missed(result: FitResult) -> str:
    best = result.best
    at = (f"best {best.inferences_per_second:.1f} inferences/s at {best.budget_bytes} bytes" if best.plan is not None
          else "no budget tried fits")
    return (f"npuplan: {result.accelerator}: no arena cache size up to {result.max_budget_bytes} bytes reaches "
            f"{result.target_fps:g} inferences/s ({at})")
