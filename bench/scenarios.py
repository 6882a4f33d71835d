"""The benchmark scenarios, defined once: the three public ones (same flags as
../shared/bench/vela_baseline.py), the 256 KiB budget scenario of issue 3, the dual-core one and
the sixteen hardware configs of bench/config_sweep.py, the eighth zoo's nine (ZOO8), the eleventh
zoo's six (ZOO11) and the twelfth zoo's five (ZOO12); ALL holds the public three and every named one."""

from __future__ import annotations

from pathlib import Path

KIB = 1024
CUSTOM_INI = str(Path(__file__).resolve().parent / "config_sweep.ini")
ZOO8_INI = str(Path(__file__).resolve().parent / "zoo8_configs.ini")
ZOO12_INI = str(Path(__file__).resolve().parent / "zoo12_configs.ini")

SCENARIOS: dict[str, dict[str, str]] = {
    "u55_128_highend_shared_perf": dict(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                                        memory_mode="Shared_Sram", optimise="Performance"),
    "u55_64_deep_shared_size": dict(accelerator_config="ethos-u55-64", system_config="Ethos_U55_Deep_Embedded",
                                    memory_mode="Shared_Sram", optimise="Size"),
    "u65_256_highend_dedicated384k_perf": dict(accelerator_config="ethos-u65-256", system_config="Ethos_U65_High_End",
                                               memory_mode="Dedicated_Sram_384KB", optimise="Performance"),
}
BUDGET_256K: dict[str, dict[str, str]] = {
    "u55_256_budget_256k": dict(accelerator_config="ethos-u55-256", system_config="Ethos_U55_High_End_Embedded",
                                memory_mode="Shared_Sram", arena_cache_size="262144"),
}

# The dual-core accelerator (two weight streams per operation), for the deploy benchmark.
DUAL_CORE: dict[str, dict[str, str]] = {
    "u65_512_highend_dedicated384k_perf": dict(accelerator_config="ethos-u65-512", system_config="Ethos_U65_High_End",
                                               memory_mode="Dedicated_Sram_384KB", optimise="Performance"),
}


def _scenario(accel: str, system: str, mode: str, goal: str, arena_kib: int | None = None,
              config: str | None = None) -> dict[str, str]:
    options = dict(accelerator_config=f"ethos-{accel}", system_config=system, memory_mode=mode, optimise=goal)
    if arena_kib is not None:
        options["arena_cache_size"] = str(arena_kib * KIB)
    if config is not None:
        options["config"] = config
    return options


# The hardware configs of bench/config_sweep.py: chosen to cover (not multiply out) every
# accelerator, the four system configs of Vela's vela.ini, every valid memory mode, both goals,
# arena budgets of 64, 128 and 512 KiB, and the user-defined configs of bench/config_sweep.ini.
U55_HE, U55_DE, U65_HE, U65_CS = ("Ethos_U55_High_End_Embedded", "Ethos_U55_Deep_Embedded", "Ethos_U65_High_End",
                                  "Ethos_U65_Client_Server")
SWEEP: dict[str, dict[str, str]] = {
    "u55_32_deep_shared_perf": _scenario("u55-32", U55_DE, "Shared_Sram", "Performance"),
    "u55_32_highend_sramonly_size": _scenario("u55-32", U55_HE, "Sram_Only", "Size"),
    "u55_64_highend_shared_perf_128k": _scenario("u55-64", U55_HE, "Shared_Sram", "Performance", 128),
    "u55_64_deep_sramonly_size_64k": _scenario("u55-64", U55_DE, "Sram_Only", "Size", 64),
    "u55_128_deep_sramonly_perf": _scenario("u55-128", U55_DE, "Sram_Only", "Performance"),
    "u55_128_highend_shared_size_64k": _scenario("u55-128", U55_HE, "Shared_Sram", "Size", 64),
    "u55_128_u65highend_ded256k_size": _scenario("u55-128", U65_HE, "Dedicated_Sram_256KB", "Size"),
    "u55_256_deep_shared_perf_512k": _scenario("u55-256", U55_DE, "Shared_Sram", "Performance", 512),
    "u55_256_highend_sramonly_size": _scenario("u55-256", U55_HE, "Sram_Only", "Size"),
    "u65_256_clientserver_ded_perf_512k": _scenario("u65-256", U65_CS, "Dedicated_Sram", "Performance", 512),
    "u65_256_highend_shared_size": _scenario("u65-256", U65_HE, "Shared_Sram", "Size"),
    "u65_512_highend_ded384k_size": _scenario("u65-512", U65_HE, "Dedicated_Sram_384KB", "Size"),
    "u65_512_clientserver_ded_perf_128k": _scenario("u65-512", U65_CS, "Dedicated_Sram", "Performance", 128),
    "u65_512_clientserver_sramonly_perf": _scenario("u65-512", U65_CS, "Sram_Only", "Performance"),
    "u55_128_custom_shared192k_perf": _scenario("u55-128", "Sweep_U55_Custom", "Sweep_Shared_192KB", "Performance",
                                                config=CUSTOM_INI),
    "u65_256_custom_ded256k_size": _scenario("u65-256", "Sweep_U65_Custom", "Sweep_Dedicated_256KB", "Size",
                                             config=CUSTOM_INI),
}

