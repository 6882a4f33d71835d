"""The ``npuplan`` command: a thin layer over ``npuplan.api`` and ``npuplan.report``."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable, NoReturn

from npuplan import __version__
from npuplan.errors import InternalError, NpuplanError, UsageError, marked_op
from npuplan.cli_options import add_fixed_options, fixed_options, size_bytes
from npuplan.hw.accelerator import ACCELERATORS
from npuplan.cli_run import COMMANDS as RUN_COMMANDS, add_run_parsers, run_command
from npuplan.options import DEFAULT_CONFIG, Optimise


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line and exit with status 2, and whose help shows
    every option's default."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.ArgumentDefaultsHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


BROKEN_PIPE_STATUS = 141  # 128 + SIGPIPE
VELA_FORM = "npuplan MODEL.tflite [any Vela 5.2 option]"


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The program's parser. With ``command`` (a subcommand's name), only the subparsers that
    command needs are built: each costs a few milliseconds of argparse work, and a plan should not
    pay for the sweep's, the estimate's, ...; the full parser (usage, help, a wrong subcommand's
    error) is built when there is no command."""

    def wanted(*names: str) -> bool:
        return command is None or command in names

    parser = _Parser(
        prog="npuplan", description="Plan, estimate and compile TFLite networks for Arm Ethos-U55/U65 NPUs.",
        usage=f"%(prog)s [-h] [--version] {{plan,sweep,fit,validate,report,vela,...}} ...\n       {VELA_FORM}",
        epilog=f"{VELA_FORM} (or npuplan vela ...) compiles as the vela command does: the same options, defaults, "
               "output files and console summary; npuplan vela --help lists Vela's options.")
    parser.add_argument("--version", action="version", version=f"npuplan {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND",
                                     prog="npuplan")

    plan = _add_plan_parser(commands) if wanted("plan", *RUN_COMMANDS) else None  # check shares its options
    if wanted("sweep", "fit"):
        from npuplan.sweep.command import add_fit_parser, add_sweep_parser

        if wanted("sweep"):
            add_sweep_parser(commands)
        if wanted("fit"):
            add_fit_parser(commands)
    if wanted("estimate"):
        from npuplan.cli_estimate import add_estimate_parser

        add_estimate_parser(commands)
    if plan is not None and wanted(*RUN_COMMANDS):
        add_run_parsers(commands, plan=plan)
    if wanted("validate"):
        _add_validate_parser(commands)
    if wanted("report"):
        _add_report_parser(commands)
    if command is None:  # "vela" is parsed by velacli; here it is a line of the help
        commands.add_parser("vela", add_help=False, help=f"compile as vela does: the same as {VELA_FORM}")
    return parser


def _add_plan_parser(commands: Any) -> argparse.ArgumentParser:
    p = commands.add_parser("plan", help="plan a network and write its reports")
    p.add_argument("network", metavar="MODEL.tflite", help="quantized TFLite model")
    p.add_argument("--config", action="append", default=[], metavar="FILE.ini", help="Vela-format .ini config file(s)")
    p.add_argument("--accelerator-config", default="ethos-u55-128", choices=tuple(ACCELERATORS),
                   help="accelerator preset")
    p.add_argument("--system-config", default=DEFAULT_CONFIG, help="system config name")
    p.add_argument("--memory-mode", default=DEFAULT_CONFIG, help="memory mode name")
    p.add_argument("--optimise", default=Optimise.PERFORMANCE.value, choices=[o.value for o in Optimise],
                   help="what to optimise for")
    p.add_argument("--arena-cache-size", type=size_bytes, default=None, metavar="BYTES",
                   help="SRAM budget in bytes (k and M suffixes: 256k); default: the memory mode's")
    add_fixed_options(p)
    p.add_argument("--output-dir", default="output", help="where reports are written")
    p.add_argument("--verbose-performance", action="store_true", help="print the per-layer performance table")
    p.add_argument("--show-cpu-operations", action="store_true", help="list each op with its placement and reason")
    p.add_argument("--validate", action="store_true", help="replay the command stream and check the plan")
    p.add_argument("--html", action="store_true",
                   help='also write <network>_report.html, a self-contained page of charts (needs "npuplan[report]")')
    p.add_argument("--emit-tflite", action="store_true",
                   help="also write <network>_npuplan.tflite: the plan as a deployable file (ethos-u operators, as "
                        "Vela's output); ops it cannot express stay on the CPU")
    p.add_argument("--emit-backend", choices=("npuplan", "vela"), default="npuplan",
                   help="what encodes the weights and writes the register command streams of --emit-tflite: "
                        "npuplan's own code, or Vela's external API (the reference; needs the deploy extra)")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--debug", action="store_true", help="on an internal error, print the traceback")
    return p


