"""Compile as ``vela`` does: plan deployably, emit with npuplan's own backend, write Vela's output
files under Vela's names in ``--output-dir`` (all or none), print Vela's console output, then
npuplan's own lines.

Files: ``<network>_vela.tflite`` (or ``<network>_vela.npz`` with ``--output-format raw``),
``<network>_summary_<system config>.csv`` and, with ``--verbose-performance``,
``<network>_per-layer.csv``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from npuplan.errors import InfeasiblePlan
from npuplan.hw.accelerator import accelerator
from npuplan.hw.config import default_mode_name, default_system_name
from npuplan.hw.ini import BUNDLED_ALIASES
from npuplan.options import DEFAULT_CONFIG
from npuplan.velacli.options import ignored_op_types, no_equivalent_notes


def default_warnings(args: argparse.Namespace) -> tuple[str, str, list[str]]:
    """The system config and memory mode to plan with, and Vela's warnings for the defaults it took
    (printed on stdout, as Vela prints them). With ``--config``, ``internal-default`` stays as it is
    (refused by the planner, as by Vela)."""
    if args.config:
        return args.system_config, args.memory_mode, []
    accel = accelerator(args.accelerator_config)
    system, mode, warnings = args.system_config, args.memory_mode, []
    warnings.append(f"Warning: No configuration file specified. Using a default of ['{BUNDLED_ALIASES[0]}' "
                    "(npuplan's bundled copy)]. Compilation may be invalid or non-optimal.")
    if system == DEFAULT_CONFIG:
        system = default_system_name(accel)
        warnings.append(f"Warning: No system configuration specified. Using a default of {system}. "
                        "Compilation may be invalid or non-optimal.")
    if mode == DEFAULT_CONFIG:
        mode = default_mode_name(accel)
        warnings.append(f"Warning: No memory mode specified. Using a default of {mode}. "
                        "Compilation may be invalid or non-optimal.")
    return system, mode, warnings


def _cpu_op_indices(network: str, types: frozenset[str]) -> tuple[int, ...]:
    """The TFLite operator indices of ``network`` whose type ``--ignore-ops`` names."""
    from npuplan.io.tflite import read_tflite

    return tuple(op.index for op in read_tflite(network).main.ops if op.type in types)


def compile_network(args: argparse.Namespace, on_step: Callable[[str], None]) -> int:
    """Compile ``args.network`` as Vela would with ``args``; print and write as Vela does."""
    from npuplan.api import plan
    from npuplan.api import plan_and_emit
    from npuplan.emit.backend import EmitBackend
    from npuplan.report import build_report
    from npuplan.report.files import file_name_part, summary_csv, write_files
    from npuplan.report.vela_console import (npuplan_lines, per_layer_csv_text, per_layer_table,
                                             summary_lines)

    system, mode, warnings = default_warnings(args)
    for line in warnings:
        print(line)
    for note in no_equivalent_notes(args):
        print(f"npuplan: note: {note}", file=sys.stderr)
    options: dict[str, Any] = dict(
        on_step=on_step, accelerator_config=args.accelerator_config, system_config=system, memory_mode=mode,
        optimise=args.optimise, arena_cache_size=args.arena_cache_size, tensor_allocator=args.tensor_allocator,
        cpu_tensor_alignment=args.cpu_tensor_alignment, config=tuple(args.config or ()))
    ignored = ignored_op_types(args)

    def compiled() -> tuple[Any, Any]:
        cpu_ops = _cpu_op_indices(args.network, ignored) if ignored else ()
        first = plan(args.network, deployable=True, deploy_cpu_ops=cpu_ops, **options)
        if not first.lowered.npu_ops:  # nothing for the NPU: Vela writes the network as it is
            return first, None
        return plan_and_emit(args.network, first=first, backend=EmitBackend.NPUPLAN, **options)

    try:
        result, emitted = compiled()
    except InfeasiblePlan as error:  # Vela takes --arena-cache-size as a target and compiles anyway
        if args.arena_cache_size is None:
            raise
        print(f"Warning: --arena-cache-size {args.arena_cache_size} is below what any plan needs "
              f"({error.needed_bytes} bytes at '{error.op}'): compiling with the memory mode's arena cache size")
        options["arena_cache_size"] = None
        result, emitted = compiled()
    on_step("writing the output files")
    report = build_report(result)
    directory = Path(args.output_dir)
    base = directory / file_name_part(report.network)
    files: dict[Path, str | bytes] = {}
    data = emitted.data if emitted is not None else Path(args.network).read_bytes()
    if args.output_format == "raw":
        from npuplan.velacli.raw import raw_npz

        files[Path(f"{base}_vela.npz")] = raw_npz(data, emitted.fast_scratch_bytes if emitted is not None else 0)
    else:
        files[Path(f"{base}_vela.tflite")] = data
    files[Path(f"{base}_summary_{file_name_part(report.system_config)}.csv")] = summary_csv(report)
    if args.verbose_performance:
        files[Path(f"{base}_per-layer.csv")] = per_layer_csv_text(report)
    write_files(files, directory)
    on_step("printing the summary")
    lines = per_layer_table(report, str(base)) if args.verbose_performance else []
    listed = _operation_lists(result) if args.show_cpu_operations else (None, None)
    lines += summary_lines(report, verbose_weights=args.verbose_weights,
                           verbose_cycle_estimate=args.verbose_cycle_estimate, cpu_ops=listed[0], npu_ops=listed[1],
                           flash_is_sram=_flash_is_sram(options["config"], system, mode))
    lines += npuplan_lines(report)
    lines += [f"npuplan: note: {note}" for note in (emitted.notes if emitted is not None else ())]
    print("\n".join(lines))
    return 0


def _flash_is_sram(config: tuple[str, ...], system: str, mode: str) -> bool:
    """Whether the memory mode puts constants on the SRAM's one port, which Vela (and npuplan) then
    address as on-chip flash on the other port with the SRAM's timing."""
    from npuplan.hw.config import move_constants_off_sram, read_memory_mode, read_system_config
    from npuplan.hw.ini import load_database

    database = load_database(config)
    named = read_system_config(database, system), read_memory_mode(database, mode)
    return move_constants_off_sram(*named) != named


def _operation_lists(result: Any) -> tuple[list[str], list[str]]:
    """``--show-cpu-operations``: each CPU op with its reason, each NPU op (as Vela: ``TYPE = name``)."""
    cpu, npu = [], []
    for op in result.lowered.ops:
        if hasattr(op, "reason"):
            cpu.append(f"{op.tflite_type} = {op.name} ({op.reason})")
        else:
            npu.append(f"{op.tflite_type} = {op.name}")
    return cpu, npu
