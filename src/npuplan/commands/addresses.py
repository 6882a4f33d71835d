"""Addresses for a plan's buffers until the allocator is wired into ``Plan``.

Live ranges are taken at command granularity from the stream itself (a buffer lives from the first
command that touches it to the last; network inputs from the start, outputs to the end), so rolling
buffers, weight buffers and prefetched slices live exactly as long as the stream needs them. Each
memory area is allocated separately with ``npuplan.memory.allocate``; constants are laid out one
after another above the area's allocated peak.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from npuplan.commands.layout import ALIGN_BYTES, BufferSpec, buffer_specs, round_up
from npuplan.commands.stream import build_command_stream, iter_operands
from npuplan.commands.types import Address, BufferKind, Command, DmaCommand, NpuStripeCommand
from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.lowered import LoweredGraph
from npuplan.memory import LiveRange, allocate
from npuplan.options import TensorAllocator
from npuplan.schedule.types import Schedule


def touched_buffers(command: Command) -> list[str]:
    """Names of the buffers a command reads or writes."""
    names = [o.buffer.name for o in iter_operands(command)]
    if isinstance(command, NpuStripeCommand) and command.weights is not None:
        names.append(command.weights.name)
    if isinstance(command, DmaCommand):
        names += [command.src.name, command.dst.name]
    return names


def buffer_lifetimes(commands: Sequence[Command], lowered: LoweredGraph) -> dict[str, tuple[int, int]]:
    """First and last command index touching each buffer (inputs from 0, outputs to the end)."""
    spans: dict[str, tuple[int, int]] = {}
    for k, command in enumerate(commands):
        for name in touched_buffers(command):
            first, _ = spans.get(name, (k, k))
            spans[name] = (first, k)
    last = max(len(commands) - 1, 0)
    for t in lowered.inputs:
        if t.name in spans:
            spans[t.name] = (0, spans[t.name][1])
    for t in lowered.outputs:
        if t.name in spans:
            spans[t.name] = (spans[t.name][0], last)
    return spans


def plan_addresses(
    schedule: Schedule, lowered: LoweredGraph, arch: Architecture, *,
    allocator: TensorAllocator = TensorAllocator.HILLCLIMB, alignment: int = ALIGN_BYTES,
) -> dict[str, Address]:
    """An ``Address`` for every buffer of ``schedule``'s command stream, per memory area."""
    specs = buffer_specs(schedule, lowered, arch)[0]
    draft = {name: Address(spec.area, 0, spec.size_bytes) for name, spec in specs.items()}
    lifetimes = buffer_lifetimes(build_command_stream(schedule, lowered, arch, draft), lowered)
    return allocate_buffers(specs, lifetimes, allocator=allocator, alignment=alignment)


def allocate_buffers(
    specs: Mapping[str, BufferSpec], lifetimes: Mapping[str, tuple[int, int]], *,
    allocator: TensorAllocator, alignment: int = ALIGN_BYTES,
) -> dict[str, Address]:
    """Allocate the non-constant buffers of each area, then stack the constants above them."""
    out: dict[str, Address] = {}
    areas = sorted({s.area for s in specs.values()}, key=str)
    for area in areas:
        ranges = [
            LiveRange(name, *lifetimes[name], spec.size_bytes, str(area))
            for name, spec in specs.items()
            if spec.area == area and spec.kind is not BufferKind.CONSTANT and name in lifetimes
        ]
        result = allocate(ranges, allocator=allocator, alignment=alignment)
        for r in ranges:
            out[r.name] = Address(area, int(result.offsets[r.name]), specs[r.name].size_bytes)
        top = round_up(result.peak_bytes, alignment)
        for name, spec in specs.items():
            if spec.area == area and spec.kind is BufferKind.CONSTANT:
                out[name] = Address(area, top, spec.size_bytes)
                top += round_up(spec.size_bytes, alignment)
    return out


def area_peaks(addresses: Mapping[str, Address], specs: Mapping[str, BufferSpec]) -> dict[MemArea, int]:
    """Highest end address of the non-constant buffers in each area (bytes)."""
    peaks: dict[MemArea, int] = {}
    for name, address in addresses.items():
        spec = specs.get(name)
        if spec is not None and spec.kind is BufferKind.CONSTANT:
            continue
        peaks[address.area] = max(peaks.get(address.area, 0), address.offset + address.size_bytes)
    return peaks