def _add_validate_parser(commands: Any) -> None:
    v = commands.add_parser("validate", help="replay a written plan JSON's command stream, or a deployable "
                                             "TFLite file's register command streams, and check it")
    v.add_argument("plan_json", metavar="PLAN.json|MODEL.tflite",
                   help="a <network>_plan.json or <network>_npuplan.tflite written by npuplan plan (or Vela's output)")
    v.add_argument("--weights", action="store_true",
                   help="(a .tflite file) also decode every convolution's weight stream and check its size and the "
                        "scale stream's against what the registers make the hardware read")
    v.add_argument("--debug", action="store_true", help="on an internal error, print the traceback")


def _add_report_parser(commands: Any) -> None:
    r = commands.add_parser("report", help="write the HTML report of a plan JSON, or compare two plans")
    r.add_argument("plans", metavar="PLAN.json", nargs="+", help="one plan JSON, or two to compare (A then B)")
    r.add_argument("-o", "--output", required=True, metavar="FILE.html", help="the HTML file to write")
    r.add_argument("--debug", action="store_true", help="on an internal error, print the traceback")


def subcommands(parser: argparse.ArgumentParser) -> tuple[str, ...]:
    """The names of ``parser``'s subcommands (whoever registered them)."""
    return tuple(name for action in parser._actions if isinstance(action, argparse._SubParsersAction)
                 for name in action.choices)


class _Stage:
    """What the command is doing, for the one-line report of an internal error."""

    def __init__(self, name: str) -> None:
        self.name = name

    def step(self, name: str) -> None:
        self.name = _STAGE_NAMES.get(name, name)


_STAGE_NAMES = {
    "options": "reading the options", "read": "reading the model", "lower": "lowering the network",
    "schedule": "scheduling", "allocate": "allocating addresses",
}


def _run_plan(args: argparse.Namespace, stage: _Stage) -> int:
    from npuplan.api import plan
    from npuplan.report import build_report, render_console, write_reports
    from npuplan.report.progress import step_progress

    with step_progress(enabled=not args.quiet) as on_step:

        def on_each_step(name: str) -> None:
            stage.step(name)
            on_step(name)

        emitted: list[Any] = []
        planner = _emitting(emitted, args.emit_backend) if args.emit_tflite else plan
        result = _plan_with(planner, args, on_each_step)
    if args.validate:
        stage.step("validating the plan")
        _validate(result)
    stage.step("writing the reports")
    report = build_report(result)
    written = write_reports(result, args.output_dir, report, html=args.html)
    summary = _emit(result, emitted[0], args, stage) if emitted else None
    stage.step("printing the summary")
    if not args.quiet:
        render_console(
            result,
            verbose_performance=args.verbose_performance,
            show_cpu_operations=args.show_cpu_operations,
            written=written,
            report=report,
        )
        if summary is not None:
            print(summary)
        if args.validate:
            print(f"Validated: {len(result.commands or ())} commands replayed over the memory model, no violation")
    return 0


def _emitting(emitted: list[Any], backend: str) -> Callable[..., Any]:
    """A planner that plans deployably and emits (``emit.plan_and_emit``) with ``backend``, keeping
    the emitted file."""
    from npuplan.api import plan_and_emit
    from npuplan.emit.backend import EmitBackend

    def planner(path: str, **options: Any) -> Any:
        options.pop("deployable", None)
        result, file = plan_and_emit(path, backend=EmitBackend(backend), **options)
        emitted.append(file)
        return result

    return planner


