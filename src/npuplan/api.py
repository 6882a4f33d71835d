"""The Python API: ``npuplan.plan(path, **options) -> Plan``. The CLI is a thin layer over it."""

from __future__ import annotations

import logging
import time
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from npuplan.collector import collector_paused
from npuplan.commands.addresses import AddressPlan
from npuplan.commands.stream import readdressed
from npuplan.commands.types import Command
from npuplan.cost.weights import WeightEncodings
from npuplan.errors import ConfigError, EmitError, UsageError
from npuplan.fitting import fitted_draft
from npuplan.hw import build_architecture
from npuplan.hw.memory import Architecture
from npuplan.ir.lowered import LoweredGraph
from npuplan.options import Optimise, PlanOptions, Search, TensorAllocator
from npuplan.plan_forms import best_plan, order_note
from npuplan.prepared import PreparedModel
from npuplan.result import Plan
from npuplan.schedule.model.types import Schedule
from npuplan.schedule.pricing.oracle import CostOracle

if TYPE_CHECKING:
    from npuplan.emit.backend import EmitBackend
    from npuplan.emit.emitter import Emitted

log = logging.getLogger(__name__)


_ALIASES = {
    "config": "config_files",
    "arena_cache_size": "arena_cache_size_bytes",
    "cpu_tensor_alignment": "cpu_tensor_alignment_bytes",
}


def make_options(**options: Any) -> PlanOptions:
    """Build ``PlanOptions`` from Vela-style keyword names, validating every value."""
    known = {f.name for f in fields(PlanOptions)}
    values: dict[str, Any] = {}
    for key, value in options.items():
        if value is None:
            continue
        name = _ALIASES.get(key, key)
        if name not in known:
            raise ConfigError(f"unknown option '{key}'")
        values[name] = value
    values = _coerce(values)
    return PlanOptions(**values)


def _enum_value(enum: Any, value: Any, option: str) -> Any:
    for member in enum:
        if str(value).lower() == member.value.lower():
            return member
    valid = ", ".join(m.value for m in enum)
    raise UsageError(f"invalid value '{value}' for --{option} (valid: {valid})")


def _coerce(values: dict[str, Any]) -> dict[str, Any]:
    if "optimise" in values:
        values["optimise"] = _enum_value(Optimise, values["optimise"], "optimise")
    if "tensor_allocator" in values:
        values["tensor_allocator"] = _enum_value(TensorAllocator, values["tensor_allocator"], "tensor-allocator")
    if "search" in values:
        values["search"] = _enum_value(Search, values["search"], "search")
    if "config_files" in values:
        files = values["config_files"]
        values["config_files"] = (files,) if isinstance(files, (str, Path)) else tuple(str(f) for f in files)
    for key, option in (("arena_cache_size_bytes", "arena-cache-size"), ("cpu_tensor_alignment_bytes", "cpu-tensor-alignment")):
        if key in values:
            values[key] = _non_negative_int(values[key], option)
    alignment = values.get("cpu_tensor_alignment_bytes", 16)
    if alignment < 16 or alignment & (alignment - 1):
        raise UsageError(f"invalid value '{alignment}' for --cpu-tensor-alignment: must be a power of 2 "
                          "of at least 16 bytes, as in Vela")
    return values


