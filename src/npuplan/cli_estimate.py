"""``npuplan estimate COMPILED.tflite``: time a compiled Ethos-U file (npuplan's ``--emit-tflite``
output or Vela's) with npuplan's cost model and write the reports ``npuplan plan`` writes.

Exit status as ``npuplan plan``: 0 written, 2 bad input (unreadable file, unknown configuration),
3 a file whose command streams do not replay (not a valid compiled file).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from npuplan.cli_options import size_bytes
from npuplan.options import DEFAULT_CONFIG, PlanOptions


def add_estimate_parser(commands: Any) -> None:
    """The ``estimate`` subcommand's arguments, on ``commands`` (argparse's subparsers)."""
    p = commands.add_parser("estimate", help="time a compiled Ethos-U file (npuplan's or Vela's) from its command "
                                             "streams and write its reports")
    p.add_argument("network", metavar="COMPILED.tflite", help="a compiled file: ethos-u operators (Vela's or "
                                                             "npuplan's --emit-tflite output)")
    p.add_argument("--config", action="append", default=[], metavar="FILE.ini", help="Vela-format .ini config file(s)")
    p.add_argument("--accelerator-config", default="ethos-u55-128", help="accelerator preset (default: ethos-u55-128)")
    p.add_argument("--system-config", default=DEFAULT_CONFIG, help="system config name")
    p.add_argument("--memory-mode", default=DEFAULT_CONFIG, help="memory mode name")
    p.add_argument("--arena-cache-size", type=size_bytes, default=None, metavar="BYTES",
                   help="the SRAM budget the file was planned for, as given to plan (reported; k and M suffixes)")
    p.add_argument("--output-dir", default="output", help="where reports are written (default: output)")
    p.add_argument("--html", action="store_true", help="also write <network>_estimate.html (needs \"npuplan[report]\")")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--debug", action="store_true", help="on an internal error, print the traceback")


def run_estimate(args: argparse.Namespace) -> int:
    """Estimate the file, write the summary and per-layer CSVs (and the HTML page); 0 when written."""
    from npuplan.estimate import estimate_file
    from npuplan.estimate.report import estimate_document
    from npuplan.report.files import file_name_part, per_layer_csv, summary_csv, write_files

    options = PlanOptions(accelerator_config=args.accelerator_config, config_files=tuple(args.config),
                          system_config=args.system_config, memory_mode=args.memory_mode,
                          arena_cache_size_bytes=args.arena_cache_size)
    estimate = estimate_file(args.network, options)
    report = estimate.report
    directory = Path(args.output_dir)
    network, system = file_name_part(report.network), file_name_part(report.system_config)
    files: dict[Path, str | bytes] = {
        directory / f"{network}_estimate_summary_{system}.csv": summary_csv(report),
        directory / f"{network}_estimate_per-layer.csv": per_layer_csv(report),
    }
    if args.html:
        from npuplan.report.html import report_html

        document = estimate_document(report, estimate.streams, estimate.arch, model=str(args.network))
        files[directory / f"{network}_estimate.html"] = report_html(json.loads(json.dumps(document)), args.network)
    write_files(files, directory)
    if not args.quiet:
        print(f"{args.network}: {report.cycles_total:.0f} cycles ({report.inference_time_s * 1e3:.3f} ms at "
              f"{report.core_clock_hz / 1e6:.0f} MHz), NPU {report.cycles_npu:.0f}, {report.npu_op_count} NPU "
              f"operations, {report.cpu_op_count} CPU operators")
        for path in files:
            print(f"Wrote {path}")
    return 0
