"""Addresses for every buffer of a plan's command stream, from the chosen tensor allocator.

Live ranges are taken at command granularity from the stream itself (a buffer lives from the first
command that touches it to the last; network inputs from the start, outputs to the end), so rolling
buffers, weight buffers and prefetched slices live exactly as long as the stream needs them. Each
memory area is allocated separately with ``npuplan.memory.allocate``; constants are laid out one
after another above the area's allocated peak. Tensors a CPU operator touches (and network inputs,
which the CPU provides) are aligned to the CPU tensor alignment, as Vela does.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from npuplan.commands.layout import BufferSpec, buffer_specs
from npuplan.commands.stream import build_command_stream, iter_operands, readdressed
from npuplan.commands.types import Address, BufferKind, Command, DmaCommand, NpuStripeCommand
from npuplan.cost.weights import WeightEncodings
from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.lowered import CpuOp, LoweredGraph
from npuplan.memory import Allocation, PlacementMemo, TensorUse, allocate, build_live_ranges
from npuplan.options import TensorAllocator
from npuplan.records import record
from npuplan.schedule.model.types import Schedule
from npuplan.units import ALIGN_BYTES, round_up


@record(eq=False)
class AddressPlan:
    """Every buffer's ``Address`` and, per memory area, the allocation of its non-constant buffers.

    ``allocations[area].peak_bytes`` is the allocated peak address (Vela's ``*_memory_used`` before
    constants), ``lower_bound_bytes`` the most bytes live at once; ``allocation_seconds`` the time
    spent in the allocator itself.
    """

    addresses: Mapping[str, Address]
    allocations: Mapping[MemArea, Allocation]
    allocator: TensorAllocator
    cpu_tensor_alignment_bytes: int = ALIGN_BYTES
    allocation_seconds: float = 0.0

    def peak_bytes(self, area: MemArea) -> int:
        """Allocated peak address of ``area``'s non-constant buffers (0 when it holds none)."""
        found = self.allocations.get(area)
        return 0 if found is None else found.peak_bytes

    def lower_bound_bytes(self, area: MemArea) -> int:
        """Most bytes of ``area``'s non-constant buffers live at one time."""
        found = self.allocations.get(area)
        return 0 if found is None else found.lower_bound_bytes


def touched_buffers(command: Command) -> list[str]:
    """Names of the buffers a command reads or writes."""
    names = [o.buffer.name for o in iter_operands(command)]
    if isinstance(command, NpuStripeCommand) and command.weights is not None:
        names.append(command.weights.name)
    if isinstance(command, DmaCommand):
        names += [command.src.name, command.dst.name]
    return names


def buffer_lifetimes(
    commands: Sequence[Command], inputs: Sequence[str], outputs: Sequence[str],
) -> dict[str, tuple[int, int]]:
    """First and last command index touching each buffer (``inputs`` from 0, ``outputs`` to the end);
    a DMA fetched ahead of its op holds its destination longer (``name_lifetimes``)."""
    return name_lifetimes(
        [touched_buffers(c) for c in commands], inputs, outputs,
        stripes=[isinstance(c, NpuStripeCommand) for c in commands],
        ahead=[c.dst.name if isinstance(c, DmaCommand) and c.ahead else None for c in commands])


def name_lifetimes(
    touched: Sequence[Sequence[str]], inputs: Sequence[str], outputs: Sequence[str], *,
    stripes: Sequence[bool] = (), ahead: Sequence[str | None] = (),
) -> dict[str, tuple[int, int]]:
    """``buffer_lifetimes`` of a stream given as the buffer names each command touches, whether
    each command is an NPU stripe (``stripes``) and the destination of each DMA fetched ahead of its
    op (``ahead``, None for other commands; both empty: none is). The one rule of when a buffer is
    live, for the allocator and the report alike: from the first command touching it to the last;
    a DMA fetched ahead holds its destination from the last stripe before it, which it runs under;
    ``inputs`` from the start, ``outputs`` to the end."""
    spans: dict[str, tuple[int, int]] = {}
    last_stripe = -1
    for k, names in enumerate(touched):
        held = ahead[k] if k < len(ahead) else None
        if held is not None and last_stripe >= 0:
            first, end = spans.get(held, (last_stripe, last_stripe))
            spans[held] = (min(first, last_stripe), max(end, last_stripe))
        for name in names:
            first, _ = spans.get(name, (k, k))
            spans[name] = (first, k)
        if k < len(stripes) and stripes[k]:
            last_stripe = k
    last = max(len(touched) - 1, 0)
    for name in inputs:
        if name in spans:
            spans[name] = (0, spans[name][1])
    for name in outputs:
        if name in spans:
            spans[name] = (spans[name][0], last)
    return spans


def graph_lifetimes(commands: Sequence[Command], lowered: LoweredGraph) -> dict[str, tuple[int, int]]:
    """``buffer_lifetimes`` with the network inputs and outputs of ``lowered``."""
    return buffer_lifetimes(commands, [t.name for t in lowered.inputs], [t.name for t in lowered.outputs])


def cpu_tensor_names(lowered: LoweredGraph) -> frozenset[str]:
    """Tensors a CPU operator reads or writes, and the network inputs (the CPU writes those)."""
    names = {t.name for t in lowered.inputs}
    for op in lowered.ops:
        if isinstance(op, CpuOp):
            names.update(t.name for t in (*op.op.inputs, *op.op.outputs) if t is not None)
    return frozenset(names)


def allocate_plan(
    schedule: Schedule, lowered: LoweredGraph, arch: Architecture, *,
    allocator: TensorAllocator = TensorAllocator.HILLCLIMB, cpu_tensor_alignment: int = ALIGN_BYTES,
) -> AddressPlan:
    """Addresses for every buffer of ``schedule``'s command stream, per memory area."""
    return addressed_stream(schedule, lowered, arch, allocator=allocator,
                            cpu_tensor_alignment=cpu_tensor_alignment)[0]