# The configs of the eighth zoo (bench/config_sweep.py --set zoo8): accelerators, modes and budgets
# the other benches leave out (u55-32/64/256 in Shared_Sram, U65-256 Shared_Sram and Sram_Only,
# Dedicated_Sram with a 32 or 64 KiB cache, Deep_Embedded with 32 KiB) and bench/zoo8_configs.ini.
ZOO8: dict[str, dict[str, str]] = {
    "u55_32_highend_shared_perf": _scenario("u55-32", U55_HE, "Shared_Sram", "Performance"),
    "u55_64_deep_shared_perf_32k": _scenario("u55-64", U55_DE, "Shared_Sram", "Performance", 32),
    "u55_256_highend_shared_size": _scenario("u55-256", U55_HE, "Shared_Sram", "Size"),
    "u65_256_highend_shared_perf": _scenario("u65-256", U65_HE, "Shared_Sram", "Performance"),
    "u65_256_highend_sramonly_size": _scenario("u65-256", U65_HE, "Sram_Only", "Size"),
    "u65_256_highend_ded_perf_32k": _scenario("u65-256", U65_HE, "Dedicated_Sram", "Performance", 32),
    "u65_512_clientserver_ded_size_64k": _scenario("u65-512", U65_CS, "Dedicated_Sram", "Size", 64),
    "u55_64_zoo8slow_shared96k_perf": _scenario("u55-64", "Zoo8_U55_Slow", "Zoo8_Shared_96KB", "Performance",
                                                config=ZOO8_INI),
    "u65_256_zoo8fast_ded48k_perf": _scenario("u65-256", "Zoo8_U65_Fast", "Zoo8_Dedicated_48KB", "Performance",
                                              config=ZOO8_INI),
}

# The configs of the eleventh zoo (bench/zoo/zoo11_report.py), Size mode at each hardware point the
# brief of issue 25 names: the smallest core, the dual-core U65 in Sram_Only and Dedicated_Sram,
# arenas of 16 KiB (tiny) and of 4 and 8 MiB (huge, more than any network here needs).
ZOO11: dict[str, dict[str, str]] = {
    "u55_32_highend_shared_size": _scenario("u55-32", U55_HE, "Shared_Sram", "Size"),
    "u65_512_highend_sramonly_size": _scenario("u65-512", U65_HE, "Sram_Only", "Size"),
    "u65_512_highend_ded_size_16k": _scenario("u65-512", U65_HE, "Dedicated_Sram", "Size", 16),
    "u65_512_highend_ded_perf_4m": _scenario("u65-512", U65_HE, "Dedicated_Sram", "Performance", 4096),
    "u55_128_highend_shared_size_16k": _scenario("u55-128", U55_HE, "Shared_Sram", "Size", 16),
    "u55_256_highend_shared_size_8m": _scenario("u55-256", U55_HE, "Shared_Sram", "Size", 8192),
}

# The configs of the twelfth zoo (bench/zoo/zoo11_report.py --set zoo12): the two user-defined
# systems of bench/zoo12_configs.ini (a 37.5 MHz U55 with on-chip flash and a memory mode read
# through inherit=, a 1.6 GHz U65 with slow memories and an 8 KiB cache), u55-64 and u55-256 at
# Vela's systems, a 16 MiB arena and an 8 KiB one, both goals.
ZOO12: dict[str, dict[str, str]] = {
    "u55_64_zoo12onchip_inherit_size": _scenario("u55-64", "Zoo12_U55_OnChip", "Zoo12_Shared_Inherit", "Size",
                                                 config=ZOO12_INI),
    "u65_256_zoo12odd_ded8k_perf": _scenario("u65-256", "Zoo12_U65_Odd", "Zoo12_Dedicated_8KB", "Performance",
                                             config=ZOO12_INI),
    "u55_64_highend_shared_perf": _scenario("u55-64", U55_HE, "Shared_Sram", "Performance"),
    "u55_256_highend_sramonly_perf_16m": _scenario("u55-256", U55_HE, "Sram_Only", "Performance", 16384),
    "u65_256_highend_ded_size_8k": _scenario("u65-256", U65_HE, "Dedicated_Sram", "Size", 8),
}

ALL: dict[str, dict[str, str]] = {**SCENARIOS, **BUDGET_256K, **DUAL_CORE, **SWEEP, **ZOO8, **ZOO11, **ZOO12}


def cli_flags(options: dict[str, str]) -> list[str]:
    """Plan options as command-line flags (npuplan's and Vela's are the same)."""
    flags = []
    for key, value in options.items():
        flags += [f"--{key.replace('_', '-')}", value]
    return flags
