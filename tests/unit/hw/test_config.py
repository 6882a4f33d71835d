"""Vela-format ini parsing, inheritance, defaults, validity rules and build_architecture."""

from __future__ import annotations

from pathlib import Path

import pytest

from npuplan.errors import ConfigError
from npuplan.hw import build_architecture
from npuplan.hw.ini import load_database
from npuplan.hw.memory import MemArea
from npuplan.options import PlanOptions


def _ini(tmp_path: Path, text: str, name: str = "my.ini") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _opts(**kw: object) -> PlanOptions:
    return PlanOptions(**kw)  # type: ignore[arg-type]


MY_SYSTEM = """
[System_Config.Mine]
core_clock=250e6
axi0_port=Sram
axi1_port=Dram
Sram_clock_scale=0.5
Sram_burst_length=64
Dram_clock_scale=0.25
Dram_read_latency=100
Dram_write_latency=50
Dram_ports_used=2
"""


def test_bundled_names_present() -> None:
    db = load_database()
    for name in (
        "System_Config.Ethos_U55_High_End_Embedded",
        "System_Config.Ethos_U55_Deep_Embedded",
        "System_Config.Ethos_U65_Embedded",
        "System_Config.Ethos_U65_Mid_End",
        "System_Config.Ethos_U65_High_End",
        "System_Config.Ethos_U65_Client_Server",
        "Memory_Mode.Sram_Only",
        "Memory_Mode.Shared_Sram",
        "Memory_Mode.Dedicated_Sram",
        "Memory_Mode.Dedicated_Sram_256KB",
        "Memory_Mode.Dedicated_Sram_384KB",
        "Memory_Mode.Dedicated_Sram_512KB",
    ):
        assert db.has(name), name


def test_internal_default_differs_for_u55_and_u65() -> None:
    u55 = build_architecture(_opts(accelerator_config="ethos-u55-128"))
    assert (u55.system.name, u55.mode.name) == ("Ethos_U55_High_End_Embedded", "Shared_Sram")
    assert u55.arena_cache_size_bytes == 2**32
    u65 = build_architecture(_opts(accelerator_config="ethos-u65-256"))
    assert (u65.system.name, u65.mode.name) == ("Ethos_U65_Client_Server", "Dedicated_Sram_384KB")
    assert u65.arena_cache_size_bytes == 393216
    assert u65.is_dedicated_sram and u65.arena_area == MemArea.DRAM


def test_high_end_values() -> None:
    arch = build_architecture(_opts(system_config="Ethos_U55_High_End_Embedded", memory_mode="Shared_Sram"))
    assert arch.system.core_clock_hz == 500e6
    flash = arch.timing(MemArea.OFF_CHIP_FLASH)
    assert (flash.clock_scale, flash.burst_length_bytes, flash.read_latency_cycles) == (0.125, 128, 64)
    assert arch.bytes_per_second(MemArea.OFF_CHIP_FLASH) == pytest.approx(0.5e9)
    assert arch.const_area == MemArea.OFF_CHIP_FLASH and arch.fast_area == MemArea.SRAM


def test_inherit_and_child_overrides(tmp_path: Path) -> None:
    path = _ini(tmp_path, MY_SYSTEM + "[Memory_Mode.Mine]\ninherit=Memory_Mode.Dedicated_Sram_256KB\narena_cache_size=1000\n")
    arch = build_architecture(
        _opts(accelerator_config="ethos-u65-256", config_files=(path,), system_config="Mine", memory_mode="Mine")
    )
    assert arch.mode.arena_port == "Axi1" and arch.mode.cache_port == "Axi0"
    assert arch.arena_cache_size_bytes == 1000
    dram = arch.timing(MemArea.DRAM)
    assert (dram.read_latency_cycles, dram.write_latency_cycles, dram.ports_used) == (100, 50, 2)
    assert arch.bytes_per_cycle(MemArea.DRAM) == 16 * 2 * 0.25


def test_absent_keys_take_vela_initial_values(tmp_path: Path) -> None:
    path = _ini(tmp_path, "[System_Config.Bare]\naxi1_port=OffChipFlash\n[Memory_Mode.Bare]\nconst_mem_area=Axi1\n")
    arch = build_architecture(_opts(config_files=(path,), system_config="Bare", memory_mode="Bare"))
    assert arch.system.core_clock_hz == 1.0
    assert arch.timing(MemArea.SRAM).burst_length_bytes == 1
    assert arch.mode.arena_port == "Axi0" and arch.mode.cache_port == "Axi0"


def test_option_overrides_mode_cache_size() -> None:
    opts = _opts(accelerator_config="ethos-u65-256", memory_mode="Dedicated_Sram_384KB", system_config="Ethos_U65_High_End")
    assert build_architecture(opts).arena_cache_size_bytes == 393216
    from dataclasses import replace

    assert build_architecture(replace(opts, arena_cache_size_bytes=65536)).arena_cache_size_bytes == 65536
    with pytest.raises(ConfigError, match="arena-cache-size=-1"):
        build_architecture(replace(opts, arena_cache_size_bytes=-1))
    with pytest.raises(ConfigError, match="out of bounds"):
        build_architecture(replace(_opts(), arena_cache_size_bytes=2**33))


def test_sram_only_moves_constants_to_on_chip_flash() -> None:
    arch = build_architecture(_opts(system_config="Ethos_U55_Deep_Embedded", memory_mode="Sram_Only"))
    assert arch.const_area == MemArea.ON_CHIP_FLASH
    assert arch.timing(MemArea.ON_CHIP_FLASH) == arch.timing(MemArea.SRAM)
    assert arch.arena_area == arch.fast_area == MemArea.SRAM


