"""The plan as JSON (schema documented in README.md, "The plan JSON")."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from npuplan.commands.context import stream_context
from npuplan.commands.serial import buffer_layouts, command_stream_json, layout_json, operand_tensors
from npuplan.ir.lowered import CpuOp
from npuplan.report.model import AREAS, Report
from npuplan.report.summary import summary_row

if TYPE_CHECKING:
    from npuplan.result import Plan

SCHEMA_VERSION = 1


def _shape(shape: Any) -> list[int] | None:
    return None if shape is None else [shape.n, shape.h, shape.w, shape.c]


def _block(block_config: Any) -> dict[str, Any] | None:
    if block_config is None:
        return None
    out: dict[str, Any] = {}
    for key in ("ofm_block", "ifm_block"):
        b = getattr(block_config, key, None)
        if b is not None:
            out[key] = [b.height, b.width, b.depth]
    return out


def _cost(cost: Any) -> dict[str, Any] | None:
    if cost is None:
        return None
    return {
        "total_cycles": float(cost.total_cycles),
        "npu_cycles": float(cost.npu_cycles),
        "nn_macs": int(cost.nn_macs),
        "access_cycles": {str(area): float(v) for area, v in cost.access_cycles.items()},
        "access_bytes": {f"{a}.{p}.{d}": float(v) for (a, p, d), v in cost.bytes.items() if v},
    }


def _npu_entry(scheduled: Any) -> dict[str, Any]:
    op = scheduled.op
    return {
        "name": op.name,
        "placement": "npu",
        "tflite_operator": op.tflite_type,
        "operator": op.op_type,
        "block_type": str(op.block_type),
        "ifm": {"tensor": op.ifm.name, "shape": _shape(op.ifm_shape)},
        "ifm2": None if op.ifm2 is None else {"tensor": op.ifm2.name, "shape": _shape(op.ifm2_shape)},
        "ofm": {"tensor": op.ofm.name, "shape": _shape(op.ofm_shape)},
        "block_config": _block(scheduled.block_config),
        "stripes": {
            "ofm": _shape(scheduled.ofm_stripe),
            "ifm": _shape(scheduled.ifm_stripe),
            "ifm2": _shape(scheduled.ifm2_stripe),
        },
        "cascade": scheduled.cascade_id,
        "weights": {
            "buffering": str(scheduled.weight_buffering),
            "buffer_bytes": scheduled.weight_buffer_bytes,
            "depth_slice": scheduled.weight_depth_slice,
            "prebuffered_bytes": scheduled.prebuffered_weight_bytes,
        },
        "sram_usage_bytes": scheduled.sram_usage_bytes,
        "cost": _cost(scheduled.cost),
    }


def _cpu_entry(op: CpuOp) -> dict[str, Any]:
    return {"name": op.name, "placement": "cpu", "tflite_operator": op.tflite_type, "reason": op.reason}


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def plan_document(plan: "Plan", report: Report) -> dict[str, Any]:
    """The plan as plain data: target, summary, ops in execution order, tensor placements."""
    scheduled = {s.op.name: s for s in plan.schedule.ops}
    ops: list[dict[str, Any]] = []
    for op in plan.lowered.ops:
        if isinstance(op, CpuOp):
            ops.append(_cpu_entry(op))
        elif op.name in scheduled:
            ops.append(_npu_entry(scheduled[op.name]))
    tensors, allocation = _addresses(plan)
    return {
        "schema_version": SCHEMA_VERSION,
        "network": plan.network,
        "model": plan.model_path,
        "target": _target(plan),
        "summary": {k: _finite(v) for k, v in summary_row(report).items()},
        "removed_ops": [{"name": n, "reason": r} for n, r in plan.lowered.removed],
        "ops": ops,
        "cascades": [
            {"id": c.id, "ops": list(c.op_names), "sram_bytes": c.sram_bytes} for c in plan.schedule.cascades
        ],
        "inputs": [t.name for t in plan.lowered.inputs],
        "outputs": [t.name for t in plan.lowered.outputs],
        "tensors": tensors,
        "allocation": allocation,
        "commands": command_stream_json(plan.commands),
        "notes": list(plan.schedule.notes),
    }


def _target(plan: "Plan") -> dict[str, Any]:
    """The accelerator, system, memory mode and options, and the peak rates the HTML report's
    lower bounds use (MACs per cycle over all cores, each area's bytes per NPU cycle)."""
    arch, options = plan.arch, plan.options
    return {
        "accelerator_config": arch.accelerator.name,
        "system_config": options.system_config,
        "memory_mode": options.memory_mode,
        "arena_cache_size_bytes": arch.arena_cache_size_bytes,
        "optimise": str(options.optimise),
        "tensor_allocator": str(options.tensor_allocator),
        "search": str(options.search),
        "fm_staging": options.fm_staging,
        "concat_in_place": options.concat_in_place,
        "buffer_weights": options.buffer_weights,
        "cpu_tensor_alignment_bytes": options.cpu_tensor_alignment_bytes,
        "core_clock_hz": arch.system.core_clock_hz,
        "macs_per_cycle": arch.accelerator.macs_per_cycle * arch.accelerator.cores,
        "bytes_per_cycle": {str(area): arch.bytes_per_cycle(area) for area in AREAS},
        "weights_area": str(arch.const_area),
        "feature_map_area": str(arch.arena_area),
        "fast_area": str(arch.fast_area),
    }


def _placement(p: Any) -> dict[str, Any]:
    """A ``TensorPlacement``'s fields (all scalars), enums and other values as strings."""
    values = ((f.name, getattr(p, f.name)) for f in dataclasses.fields(p))
    return {k: (str(v) if not isinstance(v, (int, float, type(None))) else v) for k, v in values}


def _addresses(plan: "Plan") -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The ``tensors`` table (placement, shape and address of every tensor buffer) and the
    ``allocation`` section (allocator, per-area peaks, weight stream and weight buffer addresses)."""
    tensors = {name: _placement(p) for name, p in plan.schedule.placements.items()}
    if plan.allocation is None:
        return tensors, None
    shapes = stream_context(plan.lowered).shapes
    layouts = buffer_layouts(plan.commands)
    held = operand_tensors(plan.commands)
    buffers: dict[str, Any] = {}
    for name, layout in layouts.items():
        if name in held:
            entry = tensors.setdefault(name, {"tensor_name": name})
            entry.update(layout_json(layout))
            entry["shape"] = list(shapes.get(name, ()))
        else:
            buffers[name] = layout_json(layout)
    a = plan.allocation
    return tensors, {
        "allocator": str(a.allocator),
        "cpu_tensor_alignment_bytes": a.cpu_tensor_alignment_bytes,
        "sram_limit_bytes": plan.arch.arena_cache_size_bytes,
        "allocation_seconds": a.allocation_seconds,
        "areas": {str(area): {"peak_bytes": al.peak_bytes, "lower_bound_bytes": al.lower_bound_bytes}
                  for area, al in a.allocations.items()},
        "buffers": buffers,
    }


def plan_json(plan: "Plan", report: Report) -> str:
    """The plan document as JSON text: one top-level key per line, and each element of a top-level
    list or object on a line of its own, so the file diffs line by line.

    Each line is encoded whole by ``json``'s C encoder (which ``indent`` would bypass for its
    pure-Python one, several times slower on large plans); the data is what ``json.dumps`` of the
    document gives.
    """
    encode = json.JSONEncoder(default=str).encode
    members = [f" {_member(key, value, encode)}" for key, value in plan_document(plan, report).items()]
    return "{\n" + ",\n".join(members) + "\n}\n"


def _member(key: str, value: Any, encode: Callable[[Any], str]) -> str:
    """``"key": value`` with a non-empty list or object value spread one element per line."""
    head = f"{encode(key)}: "
    if isinstance(value, list) and value:
        return head + "[\n" + ",\n".join(f"  {encode(item)}" for item in value) + "\n ]"
    if isinstance(value, dict) and value:
        return head + "{\n" + ",\n".join(f"  {encode({k: v})[1:-1]}" for k, v in value.items()) + "\n }"
    return head + encode(value)