def _emit(result: object, file: Any, args: argparse.Namespace, stage: _Stage) -> str:
    """Write the deployable file; the one-line summary to print."""
    from npuplan.emit import write_emitted

    stage.step("writing the deployable file")
    path, emitted = write_emitted(result, args.output_dir, file)  # type: ignore[arg-type]
    notes = "; ".join(emitted.notes)
    return (f"Deployable file {path}: {emitted.command_streams} ethos-u operator(s), {emitted.npu_operations} NPU "
            f"and {emitted.dma_operations} DMA operations, flash {emitted.flash_bytes} bytes, scratch "
            f"{emitted.scratch_bytes} bytes, fast scratch {emitted.fast_scratch_bytes} bytes, emitted in "
            f"{emitted.emit_seconds:.2f} s ({notes})")


def _plan_with(plan, args: argparse.Namespace, on_step):  # type: ignore[no-untyped-def]
    return plan(
        args.network,
        on_step=on_step,
        accelerator_config=args.accelerator_config,
        system_config=args.system_config,
        memory_mode=args.memory_mode,
        optimise=args.optimise,
        arena_cache_size=args.arena_cache_size,
        **fixed_options(args),
        deployable=args.emit_tflite,
    )


def _validate(result: object) -> None:
    from npuplan.commands import validate_plan

    validate_plan(result)


def _run_validate(args: argparse.Namespace, stage: _Stage) -> int:
    from npuplan.commands.plan_file import validate_plan_file

    if str(args.plan_json).lower().endswith(".tflite"):
        return _run_validate_tflite(args, stage)
    if args.weights:
        raise UsageError("--weights checks the weight streams of a deployable .tflite file, not a plan JSON")
    stage.step("validating the plan file")
    stream = validate_plan_file(args.plan_json)
    print(f"{args.plan_json}: valid ({len(stream.commands)} commands of {stream.network} replayed, "
          f"{len(stream.addresses)} buffers)")
    return 0


def _run_report(args: argparse.Namespace, stage: _Stage) -> int:
    from npuplan.report.html_files import write_html_report

    if len(args.plans) > 2:
        raise UsageError(f"report takes one plan JSON, or two to compare (got {len(args.plans)})")
    stage.step("writing the HTML report")
    written = write_html_report(args.plans, args.output)
    what = "comparison" if len(args.plans) == 2 else "report"
    print(f"Wrote {written} ({what}, {written.stat().st_size / 1e6:.1f} MB)")
    return 0


def _run_validate_tflite(args: argparse.Namespace, stage: _Stage) -> int:
    from npuplan.regstream import validate_tflite_file

    stage.step("validating the deployable file")
    _require_ethos_u(args.plan_json)
    report = validate_tflite_file(args.plan_json, weights=args.weights)
    print(f"{args.plan_json}: valid ({len(report.streams)} ethos-u operator(s): {report.npu_operations} NPU "
          f"operations, {report.dma_operations} DMAs and {report.waits} waits replayed over the memory model)")
    if report.weights is not None:
        w = report.weights
        print(f"{args.plan_json}: weights valid ({w.streams} weight streams decoded, {w.weights} weights, sized as "
              f"the registers of {w.operations} convolution operations read them)")
    return 0


def _require_ethos_u(path: str) -> None:
    """A ``.tflite`` with no ethos-u operator is the wrong input for ``validate`` (status 1), not a
    violation: it was never compiled."""
    from npuplan.errors import ModelError
    from npuplan.regstream.tflite_file import ethos_u_payloads

    try:
        payloads = ethos_u_payloads(Path(path).read_bytes())
    except NpuplanError:
        raise
    except Exception:  # noqa: BLE001 - a missing or corrupt file: the validator says what is wrong
        return
    if not payloads:
        raise ModelError(f"{path} has no ethos-u operator: it is not a compiled file (compile it first: "
                         f"npuplan {path})")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status of the README's table: 0 done, 1 the input cannot be
    compiled as asked (a bad model, plan or config file, no plan fits), 2 a command-line error, 3 a
    violation found by a validation, 4 an internal error (a bug), 130 interrupted. A closed stdout
    raises ``BrokenPipeError`` to the caller (``run`` ends the program quietly with 141)."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv and argv[0] in _COMMANDS else None
    parser = _parser(command)
    if not argv:
        print(parser.format_help(), end="", file=sys.stderr)
        return 2
    if command is None:
        from npuplan.velacli import is_vela_command

        if argv[0] == "vela" or is_vela_command(argv, subcommands(parser)):
            return _main_vela(argv[1:] if argv[0] == "vela" else argv)
    args = parser.parse_args(argv)
    return _guarded(args, _COMMANDS[args.command], _Stage("starting"))