def _non_negative_int(value: Any, option: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise UsageError(f"invalid value '{value}' for --{option}: expected a whole number of bytes") from None
    if number < 0:
        raise UsageError(f"invalid value '{value}' for --{option}: must not be negative")
    return number


@collector_paused
def plan(path: str | Path, *, on_step: Callable[[str], None] | None = None, **options: Any) -> Plan:
    """Plan the TFLite network at ``path`` with Vela-style options.

    Keyword names follow Vela's command line with underscores: ``accelerator_config``,
    ``config`` (one or more .ini paths), ``system_config``, ``memory_mode``, ``optimise``
    (``"Performance"``/``"Size"``), ``arena_cache_size`` (bytes), ``tensor_allocator``,
    ``cpu_tensor_alignment``, ``search``. ``on_step`` is called with each name in ``result.STEPS`` as
    that step starts (for progress displays). Raises ``NpuplanError`` subclasses on bad input.
    """
    step = on_step or (lambda _name: None)
    started = time.perf_counter()
    step("options")
    plan_options = make_options(**options)
    arch = build_architecture(plan_options)
    step("read")
    model = PreparedModel.read(path)
    return plan_prepared(model, plan_options, arch=arch, on_step=step, started=started)


@collector_paused
def plan_prepared(
    model: PreparedModel, options: PlanOptions, *, arch: Architecture | None = None,
    on_step: Callable[[str], None] | None = None, started: float | None = None,
) -> Plan:
    """Plan ``model`` with ``options`` (already validated), reusing its lowerings and encodings.

    ``arch`` is ``build_architecture(options)`` when given; ``started`` the ``perf_counter`` time the
    compile started (for ``compile_seconds``), else now. Gives the same plan as ``plan()``.
    """
    step = on_step or (lambda _name: None)
    started = time.perf_counter() if started is None else started
    arch = build_architecture(options) if arch is None else arch
    (lowered, schedule, allocation, drafted), base = best_plan(model, arch, options, step)
    commands = readdressed(drafted, allocation.addresses)  # only the kept plan's stream is addressed
    if base is not None:
        schedule = replace(schedule, notes=(*schedule.notes, order_note(base, lowered)))
    if model.warnings:
        schedule = replace(schedule, notes=(*(f"warning: {w}" for w in model.warnings), *schedule.notes))
    elapsed = time.perf_counter() - started
    log.info("planned %s in %.3f s", model.model.name, elapsed)
    return Plan(
        network=model.network,
        model_path=model.path,
        options=options,
        arch=arch,
        lowered=lowered,
        schedule=schedule,
        compile_seconds=elapsed,
        allocation=allocation,
        commands=commands,
        weight_encodings=model.encodings(arch.accelerator),
    )


def fit_allocation(
    schedule: Schedule, lowered: LoweredGraph, arch: Architecture, options: PlanOptions,
) -> tuple[Schedule, AddressPlan]:
    """The schedule and allocation of ``fit_addressed_stream`` (without the command stream)."""
    fitted, allocation, _ = fitted_draft(schedule, lowered, arch, options)
    return fitted, allocation


def fit_addressed_stream(
    schedule: Schedule, lowered: LoweredGraph, arch: Architecture, options: PlanOptions, *,
    encodings: WeightEncodings | None = None, oracle: CostOracle | None = None,
) -> tuple[Schedule, AddressPlan, tuple[Command, ...]]:
    """Allocate the plan's buffers with the chosen allocator and build the command stream that uses
    them; keep the allocated SRAM peak within the budget.

    The scheduler already checks its own allocated peak against the budget; the command stream
    allocates at a finer grain and aligns CPU tensors, so if its SRAM peak still overshoots, the
    schedule is re-planned under a budget tightened by the overshoot. Raises ``InfeasiblePlan`` when
    no tightening fits. ``encodings`` is the plan's weight-encoding memo, shared with re-planning.
    """
    fitted, allocation, drafted = fitted_draft(schedule, lowered, arch, options, encodings=encodings, oracle=oracle)
    return fitted, allocation, readdressed(drafted, allocation.addresses)


MAX_CPU_FALLBACKS = 16


def plan_and_emit(path: str | Path, *, first: Plan | None = None, backend: EmitBackend | None = None,
                  **options: Any) -> tuple[Plan, Emitted]:
    """Plan ``path`` deployably and emit it; an operator the emitter refuses for a reason the CPU
    avoids (no valid block config) is kept on the CPU and the network planned again, at most
    ``MAX_CPU_FALLBACKS`` times. Raises the ``EmitError`` it cannot avoid. ``first``: the plan of
    ``path`` with ``deployable=True`` and ``options``, when the caller has made it already;
    ``backend``: see ``emit_tflite`` (None: npuplan's own). The emitter is imported here, so that
    planning alone never loads it."""
    from npuplan.emit.backend import EmitBackend
    from npuplan.emit.emitter import EmitMemo, emit_tflite

    backend = backend or EmitBackend.NPUPLAN

    cpu_ops: tuple[int, ...] = ()
    refused: list[str] = []
    memo = EmitMemo()
    while True:
        try:
            planned = (first if first is not None and not cpu_ops
                       else plan(path, deployable=True, deploy_cpu_ops=cpu_ops, **options))
        except EmitError as error:  # the refused op cannot go back to the CPU: say why it was refused
            raise EmitError(error.op, f"{error.reason}; refused by the emitter: {refused[-1]}") if refused else error
        try:
            emitted = emit_tflite(planned, memo=memo, backend=backend)
        except EmitError as error:
            if error.cpu_fallback is None or error.cpu_fallback in cpu_ops or len(cpu_ops) >= MAX_CPU_FALLBACKS:
                raise
            cpu_ops += (error.cpu_fallback,)
            refused.append(f"'{error.op}' kept on the CPU ({error.reason})")
            continue
        return planned, replace(emitted, notes=(*emitted.notes, *refused))
