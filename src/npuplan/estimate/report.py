"""The estimate as ``report.Report``: the figures ``npuplan plan`` writes (Vela's summary and
per-layer columns), one row per NPU operation of the file's streams; and the plan document the
HTML report reads.

A row's ``op_cycles`` is its share of the timeline: from the previous operation's end to its own
(the wait for a DMA included; a stream's trailing DMA on its last row), so the rows add up to the
total. ``npu_cycles`` is the datapath's time plus that wait, as Vela's "NPU" column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from npuplan.cost import Direction, Purpose
from npuplan.estimate.read import CompiledFile
from npuplan.estimate.timeline import TimedDma, TimedOp, TimedStream
from npuplan.hw.memory import Architecture, MemArea
from npuplan.regstream.events import DmaEvent, NpuEvent
from npuplan.report.model import AREAS, DIRECTIONS, PURPOSES, CpuRow, LayerRow, Report

CPU_REASON = "a CPU operator of the compiled file"


def _row(op: TimedOp, cycles: float) -> LayerRow:
    b = op.event.block
    return LayerRow(
        tflite_operator=op.event.kind, nng_operator=op.event.kind, name=op.name, sram_usage_bytes=0,
        op_cycles=cycles, npu_cycles=float(op.cost.op_cycles) + op.wait_cycles,
        access_cycles={area: float(op.cost.access_cycles.get(area, 0.0)) for area in AREAS},
        macs=int(op.cost.nn_macs), block_config=f"{b[0]}x{b[1]}x{b[2]}", cascade_id=-1, weight_buffering="",
    )


def _rows(stream: TimedStream) -> list[LayerRow]:
    rows, previous = [], 0.0
    for k, op in enumerate(stream.ops):
        end = stream.total_cycles if k == len(stream.ops) - 1 else op.end_cycles
        rows.append(_row(op, end - previous))
        previous = end
    return rows


def _dma_purpose(dma: TimedDma) -> str:
    if dma.dst_area is None:
        return str(Purpose.LUT)
    return str(Purpose.WEIGHTS) if dma.to_flash_region else str(Purpose.FEATURE_MAP)


def _access_bytes(streams: Sequence[TimedStream]) -> dict[tuple[MemArea, str, str], float]:
    out: dict[tuple[MemArea, str, str], float] = {(a, p, d): 0.0 for a in AREAS for p in PURPOSES for d in DIRECTIONS}
    for stream in streams:
        for op in stream.ops:
            for (area, purpose, direction), value in op.cost.bytes.items():
                out[(area, str(purpose), str(direction))] += float(value)
        for dma in stream.dmas:
            if dma.src_area is not None:
                out[(dma.src_area, _dma_purpose(dma), str(Direction.READ))] += dma.size_bytes
            if dma.dst_area is not None:
                out[(dma.dst_area, _dma_purpose(dma), str(Direction.WRITE))] += dma.size_bytes
    return out


def _memory_used(compiled: CompiledFile, arch: Architecture) -> dict[MemArea, int]:
    """Each memory's bytes: the largest scratch (and fast scratch) a stream has, the flash."""
    used: dict[MemArea, int] = {}
    for stream in compiled.streams:
        scratch = {arch.arena_area: stream.region_bytes.get(1, 0)}
        if arch.fast_area != arch.arena_area and stream.region_names.get(2) != stream.region_names.get(1):
            scratch[arch.fast_area] = stream.region_bytes.get(2, 0)
        for area, size in scratch.items():
            used[area] = max(used.get(area, 0), size)
    used[arch.const_area] = used.get(arch.const_area, 0) + compiled.flash_bytes
    return used


def _weight_totals(compiled: CompiledFile) -> tuple[int, int]:
    """(original weights, encoded weight bytes) of the operations, each weight stream once: one read
    in place is known by its flash address, one read from a buffer by the flash address of the DMA
    that filled the buffer (a buffer is reused for other weights, a stream read by every stripe)."""
    seen: set[tuple[int, ...]] = set()
    original = encoded = 0
    for k, stream in enumerate(compiled.streams):
        filled: dict[tuple[int, int], int] = {}  # (region, address) -> flash address it was copied from
        for event in stream.events:
            if isinstance(event, DmaEvent) and event.src.region == 0:
                filled[(event.dst.region, event.dst.address)] = event.src.address
            if not isinstance(event, NpuEvent) or event.weights is None or not event.weights.length:
                continue
            w = event.weights
            source = w.address if w.region == 0 else filled.get((w.region, w.address))
            key = (0, source) if source is not None else (k, event.index, w.region, w.address)
            if key in seen:
                continue
            seen.add(key)
            original += event.kernel[0] * event.kernel[1] * event.ofm.depth * (
                1 if event.kind == "DepthWise" else event.ifm.depth)
            encoded += w.length + (event.weights1.length if event.weights1 is not None else 0)
    return original, encoded