def addressed_stream(
    schedule: Schedule, lowered: LoweredGraph, arch: Architecture, *,
    allocator: TensorAllocator = TensorAllocator.HILLCLIMB, cpu_tensor_alignment: int = ALIGN_BYTES,
    encodings: WeightEncodings | None = None, placements: PlacementMemo | None = None,
) -> tuple[AddressPlan, tuple[Command, ...]]:
    """The addresses (``allocate_plan``) and the command stream that uses them; ``encodings`` is
    the plan's weight-encoding memo (see ``buffer_specs``), ``placements`` its HillClimb memo."""
    addressing, drafted = drafted_stream(schedule, lowered, arch, allocator=allocator,
                                         cpu_tensor_alignment=cpu_tensor_alignment, encodings=encodings,
                                         placements=placements)
    return addressing, readdressed(drafted, addressing.addresses)


def drafted_stream(
    schedule: Schedule, lowered: LoweredGraph, arch: Architecture, *,
    allocator: TensorAllocator = TensorAllocator.HILLCLIMB, cpu_tensor_alignment: int = ALIGN_BYTES,
    encodings: WeightEncodings | None = None, placements: PlacementMemo | None = None,
) -> tuple[AddressPlan, tuple[Command, ...]]:
    """``addressed_stream``'s addresses and its command stream before they are applied (every
    buffer at offset 0): ``readdressed(stream, plan.addresses)`` is the stream, built only for the
    plan that is kept."""
    layouts = buffer_specs(schedule, lowered, arch, encodings=encodings)
    specs = layouts[0]
    draft = {name: Address(spec.area, 0, spec.size_bytes) for name, spec in specs.items()}
    drafted = build_command_stream(schedule, lowered, arch, draft, layouts=layouts)  # for the lifetimes
    addressing = allocate_schedule_buffers(schedule, lowered, specs, graph_lifetimes(drafted, lowered),
                                           allocator=allocator, cpu_tensor_alignment=cpu_tensor_alignment,
                                           placements=placements)
    return addressing, drafted


def allocate_schedule_buffers(
    schedule: Schedule, lowered: LoweredGraph, specs: Mapping[str, BufferSpec],
    lifetimes: Mapping[str, tuple[int, int]], *, allocator: TensorAllocator, cpu_tensor_alignment: int = ALIGN_BYTES,
    placements: PlacementMemo | None = None,
) -> AddressPlan:
    """``allocate_buffers`` with the CPU tensors of ``lowered`` aligned and ``schedule``'s aliases."""
    alignments = {name: cpu_tensor_alignment for name in cpu_tensor_names(lowered)}
    return allocate_buffers(specs, lifetimes, allocator=allocator, alignments=alignments,
                            cpu_tensor_alignment=cpu_tensor_alignment, aliases=schedule.buffer_aliases,
                            placements=placements)


def plan_addresses(
    schedule: Schedule, lowered: LoweredGraph, arch: Architecture, *,
    allocator: TensorAllocator = TensorAllocator.HILLCLIMB, alignment: int = ALIGN_BYTES,
) -> dict[str, Address]:
    """An ``Address`` for every buffer of ``schedule``'s command stream (see ``allocate_plan``)."""
    return dict(allocate_plan(schedule, lowered, arch, allocator=allocator, cpu_tensor_alignment=alignment).addresses)


def allocate_buffers(
    specs: Mapping[str, BufferSpec], lifetimes: Mapping[str, tuple[int, int]], *,
    allocator: TensorAllocator, alignments: Mapping[str, int] | None = None,
    cpu_tensor_alignment: int = ALIGN_BYTES, aliases: Sequence[tuple[str, str]] = (),
    placements: PlacementMemo | None = None,
) -> AddressPlan:
    """Allocate the non-constant buffers of each area, then stack the constants above them.

    ``alignments`` gives buffers that need more than the 16-byte default (CPU tensors).
    ``aliases`` are ``(ofm, ifm)`` pairs of feature maps given one buffer (an elementwise op writing
    over an input that dies there); pairs in different areas keep their own buffers. ``placements``
    is the plan's HillClimb memo.
    """
    extra = alignments or {}
    out: dict[str, Address] = {}
    allocations: dict[MemArea, Allocation] = {}
    seconds = 0.0
    for area in sorted({s.area for s in specs.values()}, key=str):
        uses = [
            TensorUse(name, *lifetimes[name], spec.size_bytes, str(area), extra.get(name, ALIGN_BYTES))
            for name, spec in specs.items()
            if spec.area == area and spec.kind is not BufferKind.CONSTANT and name in lifetimes
        ]
        names = {u.tensor for u in uses}
        merged = build_live_ranges(uses, aliases=[p for p in aliases if p[0] in names and p[1] in names])
        started = time.perf_counter()
        result = allocate(list(merged.ranges), allocator=allocator, alignment=ALIGN_BYTES, memo=placements)
        seconds += time.perf_counter() - started
        if uses:
            allocations[area] = result
        for name, offset in merged.tensor_offsets(result.offsets).items():
            out[name] = Address(area, int(offset), specs[name].size_bytes)
        top = round_up(result.peak_bytes, ALIGN_BYTES)
        for name, spec in specs.items():
            if spec.area == area and spec.kind is BufferKind.CONSTANT:
                out[name] = Address(area, top, spec.size_bytes)
                top += round_up(spec.size_bytes, ALIGN_BYTES)
    return AddressPlan(MappingProxyType(out), MappingProxyType(allocations), allocator,
                       cpu_tensor_alignment, seconds)
