"""The differential check of the native backend against Vela's API: capture the operations the
emitter builds for a model, run Vela's generator and the native one on the same objects, and
compare the streams (``npuplan.regstream.compare``). A harness for tests (``tests/unit/emit/native``)
and ``bench/native_stream_compare.py``, kept out of the package; needs the deploy extra."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npuplan.api import plan_and_emit
from npuplan.emit.backend import EmitBackend
from npuplan.emit import blocks, emitter
from npuplan.emit.vela import quietly
from npuplan.regstream.events import OUTPUT_STAGE

# The output-stage registers (``regstream.events.OUTPUT_STAGE``) the native backend's output_stage
# module sets, compared apart from the rest of a stream (the broadcast flag is compared with it)
SET_BY_OUTPUT_STAGE = tuple(r for r in OUTPUT_STAGE if r != "IFM2_BROADCAST")


@dataclass(frozen=True)
class Partition:
    """One NPU partition's operations as the emitter built them, and the API's accelerator."""

    operations: list[Any]
    accelerator: Any


@dataclass(frozen=True)
class Probe:
    """An operation the emitter asked Vela's ``npu_find_block_configs`` about, and its answer
    (height, width, depth per block)."""

    operation: Any
    accelerator: Any
    blocks: list[tuple[int, int, int]]


@contextmanager
def probing(into: list[Probe]) -> Iterator[None]:
    """Record the block-config probes the emitter makes (``emit.blocks``) into ``into``."""
    original = blocks.quietly

    def record(call: Any, *args: Any) -> Any:
        found = original(call, *args)
        if getattr(call, "__name__", "") == "npu_find_block_configs":
            into.append(Probe(args[0], args[1], [(int(b.height), int(b.width), int(b.depth)) for b in found]))
        return found

    blocks.quietly = record  # type: ignore[assignment]
    try:
        yield
    finally:
        blocks.quietly = original  # type: ignore[assignment]


@contextmanager
def _recording(into: list[Partition]) -> Iterator[None]:
    """Record the partitions of each emit into ``into`` (emptied when an emit starts again)."""
    payload, emit = emitter._payload, emitter.emit_tflite

    def record(api: Any, acc: Any, operations: list[Any], partition: int) -> bytes:
        into.append(Partition(list(operations), acc))
        return payload(api, acc, operations, partition)

    def restart(*args: Any, **kwargs: Any) -> Any:
        into.clear()
        return emit(*args, **kwargs)

    emitter._payload, emitter.emit_tflite = record, restart  # type: ignore[assignment]
    try:
        yield
    finally:
        emitter._payload, emitter.emit_tflite = payload, emit  # type: ignore[assignment]


def captured(path: str | Path, **options: Any) -> list[Partition]:
    """The partitions of the emit ``plan_and_emit(path, **options)`` keeps (after a CPU fallback
    it emits again: the earlier attempt's partitions are dropped)."""
    seen: list[Partition] = []
    with _recording(seen):
        plan_and_emit(path, backend=EmitBackend.VELA, **options)  # the reference's objects: Vela's
    return seen


@dataclass(frozen=True)
class StreamPair:
    """Both generators' words for one partition and their CPU seconds."""

    vela: list[int]
    native: list[int]
    vela_seconds: float
    native_seconds: float


def both_streams(partition: Partition) -> StreamPair:
    """Vela's and the native generator's words for ``partition``."""
    from npuplan.emit.native.api import generate_register_command_stream
    from npuplan.emit.vela import vela_api

    api = vela_api()
    start = time.process_time()
    vela = quietly(api.npu_generate_register_command_stream, partition.operations, partition.accelerator)
    middle = time.process_time()
    native = generate_register_command_stream(partition.operations, partition.accelerator)
    end = time.process_time()
    return StreamPair(list(vela), native, middle - start, end - middle)


def vela_output_stages(operations: list[Any], vela_words: list[int]) -> dict[int, dict[str, int]]:
    """Per block operation (by ``id``): the output-stage registers' values when Vela's stream runs
    it (what a complete ``output_stage_registers`` must give, up to registers left unchanged)."""
    from npuplan.regstream.compare import commands

    snapshots = [regs for name, _, regs in commands(vela_words) if name in _BLOCK_COMMANDS]
    blocks = [op for op in operations if op.op_type.name != "Dma"]
    return {id(op): {k: v for k, v in regs.items() if k in SET_BY_OUTPUT_STAGE} for op, regs in zip(blocks, snapshots)}


_BLOCK_COMMANDS = frozenset({"NPU_OP_CONV", "NPU_OP_DEPTHWISE", "NPU_OP_POOL", "NPU_OP_ELEMENTWISE"})


@contextmanager
def vela_output_stage(stages: dict[int, dict[str, int]]) -> Iterator[None]:
    """The native generator with ``output_stage_registers`` answering from ``stages`` (Vela's
    values, ``vela_output_stages``): its stream must then be Vela's word for word."""
    from npuplan.emit.native import generator

    original = generator.output_stage_registers

    def from_vela(operation: Any, accelerator_name: str) -> dict[str, int]:
        return stages.get(id(operation), {})

    generator.output_stage_registers = from_vela  # type: ignore[assignment]
    try:
        yield
    finally:
        generator.output_stage_registers = original  # type: ignore[assignment]


def with_vela_output_stage(partition: Partition, vela_words: list[int]) -> list[int]:
    """The native generator's words for ``partition`` given Vela's output-stage values."""
    from npuplan.emit.native.api import generate_register_command_stream

    with vela_output_stage(vela_output_stages(partition.operations, vela_words)):
        return generate_register_command_stream(partition.operations, partition.accelerator)