def estimate_report(compiled: CompiledFile, streams: Sequence[TimedStream], arch: Architecture, *,
                    seconds: float) -> Report:
    """Every reported figure of the estimate of ``compiled`` (``streams``: its timed streams)."""
    layers = tuple(row for stream in streams for row in _rows(stream))
    cycles_access = {a: sum(layer.access_cycles.get(a, 0.0) for layer in layers) for a in AREAS}
    original, encoded = _weight_totals(compiled)
    return Report(
        network=compiled.network, accelerator=arch.accelerator.vela_name, system_config=arch.system.name,
        memory_mode=arch.mode.name, core_clock_hz=arch.system.core_clock_hz,
        arena_cache_size_bytes=arch.arena_cache_size_bytes,
        bandwidth_bytes_per_s={a: arch.bytes_per_second(a) for a in AREAS},
        weights_area=arch.const_area, feature_map_area=arch.arena_area,
        passes_before_fusing=len(compiled.operators), passes_after_fusing=len(layers),
        memory_used_bytes=_memory_used(compiled, arch), total_original_weights=original,
        total_npu_encoded_weights=encoded, access_bytes=_access_bytes(streams),
        nn_macs=sum(layer.macs for layer in layers), cycles_npu=sum(layer.npu_cycles for layer in layers),
        cycles_access=cycles_access, cycles_total=sum(stream.total_cycles for stream in streams),
        layers=layers, cpu_ops=tuple(CpuRow(op.type, op.name, CPU_REASON) for op in compiled.cpu_operators),
        npu_op_count=len(layers), compile_seconds=seconds,
        notes=("timed from the file's command streams by npuplan estimate",),
    )


def estimate_document(report: Report, streams: Sequence[TimedStream], arch: Architecture, *,
                      model: str) -> dict[str, Any]:
    """The plan document (``report.plan_json``'s schema) the HTML report reads: target, summary,
    the NPU operations in order with their costs; no tensors, allocation or commands."""
    from npuplan.report.files import summary_row

    ops = [_op_entry(op, layer) for op, layer in zip((o for s in streams for o in s.ops), report.layers)]
    ops += [{"name": c.name, "placement": "cpu", "tflite_operator": c.tflite_operator, "reason": c.reason}
            for c in report.cpu_ops]
    accel = arch.accelerator
    return {
        "schema_version": 1, "network": report.network, "model": model,
        "target": {
            "accelerator_config": accel.name, "system_config": report.system_config,
            "memory_mode": report.memory_mode, "arena_cache_size_bytes": report.arena_cache_size_bytes,
            "core_clock_hz": report.core_clock_hz, "macs_per_cycle": accel.macs_per_cycle * accel.cores,
            "bytes_per_cycle": {str(a): arch.bytes_per_cycle(a) for a in AREAS},
            "weights_area": str(arch.const_area), "feature_map_area": str(arch.arena_area),
            "fast_area": str(arch.fast_area),
        },
        "summary": summary_row(report), "removed_ops": [], "ops": ops, "cascades": [], "inputs": [], "outputs": [],
        "tensors": {}, "allocation": {"areas": {}, "buffers": {}}, "commands": [], "notes": list(report.notes),
    }


def _op_entry(op: TimedOp, layer: LayerRow) -> dict[str, Any]:
    e = op.event
    shape = lambda fm: [1, fm.height, fm.width, fm.depth]  # noqa: E731
    return {
        "name": op.name, "placement": "npu", "tflite_operator": e.kind, "operator": e.kind,
        "block_type": e.kind, "ifm": {"tensor": f"{op.name}:ifm", "shape": shape(e.ifm)},
        "ifm2": None if e.ifm2 is None else {"tensor": f"{op.name}:ifm2", "shape": shape(e.ifm2)},
        "ofm": {"tensor": op.name, "shape": shape(e.ofm)},
        "block_config": {"ofm_block": list(e.block)}, "stripes": {"ofm": shape(e.ofm), "ifm": shape(e.ifm),
                                                                  "ifm2": None if e.ifm2 is None else shape(e.ifm2)},
        "cascade": -1, "weights": {"buffering": "", "buffer_bytes": 0, "depth_slice": 0, "prebuffered_bytes": 0},
        "sram_usage_bytes": 0,
        "cost": {
            "total_cycles": layer.op_cycles, "npu_cycles": layer.npu_cycles, "nn_macs": layer.macs,
            "access_cycles": {str(a): v for a, v in layer.access_cycles.items()},
            "access_bytes": {f"{a}.{p}.{d}": float(v) for (a, p, d), v in op.cost.bytes.items() if v},
        },
    }
