"""The report model: every figure the console, CSV and JSON renderers show, computed once.

Units: bytes, cycles and MACs as counts; ``*_bandwidth_gbps`` in GiB/s as Vela prints them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING

from npuplan.errors import EmitError
from npuplan.hw.memory import MemArea
from npuplan.lowering.flash_constants import flash_constants
from npuplan.ir.lowered import CpuOp, NpuOp
from npuplan.records import record
from npuplan.units import ALIGN_BYTES, round_up

if TYPE_CHECKING:
    from npuplan.result import Plan

AREAS = (MemArea.SRAM, MemArea.DRAM, MemArea.ON_CHIP_FLASH, MemArea.OFF_CHIP_FLASH)
PURPOSES = ("feature_map", "weights", "scales", "lut")
DIRECTIONS = ("read", "write")


@record(eq=False)
class LayerRow:
    """One NPU op in the per-layer table (Vela's columns)."""

    tflite_operator: str
    nng_operator: str
    name: str
    sram_usage_bytes: int
    op_cycles: float
    npu_cycles: float
    access_cycles: Mapping[MemArea, float]
    macs: int
    block_config: str
    cascade_id: int
    weight_buffering: str


@record(eq=False)
class CpuRow:
    """An operator left to the CPU and why."""

    tflite_operator: str
    name: str
    reason: str


@record(eq=False, slots=False)
class Report:
    """Figures of one planned network."""

    network: str
    accelerator: str
    system_config: str
    memory_mode: str
    core_clock_hz: float
    arena_cache_size_bytes: int
    bandwidth_bytes_per_s: Mapping[MemArea, float]
    weights_area: MemArea
    feature_map_area: MemArea
    passes_before_fusing: int
    passes_after_fusing: int
    memory_used_bytes: Mapping[MemArea, int]
    total_original_weights: int
    total_npu_encoded_weights: int
    access_bytes: Mapping[tuple[MemArea, str, str], float]
    nn_macs: int
    cycles_npu: float
    cycles_access: Mapping[MemArea, float]
    cycles_total: float
    layers: tuple[LayerRow, ...]
    cpu_ops: tuple[CpuRow, ...]
    npu_op_count: int
    compile_seconds: float
    notes: tuple[str, ...] = field(default=())

    @property
    def inference_time_s(self) -> float:
        return self.cycles_total / self.core_clock_hz if self.core_clock_hz else 0.0

    @property
    def inferences_per_second(self) -> float:
        t = self.inference_time_s
        return 1.0 / t if t > 0 else float("nan")

    @property
    def cpu_op_count(self) -> int:
        return len(self.cpu_ops)

    def total_bytes(self, area: MemArea) -> float:
        return sum(v for (a, _, _), v in self.access_bytes.items() if a == area)


def _layer_row(scheduled) -> LayerRow:  # type: ignore[no-untyped-def]
    op: NpuOp = scheduled.op
    cost = scheduled.cost
    access = {area: float(cost.access_cycles.get(area, 0.0)) for area in AREAS} if cost else {}
    block = scheduled.block_config
    block_text = ""
    if block is not None and hasattr(block, "ofm_block"):
        b = block.ofm_block
        block_text = f"{b.height}x{b.width}x{b.depth}"
    return LayerRow(
        tflite_operator=op.tflite_type,
        nng_operator=op.op_type,
        name=op.name,
        sram_usage_bytes=scheduled.sram_usage_bytes,
        op_cycles=float(cost.total_cycles) if cost else 0.0,
        npu_cycles=float(cost.npu_cycles) if cost else 0.0,
        access_cycles=access,
        macs=int(cost.nn_macs) if cost else 0,
        block_config=block_text,
        cascade_id=scheduled.cascade_id,
        weight_buffering=str(scheduled.weight_buffering),
    )


def _unique_weight_ops(schedule) -> list:  # type: ignore[no-untyped-def]
    """Scheduled ops with weights, each weight tensor once (Vela counts shared weights once)."""
    seen: set[int] = set()
    found = []
    for s in schedule.ops:
        w = s.op.weights
        if w is None:
            continue
        key = id(s.op.weight_tensor) if s.op.weight_tensor is not None else id(w)
        if key not in seen:
            seen.add(key)
            found.append(s)
    return found


def _weight_totals(plan: "Plan") -> tuple[int, int]:
    """(encoded weight bytes without scales, whole constant stream bytes) over unique weights.

    Each op's stream is cut in the OFM depth slices the scheduler chose, as the encoder would,
    through the plan's weight encodings (what the scheduler and command stream already encoded).
    """
    from npuplan.cost.weights import WeightEncodings, encoding_order

    encodings = plan.weight_encodings or WeightEncodings(plan.arch.accelerator)
    encoded = stream = 0
    for s in _unique_weight_ops(plan.schedule):
        step = s.weight_depth_slice or None
        size = encodings.stream_size(s.op, depth_step=step, order=encoding_order(s.op, s.block_config))
        encoded += size.weight_bytes
        stream += size.stream_bytes
    return encoded, stream


def _allocated_peaks(plan: "Plan") -> dict[MemArea, int]:
    """Allocated peak address of each area's non-constant buffers (the schedule's figure for the
    fast area when the plan carries no allocation)."""
    allocation = plan.allocation
    if allocation is None:
        return {plan.arch.fast_area: plan.schedule.sram_peak_bytes}
    return {area: allocation.peak_bytes(area) for area in allocation.allocations}


def _flash_constants_bytes(plan: "Plan") -> int:
    """The constant storage besides the weight streams, as the emitted file lays it out (and Vela
    counts it): constant operands and LUT tables, each distinct content once, 16-byte aligned."""
    try:
        constants, luts = flash_constants(plan.lowered)
    except EmitError:  # a constant the emitter cannot write (it says so when asked to emit)
        return 0
    return sum(round_up(len(data), ALIGN_BYTES) for data in {data for _, data in (*constants, *luts)})


def build_report(plan: "Plan") -> Report:
    """Compute every reported figure from a plan."""
    schedule = plan.schedule
    arch = plan.arch
    layers = tuple(_layer_row(s) for s in schedule.ops)
    access_bytes: dict[tuple[MemArea, str, str], float] = {
        (a, p, d): 0.0 for a in AREAS for p in PURPOSES for d in DIRECTIONS
    }
    cycles_access = {a: 0.0 for a in AREAS}
    for s in schedule.ops:
        if s.cost is None:
            continue
        for (area, purpose, direction), value in s.cost.bytes.items():
            key = (area, str(purpose), str(direction))
            access_bytes[key] = access_bytes.get(key, 0.0) + float(value)
        for area, value in s.cost.access_cycles.items():
            cycles_access[area] = cycles_access.get(area, 0.0) + float(value)
    cpu_rows = tuple(CpuRow(c.tflite_type, c.name, c.reason) for c in plan.lowered.cpu_ops)
    memory_used = _allocated_peaks(plan)
    encoded, stream = _weight_totals(plan)
    memory_used[arch.const_area] = memory_used.get(arch.const_area, 0) + stream + _flash_constants_bytes(plan)
    return Report(
        network=plan.network,
        accelerator=arch.accelerator.vela_name,
        system_config=plan.options.system_config,
        memory_mode=plan.options.memory_mode,
        core_clock_hz=arch.system.core_clock_hz,
        arena_cache_size_bytes=arch.arena_cache_size_bytes,
        bandwidth_bytes_per_s={a: arch.bytes_per_second(a) for a in AREAS},
        weights_area=arch.const_area,
        feature_map_area=arch.arena_area,
        passes_before_fusing=plan.lowered.tflite_op_count,
        passes_after_fusing=len(schedule.cascades) or len(schedule.ops),
        memory_used_bytes=memory_used,
        total_original_weights=sum(int(s.op.weights.size) for s in _unique_weight_ops(schedule)),
        total_npu_encoded_weights=encoded,
        access_bytes=access_bytes,
        nn_macs=sum(layer.macs for layer in layers),
        cycles_npu=sum(layer.npu_cycles for layer in layers),
        cycles_access=cycles_access,
        cycles_total=sum(layer.op_cycles for layer in layers),
        layers=layers,
        cpu_ops=cpu_rows,
        npu_op_count=len(layers),
        compile_seconds=plan.compile_seconds,
        notes=tuple(schedule.notes),
    )
