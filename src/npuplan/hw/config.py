"""System configs, memory modes and the ``Architecture`` they build, from Vela-format ini sections.

Defaults and validity rules are Vela 5.2.0's (legacy core):

* a system config key that is absent takes Vela's initial value: ``core_clock=1``, both AXI ports
  ``Sram``, clock scale 1, one port used, burst length 1, latencies 0; only the memories on
  ``axi0_port``/``axi1_port`` read their ``<Mem>_*`` keys; unknown keys are ignored;
* a memory mode key that is absent is ``Axi0``; ``arena_cache_size`` defaults to the
  accelerator's address space (2**32 bytes on Ethos-U55, 2**40 on Ethos-U65);
* ``internal-default`` is Ethos_U55_High_End_Embedded + Shared_Sram on Ethos-U55 and
  Ethos_U65_Client_Server + Dedicated_Sram_384KB on Ethos-U65, and (as in Vela) cannot be
  combined with user config files;
* when constants, arena and cache all sit on one SRAM port (Sram_Only) the constants move to the
  other port, which becomes ``OnChipFlash`` with the SRAM's timing;
* constants must live in Dram/OnChipFlash/OffChipFlash, the arena in Sram/Dram, the cache in Sram
  (so Dedicated_Sram needs a Dram port, which only Ethos-U65 system configs provide), and the
  arena cache size must lie in ``[0, address space]``.

Beyond Vela, values it would accept but then divide by or misuse are rejected: core clock and
clock scales must be positive, burst lengths and ports used >= 1, latencies >= 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from npuplan.errors import ConfigError
from npuplan.hw.accelerator import Accelerator
from npuplan.hw.ini import IniDatabase
from npuplan.hw.memory import MemArea, MemoryMode, MemoryTiming, SystemConfig

DEFAULT_CONFIG = "internal-default"
SYSTEM_PREFIX = "System_Config."
MODE_PREFIX = "Memory_Mode."
PORTS = ("Axi0", "Axi1")

_DEFAULT_SYSTEM = {False: "Ethos_U55_High_End_Embedded", True: "Ethos_U65_Client_Server"}
_DEFAULT_MODE = {False: "Shared_Sram", True: "Dedicated_Sram_384KB"}

# Vela's initial value of every timing before a system config is read.
VELA_DEFAULT_TIMING = MemoryTiming(clock_scale=1.0, burst_length_bytes=1, read_latency_cycles=0, write_latency_cycles=0)

_CONST_AREAS = (MemArea.DRAM, MemArea.ON_CHIP_FLASH, MemArea.OFF_CHIP_FLASH)
_ARENA_AREAS = (MemArea.SRAM, MemArea.DRAM)

T = TypeVar("T")


def default_system_name(accel: Accelerator) -> str:
    """The system config ``internal-default`` stands for on ``accel``."""
    return _DEFAULT_SYSTEM[accel.is_u65]


def default_mode_name(accel: Accelerator) -> str:
    """The memory mode ``internal-default`` stands for on ``accel``."""
    return _DEFAULT_MODE[accel.is_u65]


class _Reader:
    """Typed access to one resolved section, with one-line errors naming file, section and key."""

    def __init__(self, db: IniDatabase, section: str) -> None:
        self.db = db
        self.section = section
        self.values = db.resolve(section)

    def fail(self, key: str, value: str, expected: str) -> ConfigError:
        source = self.db.source_of(self.section, key)
        return ConfigError(f"{source}: [{self.section}] {key}={value}: expected {expected}")

    def get(self, key: str, parse: Callable[[str], T], default: T, expected: str) -> T:
        raw = self.values.get(key.lower())
        if raw is None:
            return default
        try:
            return parse(raw.strip())
        except ValueError:
            raise self.fail(key, raw, expected) from None


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise ValueError(text)
    return value


def _int_at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise ValueError(text)
        return value

    return parse


def _mem_area(text: str) -> MemArea:
    for area in MemArea:
        if area.value.lower() == text.lower():
            return area
    raise ValueError(text)


def _port(text: str) -> str:
    for port in PORTS:
        if port.lower() == text.lower():
            return port
    raise ValueError(text)


_AREA_NAMES = "one of " + ", ".join(a.value for a in MemArea)


def _read_timing(reader: _Reader, area: MemArea) -> MemoryTiming:
    d = VELA_DEFAULT_TIMING
    p = area.value
    return MemoryTiming(
        clock_scale=reader.get(f"{p}_clock_scale", _positive_float, d.clock_scale, "a number > 0"),
        burst_length_bytes=reader.get(f"{p}_burst_length", _int_at_least(1), d.burst_length_bytes, "an integer >= 1"),
        read_latency_cycles=reader.get(f"{p}_read_latency", _int_at_least(0), d.read_latency_cycles, "an integer >= 0"),
        write_latency_cycles=reader.get(
            f"{p}_write_latency", _int_at_least(0), d.write_latency_cycles, "an integer >= 0"
        ),
        ports_used=reader.get(f"{p}_ports_used", _int_at_least(1), d.ports_used, "an integer >= 1"),
    )


def read_system_config(db: IniDatabase, name: str) -> SystemConfig:
    """The ``[System_Config.name]`` section as a ``SystemConfig`` (timings for all four memories)."""
    section = SYSTEM_PREFIX + name
    if not db.has(section):
        raise ConfigError(f"system config '{name}': section [{section}] not found in the config file(s)")
    reader = _Reader(db, section)
    clock_hz = reader.get("core_clock", _positive_float, 1.0, "a clock in Hz > 0")
    axi0 = reader.get("axi0_port", _mem_area, MemArea.SRAM, _AREA_NAMES)
    axi1 = reader.get("axi1_port", _mem_area, MemArea.SRAM, _AREA_NAMES)
    timings = {area: VELA_DEFAULT_TIMING for area in MemArea}
    for area in (axi0, axi1):
        timings[area] = _read_timing(reader, area)
    return SystemConfig(name=name, core_clock_hz=clock_hz, axi0_port=axi0, axi1_port=axi1, timings=timings)


def read_memory_mode(db: IniDatabase, name: str) -> MemoryMode:
    """The ``[Memory_Mode.name]`` section as a ``MemoryMode`` (``arena_cache_size`` may be None)."""
    section = MODE_PREFIX + name
    if not db.has(section):
        raise ConfigError(f"memory mode '{name}': section [{section}] not found in the config file(s)")
    reader = _Reader(db, section)
    ports = "Axi0 or Axi1"
    return MemoryMode(
        name=name,
        const_port=reader.get("const_mem_area", _port, "Axi0", ports),
        arena_port=reader.get("arena_mem_area", _port, "Axi0", ports),
        cache_port=reader.get("cache_mem_area", _port, "Axi0", ports),
        arena_cache_size_bytes=reader.get("arena_cache_size", int, None, "an integer number of bytes"),
    )


def move_constants_off_sram(system: SystemConfig, mode: MemoryMode) -> tuple[SystemConfig, MemoryMode]:
    """Vela's Sram_Only rule: constants sharing the one SRAM port move to the other port as OnChipFlash.

    The on-chip flash takes the SRAM's timing. Any other combination is returned unchanged.
    """
    ports = {"Axi0": system.axi0_port, "Axi1": system.axi1_port}
    single_port = mode.const_port == mode.arena_port == mode.cache_port
    if not (single_port and ports[mode.const_port] == MemArea.SRAM):
        return system, mode
    other = "Axi1" if mode.const_port == "Axi0" else "Axi0"
    timings = dict(system.timings)
    timings[MemArea.ON_CHIP_FLASH] = timings[MemArea.SRAM]
    axi0 = MemArea.ON_CHIP_FLASH if other == "Axi0" else system.axi0_port
    axi1 = MemArea.ON_CHIP_FLASH if other == "Axi1" else system.axi1_port
    new_system = SystemConfig(system.name, system.core_clock_hz, axi0, axi1, timings)
    new_mode = MemoryMode(mode.name, other, mode.arena_port, mode.cache_port, mode.arena_cache_size_bytes)
    return new_system, new_mode


def check_placement(system: SystemConfig, mode: MemoryMode) -> None:
    """Vela's rules on what may live where; ``ConfigError`` naming the memory mode otherwise."""
    ports: Mapping[str, MemArea] = {"Axi0": system.axi0_port, "Axi1": system.axi1_port}
    rules = (
        ("const_mem_area", mode.const_port, _CONST_AREAS),
        ("arena_mem_area", mode.arena_port, _ARENA_AREAS),
        ("cache_mem_area", mode.cache_port, (MemArea.SRAM,)),
    )
    for key, port, allowed in rules:
        area = ports[port]
        if area not in allowed:
            names = " or ".join(a.value for a in allowed)
            raise ConfigError(
                f"memory mode '{mode.name}' with system config '{system.name}': {key}={port} is "
                f"{area.value}, must be {names}"
            )
