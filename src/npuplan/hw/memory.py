"""Memory areas, system configs and memory modes (the data behind Vela's .ini sections)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property

from npuplan._compat import StrEnum
from npuplan.hw.accelerator import Accelerator
from npuplan.records import record


class MemArea(StrEnum):
    """Physical memories, named as in Vela's reports."""

    SRAM = "Sram"
    DRAM = "Dram"
    ON_CHIP_FLASH = "OnChipFlash"
    OFF_CHIP_FLASH = "OffChipFlash"

    @property
    def label(self) -> str:
        """The human name used in summaries (``Off-chip Flash``)."""
        return _LABELS[self]

    @property
    def csv_prefix(self) -> str:
        """The prefix of summary CSV columns (``off_chip_flash``)."""
        return _PREFIXES[self]


_LABELS = {
    MemArea.SRAM: "SRAM",
    MemArea.DRAM: "DRAM",
    MemArea.ON_CHIP_FLASH: "On-chip Flash",
    MemArea.OFF_CHIP_FLASH: "Off-chip Flash",
}
_PREFIXES = {
    MemArea.SRAM: "sram",
    MemArea.DRAM: "dram",
    MemArea.ON_CHIP_FLASH: "on_chip_flash",
    MemArea.OFF_CHIP_FLASH: "off_chip_flash",
}


@record
class MemoryTiming:
    """Timing of one memory: clock relative to the core, burst length and AXI latencies."""

    clock_scale: float = 1.0
    burst_length_bytes: int = 32
    read_latency_cycles: int = 0
    write_latency_cycles: int = 0
    ports_used: int = 1


DEFAULT_TIMING = MemoryTiming()  # a memory the system config does not describe


@record(slots=False)
class SystemConfig:
    """A ``[System_Config.NAME]`` section: core clock, what sits on each AXI port, memory timings."""

    name: str
    core_clock_hz: float
    axi0_port: MemArea
    axi1_port: MemArea
    timings: Mapping[MemArea, MemoryTiming]


@record
class MemoryMode:
    """A ``[Memory_Mode.NAME]`` section: where constants, the arena and the cache live.

    ``const_port``, ``arena_port``, ``cache_port`` are ``"Axi0"`` or ``"Axi1"``;
    ``arena_cache_size_bytes`` is the SRAM budget (``None`` means the whole cache memory).
    """

    name: str
    const_port: str
    arena_port: str
    cache_port: str
    arena_cache_size_bytes: int | None = None


@record(slots=False)
class Architecture:
    """Everything about the target the planner needs: accelerator, system config, memory mode."""

    accelerator: Accelerator
    system: SystemConfig
    mode: MemoryMode
    arena_cache_size_bytes: int

    def _port(self, port: str) -> MemArea:
        return self.system.axi0_port if port == "Axi0" else self.system.axi1_port

    @property
    def const_area(self) -> MemArea:
        """Where weights and other constants are stored permanently."""
        return self._port(self.mode.const_port)

    @property
    def arena_area(self) -> MemArea:
        """Where feature maps (the tensor arena) are stored."""
        return self._port(self.mode.arena_port)

    @property
    def fast_area(self) -> MemArea:
        """The fast memory used for streamed weights and cached feature maps."""
        return self._port(self.mode.cache_port)

    @property
    def is_dedicated_sram(self) -> bool:
        """True when the arena lives off-chip and SRAM is only a cache (Dedicated_Sram)."""
        return self.arena_area != self.fast_area

    def timing(self, area: MemArea) -> MemoryTiming:
        """``area``'s timing from the system config, or the default timing when it gives none."""
        return self.system.timings.get(area, DEFAULT_TIMING)

    def bytes_per_cycle(self, area: MemArea) -> float:
        """Peak bandwidth of ``area`` in bytes per NPU cycle (AXI width x ports used x clock scale)."""
        return self._bytes_per_cycle[area]

    @cached_property
    def _bytes_per_cycle(self) -> dict[MemArea, float]:
        """``bytes_per_cycle`` of every area, worked out once (every costing asks it per memory)."""
        found = {}
        for area in MemArea:
            timing = self.timing(area)
            found[area] = self.accelerator.axi_port_bytes * timing.ports_used * timing.clock_scale
        return found

    def bytes_per_second(self, area: MemArea) -> float:
        return self.bytes_per_cycle(area) * self.system.core_clock_hz
