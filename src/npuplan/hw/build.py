"""``build_architecture``: options in, the complete target description out."""

from __future__ import annotations

from npuplan.errors import ConfigError
from npuplan.hw.accelerator import Accelerator, accelerator
from npuplan.hw.config import (
    DEFAULT_CONFIG,
    check_placement,
    default_mode_name,
    default_system_name,
    move_constants_off_sram,
    read_memory_mode,
    read_system_config,
)
from npuplan.hw.ini import load_database
from npuplan.hw.memory import Architecture, MemoryMode
from npuplan.options import PlanOptions


def _names(options: PlanOptions, accel: Accelerator) -> tuple[str, str]:
    """The system config and memory mode names, with ``internal-default`` resolved."""
    if options.config_files:
        for option, value in (("system config", options.system_config), ("memory mode", options.memory_mode)):
            if value == DEFAULT_CONFIG:
                raise ConfigError(
                    f"a config file was given but the {option} is '{DEFAULT_CONFIG}'; name one explicitly "
                    "(Vela does not allow config files with a default configuration)"
                )
    system = default_system_name(accel) if options.system_config == DEFAULT_CONFIG else options.system_config
    mode = default_mode_name(accel) if options.memory_mode == DEFAULT_CONFIG else options.memory_mode
    return system, mode


def arena_cache_size(mode: MemoryMode, override_bytes: int | None, accel: Accelerator) -> int:
    """The SRAM budget in bytes: the option if given, else the memory mode's, else the address space."""
    if override_bytes is not None:
        size, origin = override_bytes, "--arena-cache-size"
    elif mode.arena_cache_size_bytes is not None:
        size, origin = mode.arena_cache_size_bytes, f"[Memory_Mode.{mode.name}] arena_cache_size"
    else:
        return accel.max_address_bytes
    if size < 0:
        raise ConfigError(f"{origin}={size}: must be >= 0")
    if size > accel.max_address_bytes:
        raise ConfigError(f"{origin}={size}: out of bounds, maximum is {accel.max_address_bytes} on {accel.name}")
    return size


def build_architecture(options: PlanOptions) -> Architecture:
    """Accelerator preset, system config, memory mode and arena cache size for ``options``.

    Reads the bundled ``vela.ini`` then ``options.config_files`` (a user section replaces a bundled
    one of the same name). Raises ``ConfigError`` with a one-line message on any invalid input.
    """
    accel = accelerator(options.accelerator_config)
    system_name, mode_name = _names(options, accel)
    db = load_database(options.config_files)
    system = read_system_config(db, system_name)
    mode = read_memory_mode(db, mode_name)
    system, mode = move_constants_off_sram(system, mode)
    check_placement(system, mode)
    size = arena_cache_size(mode, options.arena_cache_size_bytes, accel)
    return Architecture(accelerator=accel, system=system, mode=mode, arena_cache_size_bytes=size)
