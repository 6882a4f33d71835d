"""The Python API: ``npuplan.plan(path, **options) -> Plan``. The CLI is a thin layer over it."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Callable

from npuplan.errors import ConfigError
from npuplan.hw import build_architecture
from npuplan.hw.memory import Architecture
from npuplan.io.tflite import read_tflite
from npuplan.ir.lowered import LoweredGraph
from npuplan.lowering import lower
from npuplan.options import Optimise, PlanOptions, Search, TensorAllocator
from npuplan.schedule import plan_schedule
from npuplan.schedule.types import Schedule

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Plan:
    """A planned network: the target, the lowered graph, the schedule and the compile time."""

    network: str
    model_path: str
    options: PlanOptions
    arch: Architecture
    lowered: LoweredGraph
    schedule: Schedule
    compile_seconds: float


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
    raise ConfigError(f"invalid value '{value}' for --{option} (valid: {valid})")


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
    if values.get("cpu_tensor_alignment_bytes", 16) % 16 != 0 or values.get("cpu_tensor_alignment_bytes", 16) == 0:
        raise ConfigError("--cpu-tensor-alignment must be a positive multiple of 16")
    return values


def _non_negative_int(value: Any, option: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"invalid value '{value}' for --{option}: expected a whole number of bytes") from None
    if number < 0:
        raise ConfigError(f"invalid value '{value}' for --{option}: must not be negative")
    return number


STEPS = ("options", "read", "lower", "schedule")


def plan(path: str | Path, *, on_step: Callable[[str], None] | None = None, **options: Any) -> Plan:
    """Plan the TFLite network at ``path`` with Vela-style options.

    Keyword names follow Vela's command line with underscores: ``accelerator_config``,
    ``config`` (one or more .ini paths), ``system_config``, ``memory_mode``, ``optimise``
    (``"Performance"``/``"Size"``), ``arena_cache_size`` (bytes), ``tensor_allocator``,
    ``cpu_tensor_alignment``, ``search``. ``on_step`` is called with each name in ``STEPS`` as
    that step starts (for progress displays). Raises ``NpuplanError`` subclasses on bad input.
    """
    step = on_step or (lambda _name: None)
    started = time.perf_counter()
    step("options")
    plan_options = make_options(**options)
    arch = build_architecture(plan_options)
    step("read")
    model = read_tflite(path)
    step("lower")
    lowered = lower(model, arch.accelerator)
    step("schedule")
    schedule = plan_schedule(lowered, arch, plan_options)
    elapsed = time.perf_counter() - started
    log.info("planned %s in %.3f s", model.name, elapsed)
    return Plan(
        network=Path(path).stem,
        model_path=str(path),
        options=plan_options,
        arch=arch,
        lowered=lowered,
        schedule=schedule,
        compile_seconds=elapsed,
    )
