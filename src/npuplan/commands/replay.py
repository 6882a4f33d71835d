"""Replay a command stream over a model of each memory area and report every violation.

Checks: every read finds the data it expects, written and not overwritten since (feature-map rows,
rolling-buffer rows, weight slices); every access stays inside its buffer; no two buffers that are
live at the same time share a byte; SRAM stays within its size; every network output is completely
written. Violations are data; ``validate_plan`` raises ``ValidationError`` naming the first one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from npuplan._compat import StrEnum
from npuplan.commands.addresses import allocate_plan, buffer_lifetimes
from npuplan.commands.contents import AreaContents, Label
from npuplan.commands.context import StreamContext, stream_context
from npuplan.commands.stream import build_command_stream
from npuplan.commands.types import (
    Address,
    BufferKind,
    BufferRef,
    Command,
    CpuCommand,
    DmaCommand,
    NpuStripeCommand,
    Operand,
)
from npuplan.errors import ValidationError
from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.lowered import LoweredGraph
from npuplan.ir.shape import Shape4D, same_element_order
from npuplan.records import record


class ViolationKind(StrEnum):
    MISSING_DATA = "missing_data"  # read of bytes never written
    OVERWRITTEN = "overwritten"  # read of bytes that now hold other data
    NOT_PRODUCED = "not_produced"  # read of tensor elements no command has written
    OUT_OF_BUFFER = "out_of_buffer"  # access outside its buffer's reserved bytes
    OVERLAP = "overlap"  # two live buffers share bytes
    AREA_OVERFLOW = "area_overflow"  # a buffer ends beyond its memory area's size
    INCOMPLETE_OUTPUT = "incomplete_output"  # a network output not completely written
    UNKNOWN_BUFFER = "unknown_buffer"  # a command addresses a buffer the allocation lacks


@record
class Violation:
    """One broken invariant: at ``command_index`` (-1: after the stream), on ``tensor``."""

    kind: ViolationKind
    command_index: int
    tensor: str
    detail: str

    @property
    def message(self) -> str:
        where = "after the last command" if self.command_index < 0 else f"command {self.command_index}"
        return f"{where}: {self.kind} on '{self.tensor}': {self.detail}"


class _Replay:
    """Mutable replay state, private to one ``validate`` call."""

    def __init__(self, context: StreamContext, addresses: Mapping[str, Address]) -> None:
        self.context = context
        self.addresses = addresses
        self.areas: dict[MemArea, AreaContents] = {}
        self.written: dict[str, np.ndarray] = {}
        self.found: list[Violation] = []
        self.index = -1

    def area(self, area: MemArea) -> AreaContents:
        return self.areas.setdefault(area, AreaContents())

    def report(self, kind: ViolationKind, tensor: str, detail: str) -> None:
        self.found.append(Violation(kind, self.index, tensor, detail))

    # ---------------------------------------------------------------- byte ranges of operands

    def row_ranges(self, ref: BufferRef, content: str, box: Any) -> Iterator[tuple[int, int, Label, str]]:
        """Byte ranges ``(lo, hi, label, rows text)`` that hold the rows of ``box``."""
        base = ref.address.offset + ref.base_bytes
        rb = ref.row_bytes
        (n0, h0, _, _), (n1, h1, _, _) = box.start, box.end
        if ref.rows is None:
            height = self._height(content)
            for n in range(n0, n1):
                lo = base + (n * height + h0) * rb
                yield lo, lo + (h1 - h0) * rb, (content, base), f"rows {h0}..{h1 - 1}"
            return
        r = h0
        while r < h1:
            lap, slot = divmod(r, ref.rows)
            stop = min(h1, (lap + 1) * ref.rows)
            lo = base + slot * rb
            yield lo, lo + (stop - r) * rb, (content, base - lap * ref.rows * rb), f"rows {r}..{stop - 1}"
            r = stop

    def _height(self, tensor: str) -> int:
        shape = self.context.shapes.get(tensor)
        return shape[1] if shape else 1

    def inside(self, ref: BufferRef, lo: int, hi: int, tensor: str) -> bool:
        known = self.addresses.get(ref.name)
        if known is None or known != ref.address:
            self.report(ViolationKind.UNKNOWN_BUFFER, tensor,
                        f"buffer '{ref.name}' at {ref.address} is not in the allocation")
            return False
        a = ref.address
        if lo < a.offset or hi > a.offset + a.size_bytes:
            self.report(ViolationKind.OUT_OF_BUFFER, tensor,
                        f"bytes {lo}..{hi - 1} outside buffer '{ref.name}' ({a.area} {a.offset}..{a.offset + a.size_bytes - 1})")
            return False
        return True

    # ---------------------------------------------------------------- reads and writes

    def read_operand(self, operand: Operand) -> None:
        self._check_produced(operand)
        contents = self.area(operand.buffer.address.area)
        for lo, hi, label, rows in self.row_ranges(operand.buffer, operand.tensor, operand.box):
            if not self.inside(operand.buffer, lo, hi, operand.tensor):
                return
            bad = contents.mismatch(lo, hi, label)
            if bad is not None:
                self._report_read(operand.tensor, rows, bad)
                return

    def _report_read(self, tensor: str, what: str, bad: tuple[int, int, Label | None]) -> None:
        lo, hi, held = bad
        if held is None:
            self.report(ViolationKind.MISSING_DATA, tensor, f"{what}: bytes {lo}..{hi - 1} were never written")
        else:
            self.report(ViolationKind.OVERWRITTEN, tensor, f"{what}: bytes {lo}..{hi - 1} now hold '{held[0]}'")

    def _check_produced(self, operand: Operand) -> None:
        mask = self.written.get(operand.tensor)
        if mask is None:
            return
        region = mask[tuple(slice(s, e) for s, e in zip(operand.box.start, operand.box.end))]
        if not region.all():
            missing = np.argwhere(~region)[0] + np.array(operand.box.start)
            self.report(ViolationKind.NOT_PRODUCED, operand.tensor,
                        f"element {tuple(int(v) for v in missing)} of box {operand.box.start}..{operand.box.end} was never written")

    def write_operand(self, operand: Operand) -> None:
        contents = self.area(operand.buffer.address.area)
        for lo, hi, label, _ in self.row_ranges(operand.buffer, operand.tensor, operand.box):
            if self.inside(operand.buffer, lo, hi, operand.tensor):
                contents.write(lo, hi, label)
        mask = self._mask(operand.tensor)
        if mask is not None:
            mask[tuple(slice(s, e) for s, e in zip(operand.box.start, operand.box.end))] = True

    def _mask(self, tensor: str) -> np.ndarray | None:
        if tensor not in self.written:
            shape = self.context.shapes.get(tensor)
            if shape is None:
                return None
            self.written[tensor] = np.zeros(shape, dtype=bool)
        return self.written[tensor]

    def read_weights(self, command: NpuStripeCommand) -> None:
        ref, piece = command.weights, command.weight_slice
        if ref is None or piece is None:
            return
        lo = ref.address.offset + ref.base_bytes
        hi = lo + piece.size_bytes
        what = f"weight slice {piece.index} (depth {piece.depth_start}..{piece.depth_end - 1})"
        if not self.inside(ref, lo, hi, command.weights_tensor):
            return
        bad = self.area(ref.address.area).mismatch(lo, hi, (command.weights_tensor, lo - piece.stream_offset_bytes))
        if bad is not None:
            self._report_read(command.weights_tensor, what, bad)

    def dma(self, command: DmaCommand) -> None:
        size = command.size_bytes
        src_lo, dst_lo = command.src_address, command.dst_address
        if not (self.inside(command.src, src_lo, src_lo + size, command.tensor)
                and self.inside(command.dst, dst_lo, dst_lo + size, command.tensor)):
            return
        pieces = self.area(command.src_area).pieces(src_lo, src_lo + size)
        dst = self.area(command.dst_area)
        for lo, hi, label in pieces:
            if label is None:
                self.report(ViolationKind.MISSING_DATA, command.tensor,
                            f"DMA source bytes {lo}..{hi - 1} were never written")
                continue
            shift = dst_lo - src_lo
            dst.write(lo + shift, hi + shift, (label[0], label[1] + shift))

    # ---------------------------------------------------------------- driver

    def preload(self, commands: Sequence[Command]) -> None:
        """Constants and network inputs hold their data before the first command."""
        inputs = set(self.context.inputs)
        seen: set[str] = set()
        for command in commands:
            for ref, tensor in _refs(command):
                if ref.name in seen:
                    continue
                seen.add(ref.name)
                a = ref.address
                if ref.kind is BufferKind.CONSTANT:
                    self.area(a.area).write(a.offset, a.offset + a.size_bytes, (ref.name, a.offset))
                    self._fill(tensor)
                elif tensor in inputs and ref.kind is BufferKind.FEATURE_MAP:
                    self.area(a.area).write(a.offset, a.offset + a.size_bytes, (tensor, a.offset))
                    self._fill(tensor)

    def _fill(self, tensor: str) -> None:
        mask = self._mask(tensor)
        if mask is not None:
            mask[...] = True

    def run(self, commands: Sequence[Command]) -> None:
        self.preload(commands)
        for k, command in enumerate(commands):
            self.index = k
            if isinstance(command, DmaCommand):
                self.dma(command)
            elif isinstance(command, NpuStripeCommand):
                for operand in (command.ifm, command.ifm2):
                    if operand is not None:
                        self.read_operand(operand)
                self.read_weights(command)
                self.write_operand(command.ofm)
            elif isinstance(command, CpuCommand):
                for operand in command.inputs:
                    self.read_operand(operand)
                for operand in command.outputs:
                    self.write_operand(operand)
        self.index = -1
        for name in self.context.outputs:
            mask = self.written.get(name)
            if mask is None or not mask.all():
                count = int(mask.size - mask.sum()) if mask is not None else int(np.prod(self.context.shapes.get(name, (1,))))
                self.report(ViolationKind.INCOMPLETE_OUTPUT, name, f"{count} elements never written")


def _refs(command: Command) -> Iterator[tuple[BufferRef, str]]:
    if isinstance(command, DmaCommand):
        yield command.src, command.tensor
        yield command.dst, command.tensor
        return
    operands: tuple[Operand | None, ...]
    if isinstance(command, NpuStripeCommand):
        operands = (command.ifm, command.ifm2, command.ofm)
        if command.weights is not None:
            yield command.weights, command.weights_tensor
    else:
        operands = (*command.inputs, *command.outputs)
    for o in operands:
        if o is not None:
            yield o.buffer, o.tensor


def _static_checks(
    commands: Sequence[Command], context: StreamContext, addresses: Mapping[str, Address],
    limits: Mapping[MemArea, int],
) -> list[Violation]:
    """Area sizes, then overlaps between buffers live at the same time (by command index)."""
    lifetimes = buffer_lifetimes(commands, context.inputs, context.outputs)
    constant = {ref.name for c in commands for ref, _ in _refs(c) if ref.kind is BufferKind.CONSTANT}
    found: list[Violation] = []
    for name, (first, _) in sorted(lifetimes.items(), key=lambda kv: kv[1]):
        a = addresses.get(name)
        limit = None if a is None else limits.get(a.area)
        if a is not None and limit is not None and name not in constant and a.offset + a.size_bytes > limit:
            found.append(Violation(ViolationKind.AREA_OVERFLOW, first, name,
                                   f"bytes {a.offset}..{a.offset + a.size_bytes - 1} exceed the {limit}-byte {a.area}"))
    live = sorted((span, name) for name, span in lifetimes.items() if name in addresses)
    in_place = _in_place_commands(commands, context.shapes)
    for i, ((s1, e1), n1) in enumerate(live):
        a1 = addresses[n1]
        for (s2, e2), n2 in live[i + 1:]:
            if s2 > e1:
                break
            a2 = addresses[n2]
            lo, hi = max(a1.offset, a2.offset), min(a1.offset + a1.size_bytes, a2.offset + a2.size_bytes)
            shared = s2 if s2 == min(e1, e2) else -1  # the one command both are live at, if just one
            if shared in in_place.get((n1, n2), ()) or shared in in_place.get((n2, n1), ()):
                continue
            if a1.area == a2.area and lo < hi:
                found.append(Violation(ViolationKind.OVERLAP, s2, n2,
                                       f"bytes {lo}..{hi - 1} of {a1.area} also hold '{n1}' (both live at commands {s2}..{min(e1, e2)})"))
    return found


def _in_place_commands(commands: Sequence[Command],
                       shapes: Mapping[str, tuple[int, int, int, int]]) -> dict[tuple[str, str], set[int]]:
    """``(input buffer, OFM buffer) -> command indices`` where an elementwise stripe writes its OFM
    exactly over the input it reads: same address, row layout and box, or both whole tensors of
    one size whose bytes hold the elements in the same order (a reshape between them removed), so
    every element is read before the same bytes are written. Buffers live together only at such a
    command may share bytes."""
    found: dict[tuple[str, str], set[int]] = {}
    for k, command in enumerate(commands):
        if not isinstance(command, NpuStripeCommand) or not command.elementwise:
            continue
        out = command.ofm
        for operand in (command.ifm, command.ifm2):
            if (operand is not None and operand.buffer.name != out.buffer.name
                    and operand.buffer.address == out.buffer.address
                    and operand.buffer.rows is None and out.buffer.rows is None
                    and (operand.box == out.box and operand.buffer.row_bytes == out.buffer.row_bytes
                         or _whole_alike(operand, out, shapes))):
                found.setdefault((operand.buffer.name, out.buffer.name), set()).add(k)
    return found


def _whole_alike(a: Operand, b: Operand, shapes: Mapping[str, tuple[int, int, int, int]]) -> bool:
    """Whether ``a`` and ``b`` each cover their whole tensor of one storage size, whose bytes hold
    the elements in one order."""
    sa, sb = shapes.get(a.tensor), shapes.get(b.tensor)
    if sa is None or sb is None:
        return False
    whole = all(box.start == (0, 0, 0, 0) and box.end == shape for box, shape in ((a.box, sa), (b.box, sb)))
    same_format = a.buffer.address.size_bytes == b.buffer.address.size_bytes  # bricks would pad the depth
    return whole and same_format and same_element_order(Shape4D(*sa), Shape4D(*sb))


def validate(
    commands: Sequence[Command], lowered: LoweredGraph, arch: Architecture, addresses: Mapping[str, Address],
    *, sram_limit_bytes: int | None = None,
) -> list[Violation]:
    """Every violation of the stream, ordered by command index (end-of-stream checks last).

    SRAM is limited to ``sram_limit_bytes`` (default ``arch.arena_cache_size_bytes``); constants
    are not counted against it.
    """
    limit = arch.arena_cache_size_bytes if sram_limit_bytes is None else sram_limit_bytes
    return validate_stream(commands, stream_context(lowered), addresses, sram_limit_bytes=limit)


def validate_stream(
    commands: Sequence[Command], context: StreamContext, addresses: Mapping[str, Address], *,
    sram_limit_bytes: int | None,
) -> list[Violation]:
    """``validate`` without the graph: shapes and network tensors come from ``context``."""
    replay = _Replay(context, addresses)
    replay.run(commands)
    limits = {} if sram_limit_bytes is None else {MemArea.SRAM: sram_limit_bytes}
    found = _static_checks(commands, context, addresses, limits) + replay.found
    return sorted(found, key=lambda v: (v.command_index < 0, v.command_index))


def raise_first(violations: Sequence[Violation]) -> None:
    """Raise ``ValidationError`` naming the first violation (nothing when there is none)."""
    if violations:
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        raise ValidationError(f"plan is invalid: {violations[0].message}{more}")


def validate_plan(plan: Any) -> None:
    """Replay ``plan``'s command stream with its addresses and raise ``ValidationError`` naming
    the first violation. Uses the plan's own allocation and commands when it carries them."""
    allocation = getattr(plan, "allocation", None)
    commands = getattr(plan, "commands", None)
    if allocation is None:
        allocator = getattr(plan.options, "tensor_allocator", None)
        kwargs = {} if allocator is None else {"allocator": allocator}
        allocation = allocate_plan(plan.schedule, plan.lowered, plan.arch, **kwargs)
        commands = None
    if not commands:
        commands = build_command_stream(plan.schedule, plan.lowered, plan.arch, allocation.addresses)
    raise_first(validate(commands, plan.lowered, plan.arch, allocation.addresses,
                         sram_limit_bytes=plan.arch.arena_cache_size_bytes))
