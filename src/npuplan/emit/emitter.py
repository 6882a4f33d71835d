"""The emitting driver: encode the weights, lay out memory, translate each NPU partition's
commands into a register command stream, and write the model."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import field, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from npuplan.records import record
from npuplan.result import Plan
from npuplan.commands.types import Command, CpuCommand, DmaCommand, NpuStripeCommand, WeightSlice
from npuplan.emit.backend import EmitBackend, backend_api
from npuplan.emit.blocks import Block, resolve_block
from npuplan.emit.layout import DeployLayout, deploy_layout
from npuplan.emit.luts import LutSlots
from npuplan.emit.model import emitted_model
from npuplan.emit.operations import Context, dma_operation, stripe_operations
from npuplan.emit.regions import feature_map_regions
from npuplan.emit.vela import accelerator, quietly
from npuplan.emit.weights import EncodedOp, SliceMemo, encode_op
from npuplan.errors import EmitError, SelfCheckError, ValidationError
from npuplan.io.tflite_write import write_tflite
from npuplan.ir.lowered import BlockType
from npuplan.io.atomic import write_atomically
from npuplan.regstream.sources import SOURCES_METADATA, OperationSource, encode_sources
from npuplan.lowering.deployable import npu_op_reason
from npuplan.schedule.model.types import ScheduledOp
from npuplan.schedule.model.usage import staged_name


@record(slots=False)
class Emitted:
    """The emitted file's bytes and what went into it (sizes in bytes, time in seconds;
    ``step_cpu_seconds``: the CPU seconds of each step, ``STEPS``, for the benchmark)."""

    data: bytes
    command_streams: int
    npu_operations: int
    dma_operations: int
    flash_bytes: int
    scratch_bytes: int
    fast_scratch_bytes: int
    emit_seconds: float
    notes: tuple[str, ...]
    step_cpu_seconds: dict[str, float] = field(default_factory=dict, compare=False)  # timings: not the result


# The emitter's steps: block configs (the backend's npu_find_block_configs), the backend's weight
# codec (npu_encode_weights), the rest of encoding (the weight volumes, the bias/scale records), the
# memory layout, the plan's commands as the interface's operations, the backend's register command
# stream generator and driver payload, the TFLite file, and the self-check replay of its streams.
STEPS = ("blocks", "codec", "encode", "layout", "operations", "generate", "model", "self_check")


@record(eq=False, frozen=False, slots=False)
class EmitMemo:
    """What one model's emits can share (``plan_and_emit`` emits again after a CPU fallback): the
    valid block configs of the ops probed and the encodings of the weight slices seen."""

    blocks: dict[tuple[object, ...], list[Block]] = field(default_factory=dict)
    slices: SliceMemo = field(default_factory=SliceMemo)


class _Clock:
    """CPU seconds (``time.process_time``) per step, accumulated between laps."""

    def __init__(self) -> None:
        self.steps = dict.fromkeys(STEPS, 0.0)
        self.last = time.process_time()

    def lap(self, step: str, *, inner: tuple[str, float] | None = None) -> None:
        """End ``step``; ``inner``: a step timed inside it and how long, counted apart."""
        now = time.process_time()
        self.steps[step] += now - self.last
        self.last = now
        if inner is not None:
            self.steps[step] -= inner[1]
            self.steps[inner[0]] += inner[1]


def _check(plan: Plan) -> None:
    for op in plan.lowered.npu_ops:
        reason = npu_op_reason(op)
        if reason is not None:
            raise EmitError(op.name, f"{reason} (plan with --emit-tflite, which keeps such ops on the CPU)")


def _cpu_only_note(plan: Plan) -> tuple[str, ...]:
    """What the file is when no operator runs on the NPU: every operator left for the CPU, as Vela
    writes such a network (an LSTM alone, a float network), with the first reason."""
    if plan.lowered.npu_ops:
        return ()
    first = plan.lowered.cpu_ops[0] if plan.lowered.cpu_ops else None
    why = f" ('{first.name}': {first.reason})" if first is not None else ""
    return (f"no operator runs on the NPU in the deployable plan{why}: the file has no command stream and "
            "keeps every operator for the CPU, as Vela writes such a network",)


def _blocks(api: ModuleType, acc: object, plan: Plan,
            memo: dict[tuple[object, ...], list[Block]]) -> tuple[dict[str, Block], int]:
    """Each NPU op's emitted block config and how many differ from the plan's."""
    out: dict[str, Block] = {}
    changed = 0
    for sop in plan.schedule.ops:
        b = sop.block_config.ofm_block
        planned = (b.height, b.width, b.depth)
        out[sop.name] = resolve_block(api, acc, sop.op, planned, part_kernel_first=_part_kernel(sop), memo=memo,
                                      hardware=plan.arch.accelerator)
        changed += out[sop.name] != planned
    return out, changed


def _part_kernel(sop: ScheduledOp) -> bool:
    return sop.op.block_type is BlockType.CONV and bool(sop.block_config.is_partkernel)


def _encoded(api: ModuleType, acc: object, plan: Plan, blocks: dict[str, Block], memo: SliceMemo) -> list[EncodedOp]:
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
                             block_depth=blocks[sop.name][2], memo=memo, ncores=plan.arch.accelerator.cores))
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


@contextmanager
def _cycle_collection_paused() -> Iterator[None]:
    """Python's cycle collector off while the emitter runs: it allocates many short-lived objects
    (the API's operations, the replay's events), and each full collection would walk the whole
    plan again (a sixth of resnet50's emit). At the end the youngest generation, what the emit
    made and kept, is collected (its cyclic garbage freed; the counts that would start a full
    collection on the next allocation reset) and the collector's state restored, whatever happens."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
            gc.collect(0)


def emit_tflite(plan: Plan, *, memo: EmitMemo | None = None, backend: EmitBackend = EmitBackend.NPUPLAN) -> Emitted:
    """``plan`` as a deployable TFLite file. Raises ``EmitError`` (one line) for what it cannot emit.
    ``memo`` holds what earlier emits of the same model found (block configs, encoded slices);
    ``backend`` implements the weight codec, block rules and register command stream."""
    with _cycle_collection_paused():
        return _emit(plan, memo, backend)


def _emit(plan: Plan, memo: EmitMemo | None, backend: EmitBackend) -> Emitted:
    started = time.perf_counter()
    clock = _Clock()
    memo = EmitMemo() if memo is None else memo
    api = backend_api(backend)
    _check(plan)
    acc = accelerator(api, plan.arch.accelerator.name)
    blocks, changed = _blocks(api, acc, plan, memo.blocks)
    clock.lap("blocks")
    codec = memo.slices.codec_cpu_seconds
    encoded = _encoded(api, acc, plan, blocks, memo.slices)
    clock.lap("encode", inner=("codec", memo.slices.codec_cpu_seconds - codec))
    layout = deploy_layout(plan, encoded)
    ctx = _context(api, plan, layout, encoded, blocks)
    clock.lap("layout")
    payloads: list[bytes] = []
    sources: list[list[OperationSource]] = []  # per stream, the source operators of each NPU operation
    npu_count = dma_count = 0
    luts = LutSlots(api, plan.arch.accelerator, layout.lut_offsets)
    for group in _groups(plan.commands):
        operations, npus, dmas = _operations(ctx, group, luts, sources)
        npu_count, dma_count = npu_count + npus, dma_count + dmas
        clock.lap("operations")
        payloads.append(_payload(api, acc, operations, len(payloads)))
        clock.lap("generate")
    arena, fast = plan.arch.arena_area, plan.arch.fast_area
    scratch = _round16(layout.area_peaks.get(arena, 0))
    fast_bytes = _round16(layout.area_peaks.get(fast, 0)) if fast != arena else 0
    model, metadata = emitted_model(
        plan.lowered, payloads, layout.flash, scratch_bytes=scratch,
        fast_scratch_bytes=fast_bytes if fast != arena else None, addresses=layout.addresses, arena=arena,
        description="npuplan deployable plan")
    data = write_tflite(model, metadata=metadata | {SOURCES_METADATA: encode_sources(sources)})
    clock.lap("model")
    _self_check(data)
    clock.lap("self_check")
    notes = _cpu_only_note(plan) + layout.notes + _dynamic_note(plan)
    if changed:
        notes += (f"{changed} of {len(blocks)} ops use the nearest block config the hardware accepts (the "
                  f"{backend} backend's rules) instead of the plan's",)
    return Emitted(data, len(payloads), npu_count, dma_count, len(layout.flash), scratch, fast_bytes,
                   time.perf_counter() - started, notes, clock.steps)


def _dynamic_note(plan: Plan) -> tuple[str, ...]:
    """What the file declares of a network exported with dynamic dimensions."""
    dynamic = [t for t in plan.lowered.inputs if t.signature is not None]
    if not dynamic:
        return ()
    shapes = ", ".join(f"'{t.name}' {list(t.signature or ())} as {list(t.shape)}" for t in dynamic)
    return (f"dynamic dimensions are planned and written static (the command streams run these shapes only): "
            f"{shapes}",)


def _operations(ctx: Context, group: list[Command], luts: LutSlots,
                sources: list[list[OperationSource]]) -> tuple[list[Any], int, int]:
    """One NPU partition's commands as the API's operations (with the lookup-table loads they
    need); how many NPU and DMA operations. Appends to ``sources`` the partition's list of the
    source operators of each NPU operation, in order (``NpuOp.source_index``, ``lut_source_index``)."""
    operations: list[Any] = []
    sources.append([])
    npus = dmas = 0
    luts.reset()
    for c in group:
        if isinstance(c, NpuStripeCommand):
            if c.ofm.box.is_empty():  # rows past a CONCATENATION copy's box: nothing to write
                continue
            op = ctx.ops[c.op]
            loads, slot = luts.load(op)
            stripes = stripe_operations(ctx, c, lut_index=slot)
            operations.extend(loads + stripes)
            sources[-1].extend([OperationSource(op.source_index, op.lut_source_index)] * len(stripes))
            npus += len(stripes)
            dmas += len(loads)
        elif isinstance(c, DmaCommand):
            operations.append(dma_operation(ctx, c))
            dmas += 1
    return operations, npus, dmas


def _payload(api: ModuleType, acc: object, operations: list[Any], partition: int) -> bytes:
    """The driver payload of one NPU partition's operations: Vela's register command stream."""
    try:
        stream = quietly(api.npu_generate_register_command_stream, operations, acc)
    except Exception as error:  # noqa: BLE001 - the API's own checks (alignment, lengths, shapes)
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise EmitError(None, f"the register command stream generator rejected NPU partition "
                        f"{partition}: {detail}") from None
    return bytes(quietly(api.npu_create_driver_payload, stream, acc))


def _self_check(data: bytes) -> None:
    """Replay the file's register command streams (``regstream.validate_tflite``) before anyone
    can deploy it: a file the validator rejects is refused in one line, never written."""
    from npuplan.regstream import validate_tflite

    try:
        validate_tflite(data)
    except ValidationError as error:
        raise SelfCheckError(None, f"the emitted file fails npuplan's own validation, so it is not written "
                             f"({error}); this is a bug in npuplan: plan without --emit-tflite, and report it") from None


def _round16(n: int) -> int:
    return -(-n // 16) * 16


def write_emitted(plan: Plan, output_dir: str | Path, emitted: Emitted | None = None) -> tuple[Path, Emitted]:
    """Write ``<network>_npuplan.tflite`` (``emitted``, or ``plan`` emitted now) into ``output_dir``."""
    emitted = emitted or emit_tflite(plan)
    path = Path(output_dir) / f"{plan.network}_npuplan.tflite"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically({path: emitted.data})
    return path, emitted
