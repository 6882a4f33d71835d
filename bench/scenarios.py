"""The benchmark scenarios, defined once: the three public ones (same flags as
../shared/bench/vela_baseline.py) and the 256 KiB budget scenario of issue 3."""

from __future__ import annotations

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


def cli_flags(options: dict[str, str]) -> list[str]:
    """Plan options as command-line flags (npuplan's and Vela's are the same)."""
    flags = []
    for key, value in options.items():
        flags += [f"--{key.replace('_', '-')}", value]
    return flags
