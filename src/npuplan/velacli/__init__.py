"""``npuplan MODEL.tflite [any Vela 5.2 option]``: npuplan as a drop-in for the ``vela`` command.

A command line whose first word is not one of npuplan's subcommands is a Vela command line
(``is_vela_command``); ``run_vela`` parses it with Vela's options (``velacli.options``) and runs
what Vela would: the supported-operators report, the config listings, or a compile
(``velacli.compile``). Exit statuses are the README's table, which is Vela's classes: 0 done,
1 the input cannot be compiled, 2 a command-line error (or an option npuplan refuses).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from npuplan.version import __version__
from npuplan.velacli.options import VelaUsageError, parse_vela_args

__all__ = ["VelaUsageError", "is_vela_command", "parse_vela_args", "run_vela"]


def is_vela_command(argv: Sequence[str], subcommands: Collection[str]) -> bool:
    """True when ``argv`` is a Vela command line: not empty, not a subcommand, not npuplan's own
    ``--help``/``--version``."""
    return bool(argv) and argv[0] not in subcommands and argv[0] not in ("-h", "--help", "--version")


def run_vela(args: argparse.Namespace, on_step: Callable[[str], None]) -> int:
    """Run a parsed Vela command line; raises ``NpuplanError`` for input it cannot compile."""
    if args.version:
        print(f"npuplan {__version__}")
        return 0
    if args.supported_ops_report:
        from npuplan.io.atomic import write_atomically
        from npuplan.velacli.supported_ops import FILE_NAME, supported_ops_markdown

        path = Path.cwd() / FILE_NAME
        write_atomically({path: supported_ops_markdown()})
        print(f"Report file: {path}")
        return 0
    if args.list_config_files:
        from npuplan.velacli.configs import config_files_lines

        print("\n".join(config_files_lines()))
        return 0
    if args.list_configs:
        from npuplan.velacli.configs import configs_lines

        print("\n".join(configs_lines(args.list_configs)))
        return 0
    from npuplan.velacli.compile import compile_network

    return compile_network(args, on_step)
