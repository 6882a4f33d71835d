"""Vela's summary CSV row of a report: its columns and their values, in Vela's units."""

from __future__ import annotations

from npuplan.report.model import AREAS, DIRECTIONS, Report

SUMMARY_COLUMNS = (
    "experiment", "network", "accelerator_configuration", "system_config", "memory_mode", "core_clock",
    "arena_cache_size", "sram_bandwidth", "dram_bandwidth", "on_chip_flash_bandwidth", "off_chip_flash_bandwidth",
    "weights_storage_area", "feature_map_storage_area", "inferences_per_second", "batch_size", "inference_time",
    "passes_before_fusing", "passes_after_fusing", "sram_memory_used", "dram_memory_used",
    "on_chip_flash_memory_used", "off_chip_flash_memory_used", "total_original_weights",
    "total_npu_encoded_weights",
    *(f"{a.csv_prefix}_{kind}" for a in AREAS for kind in (
        "feature_map_read_bytes", "feature_map_write_bytes", "weight_read_bytes", "weight_write_bytes", "total_bytes")),
    "nn_macs", "nn_tops", "cycles_npu", "cycles_sram_access", "cycles_dram_access", "cycles_on_chip_flash_access",
    "cycles_off_chip_flash_access", "cycles_total", "npu_operators", "cpu_operators",
)


def summary_row(report: Report) -> dict[str, object]:
    """The summary CSV's values by column, in Vela's units (KiB for memory, GiB/s for bandwidth)."""
    row: dict[str, object] = {
        "experiment": "default",
        "network": report.network,
        "accelerator_configuration": report.accelerator,
        "system_config": report.system_config,
        "memory_mode": report.memory_mode,
        "core_clock": float(report.core_clock_hz),
        "arena_cache_size": report.arena_cache_size_bytes / 1024,
        "weights_storage_area": report.weights_area.label,
        "feature_map_storage_area": report.feature_map_area.label,
        "inferences_per_second": report.inferences_per_second,
        "batch_size": 1,
        "inference_time": report.inference_time_s,
        "passes_before_fusing": report.passes_before_fusing,
        "passes_after_fusing": report.passes_after_fusing,
        "total_original_weights": report.total_original_weights,
        "total_npu_encoded_weights": report.total_npu_encoded_weights,
        "nn_macs": report.nn_macs,
        "nn_tops": report.nn_macs * 2 * report.inferences_per_second / 1e12,
        "cycles_npu": report.cycles_npu,
        "cycles_total": report.cycles_total,
        "npu_operators": report.npu_op_count,
        "cpu_operators": report.cpu_op_count,
    }
    for area in AREAS:
        p = area.csv_prefix
        row[f"{p}_bandwidth"] = report.bandwidth_bytes_per_s[area] / 1024**3
        row[f"{p}_memory_used"] = report.memory_used_bytes.get(area, 0) / 1024
        for purpose, label in (("feature_map", "feature_map"), ("weights", "weight")):
            for direction in DIRECTIONS:
                row[f"{p}_{label}_{direction}_bytes"] = report.access_bytes.get((area, purpose, direction), 0.0)
        row[f"{p}_total_bytes"] = report.total_bytes(area)
        row[f"cycles_{p}_access"] = report.cycles_access.get(area, 0.0)
    return row
