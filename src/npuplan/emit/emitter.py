"""The emitting driver: encode the weights, lay out memory, translate each NPU partition's
commands into a register command stream, and write the model."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from npuplan.api import Plan
from npuplan.commands.types import Command, CpuCommand, DmaCommand, NpuStripeCommand, WeightSlice
from npuplan.emit.blocks import Block, resolve_block
from npuplan.emit.layout import DeployLayout, deploy_layout
from npuplan.emit.luts import LutSlots
from npuplan.emit.model import emitted_model
from npuplan.emit.operations import Context, dma_operation, stripe_operations
from npuplan.emit.regions import feature_map_regions
from npuplan.emit.vela import accelerator, quietly, vela_api
from npuplan.emit.weights import EncodedOp, encode_op
from npuplan.errors import EmitError, ValidationError
from npuplan.io.tflite_write import write_tflite
from npuplan.ir.lowered import BlockType
from npuplan.report.files import write_atomically
from npuplan.lowering.deployable import npu_op_reason
from npuplan.schedule.types import ScheduledOp
from npuplan.schedule.usage import staged_name


@dataclass(frozen=True)
class Emitted:
    """The emitted file's bytes and what went into it (sizes in bytes, time in seconds)."""

    data: bytes
    command_streams: int
    npu_operations: int
    dma_operations: int
    flash_bytes: int
    scratch_bytes: int
    fast_scratch_bytes: int
    emit_seconds: float
    notes: tuple[str, ...]


def _check(plan: Plan) -> None:
    if plan.arch.accelerator.cores != 1:
        raise EmitError(None, f"{plan.arch.accelerator.name} has {plan.arch.accelerator.cores} cores; "
                        "the emitter encodes weights for one core only")
    for op in plan.lowered.npu_ops:
        reason = npu_op_reason(op)
        if reason is not None:
            raise EmitError(op.name, f"{reason} (plan with --emit-tflite, which keeps such ops on the CPU)")


def _blocks(api: ModuleType, acc: object, plan: Plan) -> tuple[dict[str, Block], int]:
    """Each NPU op's emitted block config and how many differ from the plan's."""
    out: dict[str, Block] = {}
    changed = 0
    memo: dict[tuple[object, ...], list[Block]] = {}
    for sop in plan.schedule.ops:
        b = sop.block_config.ofm_block
        planned = (b.height, b.width, b.depth)
        out[sop.name] = resolve_block(api, acc, sop.op, planned, part_kernel_first=_part_kernel(sop), memo=memo)
        changed += out[sop.name] != planned
    return out, changed


def _part_kernel(sop: ScheduledOp) -> bool:
    return sop.op.block_type is BlockType.CONV and bool(sop.block_config.is_partkernel)


def _encoded(api: ModuleType, acc: object, plan: Plan, blocks: dict[str, Block]) -> list[EncodedOp]:
    slices: dict[str, dict[int, WeightSlice]] = {}
    for c in plan.commands:
        if isinstance(c, NpuStripeCommand) and c.weight_slice is not None:
            slices.setdefault(c.op, {})[c.weight_slice.index] = c.weight_slice
    out = []
    for sop in plan.schedule.ops:
        op = sop.op
        if op.weights is None:
            continue
        out.append(encode_op(api, acc, op, slices.get(op.name, {}).values(), part_kernel_first=_part_kernel(sop),
                             block_depth=blocks[sop.name][2]))
    return out


def _groups(commands: Sequence[Command]) -> list[list[Command]]:
    """The commands of each NPU partition: the runs between CPU commands."""
    groups: list[list[Command]] = [[]]
    for c in commands:
        if isinstance(c, CpuCommand):
            if groups[-1]:
                groups.append([])
        else:
            groups[-1].append(c)
    return [g for g in groups if g]


def _context(api: ModuleType, plan: Plan, layout: DeployLayout, encoded: list[EncodedOp],
             blocks: dict[str, Block]) -> Context:
    nhcwb16 = {name for name, p in plan.schedule.placements.items() if p.format == "NHCWB16"}
    nhcwb16 |= {staged_name(name) for name in nhcwb16}
    striped = frozenset(s.name for s in plan.schedule.ops if s.ofm_stripe.h < s.op.ofm_shape.h)
    return Context(api, feature_map_regions(plan.arch), layout, {o.name: o for o in plan.lowered.npu_ops},
                   {e.op: e for e in encoded}, frozenset(nhcwb16), blocks, striped)