def test_dedicated_sram_rejected_without_dram_port() -> None:
    with pytest.raises(ConfigError, match="arena_mem_area=Axi1 is OffChipFlash, must be Sram or Dram"):
        build_architecture(_opts(system_config="Ethos_U55_High_End_Embedded", memory_mode="Dedicated_Sram"))


def test_user_file_defines_new_name_and_replaces_bundled_section(tmp_path: Path) -> None:
    path = _ini(tmp_path, "[Memory_Mode.Shared_Sram]\nconst_mem_area=Axi1\narena_cache_size=4096\n" + MY_SYSTEM)
    arch = build_architecture(_opts(config_files=(path,), system_config="Mine", memory_mode="Shared_Sram"))
    assert arch.arena_cache_size_bytes == 4096
    # the bundled section is replaced, not merged: arena/cache fall back to Vela's Axi0 default
    assert arch.mode.arena_port == "Axi0"


def test_later_user_file_overrides_keys(tmp_path: Path) -> None:
    a = _ini(tmp_path, MY_SYSTEM, "a.ini")
    b = _ini(tmp_path, "[System_Config.Mine]\ncore_clock=100e6\n", "b.ini")
    arch = build_architecture(_opts(config_files=(a, b), system_config="Mine", memory_mode="Shared_Sram"))
    assert arch.system.core_clock_hz == 100e6
    assert arch.timing(MemArea.DRAM).read_latency_cycles == 100


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("[Memory_Mode.L]\ninherit=Memory_Mode.L\n", "loop"),
        ("[Memory_Mode.L]\ninherit=Memory_Mode.K\n[Memory_Mode.K]\ninherit=Memory_Mode.L\n", r"loop \(Memory_Mode.L -> Memory_Mode.K -> Memory_Mode.L\)"),
        ("[Memory_Mode.L]\ninherit=Memory_Mode.Nope\n", "no such section"),
        ("[Memory_Mode.L]\nconst_mem_area=Axi2\n", r"\[Memory_Mode.L\] const_mem_area=Axi2: expected Axi0 or Axi1"),
        ("[Memory_Mode.L]\nconst_mem_area=Axi1\narena_cache_size=lots\n", "arena_cache_size=lots"),
        ("[Memory_Mode.L]\nconst_mem_area=Axi1\narena_cache_size=-5\n", "must be >= 0"),
        ("[Memory_Mode.L\nx=1\n", "invalid .ini syntax"),
        ("[Memory_Mode.L]\na=1\n[Memory_Mode.L]\na=2\n", "invalid .ini syntax"),
        ("[Memory_Mode.L]\na=1\na=2\n", "invalid .ini syntax"),
    ],
)
def test_memory_mode_errors(tmp_path: Path, text: str, pattern: str) -> None:
    path = _ini(tmp_path, text + MY_SYSTEM)
    with pytest.raises(ConfigError, match=pattern) as info:
        build_architecture(_opts(config_files=(path,), system_config="Mine", memory_mode="L"))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("line", "pattern"),
    [
        ("Sram_burst_length=0", "Sram_burst_length=0: expected an integer >= 1"),
        ("Sram_burst_length=3.5", "Sram_burst_length=3.5"),
        ("Sram_read_latency=-1", "Sram_read_latency=-1: expected an integer >= 0"),
        ("Sram_clock_scale=0", "Sram_clock_scale=0"),
        ("core_clock=fast", "core_clock=fast"),
        ("axi0_port=Flash", "axi0_port=Flash: expected one of"),
    ],
)
def test_system_config_errors(tmp_path: Path, line: str, pattern: str) -> None:
    path = _ini(tmp_path, f"[System_Config.S]\naxi1_port=OffChipFlash\n{line}\n")
    with pytest.raises(ConfigError, match=pattern) as info:
        build_architecture(_opts(config_files=(path,), system_config="S", memory_mode="Shared_Sram"))
    assert str(path) in str(info.value) and "[System_Config.S]" in str(info.value)


def test_missing_names_and_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"section \[System_Config.Nope\] not found"):
        build_architecture(_opts(system_config="Nope"))
    with pytest.raises(ConfigError, match=r"section \[Memory_Mode.Nope\] not found"):
        build_architecture(_opts(memory_mode="Nope"))
    with pytest.raises(ConfigError, match="cannot read config file"):
        build_architecture(_opts(config_files=(str(tmp_path / "none.ini"),), system_config="X", memory_mode="Y"))
    with pytest.raises(ConfigError, match=".ini extension"):
        build_architecture(_opts(config_files=(str(tmp_path / "x.cfg"),), system_config="X", memory_mode="Y"))
    with pytest.raises(ConfigError, match="unknown accelerator"):
        build_architecture(_opts(accelerator_config="ethos-u99"))


def test_config_file_with_internal_default_rejected(tmp_path: Path) -> None:
    path = _ini(tmp_path, MY_SYSTEM)
    with pytest.raises(ConfigError, match="memory mode is 'internal-default'"):
        build_architecture(_opts(config_files=(path,), system_config="Mine"))


def test_arm_vela_ini_alias_is_bundled_file() -> None:
    arch = build_architecture(
        _opts(config_files=("Arm/vela.ini",), system_config="Ethos_U65_High_End", memory_mode="Dedicated_Sram_384KB",
              accelerator_config="ethos-u65-256")
    )
    assert arch.system.core_clock_hz == 1e9 and arch.timing(MemArea.DRAM).clock_scale == 0.234375
