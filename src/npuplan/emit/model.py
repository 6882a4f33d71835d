"""The emitted network: the input network with each NPU partition replaced by one ``ethos-u``
custom operator, laid out as Vela lays out its output.

The operator's inputs are, in order: the command stream (the driver payload: header and register
commands), the flash tensor (``read_only``: encoded weights, biases and scales), the scratch tensor
(the arena), the fast scratch tensor (the scratch tensor again unless the fast storage is a memory
of its own), then the partition's input feature maps; its outputs are the partition's outputs.
Every feature map the CPU or the caller sees keeps its planned arena offset in the
``OfflineMemoryAllocation`` metadata, so TensorFlow Lite Micro places it where the command stream
reads and writes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from npuplan.commands.types import Address
from npuplan.errors import EmitError
from npuplan.hw.memory import MemArea
from npuplan.ir.graph import Graph, Model, Op, Tensor
from npuplan.ir.lowered import LoweredGraph, NpuOp, Partition, Placement
from npuplan.ir.types import DataType
from npuplan.records import record

CUSTOM_CODE = "ethos-u"
# Vela's custom options for the ethos-u operator: a FlexBuffer holding the integer 1.
CUSTOM_OPTIONS = b"\x01\x04\x01"
OFFLINE_ALLOCATION = "OfflineMemoryAllocation"


@record(eq=False, slots=False)
class Partitioned:
    """One NPU partition's boundary: the feature maps it reads from outside and writes for outside."""

    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]


def boundary(part: Partition, lowered: LoweredGraph) -> Partitioned:
    """The non-constant tensors ``part`` reads that it does not produce, and the tensors it produces
    that a later op or the network's outputs read."""
    ops = [o for o in part.ops if isinstance(o, NpuOp)]
    produced = {id(o.ofm) for o in ops}
    inputs: dict[int, Tensor] = {}
    for o in ops:
        for t in (o.ifm, o.ifm2):
            if t is not None and not t.is_constant and id(t) not in produced:
                inputs.setdefault(id(t), t)
    members = {id(o) for o in part.ops}
    read_outside = {id(t) for t in lowered.outputs}
    for other in lowered.ops:
        if id(other) in members:
            continue
        reads = (other.ifm, other.ifm2) if isinstance(other, NpuOp) else other.op.inputs
        read_outside.update(id(t) for t in reads if t is not None)
    outputs: dict[int, Tensor] = {}
    for o in ops:
        if id(o.ofm) in read_outside:
            outputs.setdefault(id(o.ofm), o.ofm)
    return Partitioned(tuple(inputs.values()), tuple(outputs.values()))


INT32_MAX = (1 << 31) - 1  # a TFLite tensor's dimensions are int32


def check_declarable(*, flash_bytes: int, scratch_bytes: int, fast_scratch_bytes: int) -> None:
    """``EmitError`` when the flash tensor or a scratch area (bytes) is larger than a TFLite
    tensor's int32 dimension can declare (a plan of a corrupt or oversized model)."""
    for what, size in (("flash tensor", flash_bytes), ("scratch area", scratch_bytes),
                       ("fast scratch area", fast_scratch_bytes)):
        if size > INT32_MAX:
            raise EmitError(None, f"the {what} needs {size} bytes, more than a TFLite tensor can declare ({INT32_MAX})")


def _bytes_tensor(name: str, data: bytes) -> Tensor:
    return Tensor(name, (len(data),), DataType.UINT8, data=np.frombuffer(data, dtype=np.uint8))


def emitted_model(
    lowered: LoweredGraph, payloads: Sequence[bytes], flash: bytes, *, scratch_bytes: int,
    fast_scratch_bytes: int | None, addresses: Mapping[str, Address], arena: MemArea, description: str,
) -> tuple[Model, dict[str, bytes]]:
    """The emitted model and its metadata. ``payloads`` holds one driver payload per NPU partition,
    in order; ``fast_scratch_bytes`` is None when the fast scratch is the scratch tensor."""
    check_declarable(flash_bytes=len(flash), scratch_bytes=scratch_bytes, fast_scratch_bytes=fast_scratch_bytes or 0)
    flash_t = _bytes_tensor("read_only", flash)
    scratch = Tensor("scratch", (max(scratch_bytes, 16),), DataType.UINT8)
    fast = scratch if fast_scratch_bytes is None else Tensor("scratch_fast", (max(fast_scratch_bytes, 16),),
                                                               DataType.UINT8)
    ops: list[Op] = []
    npu_parts = [p for p in lowered.partitions() if p.placement is Placement.NPU]
    if len(npu_parts) != len(payloads):
        raise ValueError(f"{len(payloads)} command streams for {len(npu_parts)} NPU partitions")
    k = 0
    for part in lowered.partitions():
        if part.placement is Placement.CPU:
            ops.extend(o.op for o in part.ops if not isinstance(o, NpuOp))
            continue
        edge = boundary(part, lowered)
        name = "ethos_u_command_stream" if len(payloads) == 1 else f"ethos_u_command_stream_{k}"
        cms = _bytes_tensor(name, payloads[k])
        ops.append(Op(f"CUSTOM:{CUSTOM_CODE}", (cms, flash_t, scratch, fast, *edge.inputs), edge.outputs,
                      {"custom_options": CUSTOM_OPTIONS}, index=len(ops)))
        k += 1
    # The plan keeps variable tensors live as inputs that are also outputs; the file declares them
    # as TFLite does, variable tensors that are neither (the runtime keeps them between invocations).
    inputs, outputs = (tuple(t for t in ts if not t.is_variable) for ts in (lowered.inputs, lowered.outputs))
    graph = _static(Graph(lowered.name or "main", tuple(ops), inputs, outputs))
    offsets = [_offline_offset(t, (scratch, fast), addresses, arena) for t in graph.tensors()]
    plan = np.array([0, 1, len(offsets), *offsets], dtype="<i4").tobytes()
    return (Model(lowered.name, (graph, *lowered.subgraphs), description, lowered.signatures),
            {OFFLINE_ALLOCATION: plan})


def _static(graph: Graph) -> Graph:
    """``graph`` with no shape signature: the command streams run the planned shapes only (a
    dynamic batch planned as 1), so the file declares them static, as Vela's output does."""
    static = {id(t): replace(t, signature=None) for t in graph.tensors() if t.signature is not None}
    if not static:
        return graph

    def swap(ts: tuple[Tensor | None, ...]) -> tuple[Any, ...]:
        return tuple(static.get(id(t), t) if t is not None else None for t in ts)

    ops = tuple(replace(o, inputs=swap(o.inputs), outputs=swap(o.outputs), intermediates=swap(o.intermediates))
                for o in graph.ops)
    return replace(graph, ops=ops, inputs=swap(graph.inputs), outputs=swap(graph.outputs))


def _offline_offset(t: Tensor, scratches: tuple[Tensor, Tensor], addresses: Mapping[str, Address],
                    arena: MemArea) -> int:
    """A tensor's arena offset (-1: TensorFlow Lite Micro places it itself). Both scratch tensors
    sit at 0, as in Vela's output: a Dedicated_Sram platform gives the ethos-u kernel its fast memory
    for the fast scratch (region 2), so the arena's copy is not used."""
    if t is scratches[0] or t is scratches[1]:
        return 0
    if t.is_constant or t.dtype is DataType.RESOURCE:  # a resource handle: the runtime sizes it, as in Vela's output
        return -1
    found = addresses.get(t.name)
    return found.offset if found is not None and found.area == arena else -1