def emit_tflite(plan: Plan) -> Emitted:
    """``plan`` as a deployable TFLite file. Raises ``EmitError`` (one line) for what it cannot emit."""
    started = time.perf_counter()
    api = vela_api()
    _check(plan)
    acc = accelerator(api, plan.arch.accelerator.name)
    blocks, changed = _blocks(api, acc, plan)
    encoded = _encoded(api, acc, plan, blocks)
    layout = deploy_layout(plan, encoded)
    ctx = _context(api, plan, layout, encoded, blocks)
    payloads: list[bytes] = []
    npu_count = dma_count = 0
    luts = LutSlots(api, plan.arch.accelerator, layout.lut_offsets)
    for group in _groups(plan.commands):
        operations = []
        luts.reset()
        for c in group:
            if isinstance(c, NpuStripeCommand):
                if c.ofm.box.is_empty():  # rows past a CONCATENATION copy's box: nothing to write
                    continue
                loads, slot = luts.load(ctx.ops[c.op])
                stripes = stripe_operations(ctx, c, lut_index=slot)
                operations.extend(loads + stripes)
                npu_count += len(stripes)
                dma_count += len(loads)
            elif isinstance(c, DmaCommand):
                operations.append(dma_operation(ctx, c))
                dma_count += 1
        try:
            stream = quietly(api.npu_generate_register_command_stream, operations, acc)
        except Exception as error:  # noqa: BLE001 - the API's own checks (alignment, lengths, shapes)
            detail = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise EmitError(None, f"Vela's register command stream generator rejected NPU partition "
                            f"{len(payloads)}: {detail}") from None
        payloads.append(bytes(quietly(api.npu_create_driver_payload, stream, acc)))
    arena, fast = plan.arch.arena_area, plan.arch.fast_area
    scratch = _round16(layout.area_peaks.get(arena, 0))
    fast_bytes = _round16(layout.area_peaks.get(fast, 0)) if fast != arena else 0
    model, metadata = emitted_model(
        plan.lowered, payloads, layout.flash, scratch_bytes=scratch,
        fast_scratch_bytes=fast_bytes if fast != arena else None, addresses=layout.addresses, arena=arena,
        description="npuplan deployable plan")
    data = write_tflite(model, metadata=metadata)
    _self_check(data)
    notes = layout.notes
    if changed:
        notes += (f"{changed} of {len(blocks)} ops use the nearest block config Vela's API accepts instead of the "
                  "plan's",)
    return Emitted(data, len(payloads), npu_count, dma_count, len(layout.flash), scratch, fast_bytes,
                   time.perf_counter() - started, notes)


def _self_check(data: bytes) -> None:
    """Replay the file's register command streams (``regstream.validate_tflite``) before anyone
    can deploy it: a file the validator rejects is refused in one line, never written."""
    from npuplan.regstream import validate_tflite

    try:
        validate_tflite(data)
    except ValidationError as error:
        raise EmitError(None, f"the emitted file fails npuplan's own validation, so it is not written ({error}); "
                        "plan without --emit-tflite, or report this as a bug") from None


def _round16(n: int) -> int:
    return -(-n // 16) * 16


def write_emitted(plan: Plan, output_dir: str | Path, emitted: Emitted | None = None) -> tuple[Path, Emitted]:
    """Write ``<network>_npuplan.tflite`` (``emitted``, or ``plan`` emitted now) into ``output_dir``."""
    emitted = emitted or emit_tflite(plan)
    path = Path(output_dir) / f"{plan.network}_npuplan.tflite"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically({path: emitted.data})
    return path, emitted


MAX_CPU_FALLBACKS = 16


def plan_and_emit(path: str | Path, **options: Any) -> tuple[Plan, Emitted]:
    """Plan ``path`` deployably and emit it; an operator the emitter refuses for a reason the CPU
    avoids (no valid block config) is kept on the CPU and the network planned again, at most
    ``MAX_CPU_FALLBACKS`` times. Raises the ``EmitError`` it cannot avoid."""
    from npuplan.api import plan

    cpu_ops: tuple[int, ...] = ()
    refused: list[str] = []
    while True:
        try:
            planned = plan(path, deployable=True, deploy_cpu_ops=cpu_ops, **options)
        except EmitError as error:  # the refused op cannot go back to the CPU: say why it was refused
            raise EmitError(error.op, f"{error.reason}; refused by the emitter: {refused[-1]}") if refused else error
        try:
            emitted = emit_tflite(planned)
        except EmitError as error:
            if error.cpu_fallback is None or error.cpu_fallback in cpu_ops or len(cpu_ops) >= MAX_CPU_FALLBACKS:
                raise
            cpu_ops += (error.cpu_fallback,)
            refused.append(f"'{error.op}' kept on the CPU ({error.reason})")
            continue
        return planned, replace(emitted, notes=(*emitted.notes, *refused))