def _main_vela(argv: list[str]) -> int:
    """A Vela command line: Vela's options, Vela's outputs and exit status classes."""
    from npuplan.velacli import VelaUsageError, parse_vela_args, run_vela

    try:
        args = parse_vela_args(argv)
    except VelaUsageError as error:
        print(f"npuplan: error: {one_line(str(error))}", file=sys.stderr)
        return 2
    return _guarded(args, lambda a, stage: run_vela(a, stage.step), _Stage("starting"))


def _guarded(args: argparse.Namespace, command: Callable[[argparse.Namespace, _Stage], int], stage: _Stage) -> int:
    """Run ``command``: a user-facing error is one line and its status, anything else an internal
    error (status 4; the traceback with ``--debug``)."""
    try:
        try:
            return command(args, stage)
        except (NpuplanError, KeyboardInterrupt, BrokenPipeError):
            raise
        except Exception as error:  # noqa: BLE001 - an unexpected error is a bug: one line, status 4
            if getattr(args, "debug", False):
                raise
            raise InternalError(stage=stage.name, op=marked_op(error), cause=error) from error
    except NpuplanError as error:
        print(f"npuplan: error: {one_line(str(error))}", file=sys.stderr)
        return error.exit_status
    except KeyboardInterrupt:
        print("npuplan: interrupted", file=sys.stderr)
        return 130


def _run_sweep(args: argparse.Namespace, stage: _Stage) -> int:
    from npuplan.sweep.command import run_sweep

    stage.step("sweeping")
    return run_sweep(args)


def _run_estimate(args: argparse.Namespace, stage: _Stage) -> int:
    from npuplan.cli_estimate import run_estimate

    stage.step("estimating the compiled file")
    return run_estimate(args)


def _run_fit(args: argparse.Namespace, stage: _Stage) -> int:
    from npuplan.sweep.command import run_fit

    stage.step("fitting the arena cache size")
    return run_fit(args)


# The subcommands' functions; another module's subcommand registers itself here and in ``_parser``.
_COMMANDS: dict[str, Callable[[argparse.Namespace, _Stage], int]] = {
    "plan": _run_plan, "validate": _run_validate, "report": _run_report, "sweep": _run_sweep, "fit": _run_fit,
    "estimate": _run_estimate, **{name: run_command for name in RUN_COMMANDS},
}


def one_line(message: str) -> str:
    """``message`` with control characters (a newline in a tensor name from a hostile model) shown
    as escapes, so an error is always one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


def _silence_stdout() -> None:
    """Point stdout at the null device, so the interpreter's final flush to a closed pipe does not
    print an error of its own."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (stdout replaced): nothing to flush
        pass


def run() -> int:
    """The ``npuplan`` program: ``main`` on the process's arguments, in a process of its own.

    Owning the process, it loads only the schema-binding modules the reader uses
    (``npuplan.lean_bindings``), and asks OpenBLAS for one thread unless the user chose a number:
    nothing here multiplies matrices large enough to share, and numpy's import starting a pool of
    spinning threads costs about 0.08 s of CPU per compile. ``main`` called from other Python code
    leaves both ``tflite`` and the environment alone. A reader that closes the pipe early
    (``| head``) ends the program quietly with status 141 (128 + SIGPIPE, as a shell reports a
    program a closed pipe ended), after the reports are written.

    The cyclic garbage collector is paused for the whole command, imports included: a start-up of
    ~140 modules and ~100 records makes no cycles worth collecting, and the collections it would
    trigger cost about 2% of a small network's plan (CPU seconds, 3-op chain). Its last step freezes
    the garbage collector's objects instead of collecting them: the interpreter's final collection at
    exit then skips them instead of walking every object the run made (about 4% of a small network's
    whole run, counted in instructions), and the youngest generation, which holds every object made
    while paused, is not walked either (a library call's ``collector_paused`` collects it: ~5% of a
    3-op plan). Freezing resets the count that would start a collection, so the collector is resumed
    as it was without running. Every file is written and closed by then, and the interpreter still
    flushes stdout and stderr and runs the exit handlers.
    """
    from npuplan.lean_bindings import use_lean_bindings

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    use_lean_bindings()
    enabled = gc.isenabled()
    gc.disable()
    try:
        return main()
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE_STATUS
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run())
