"""Where the emitted file keeps everything: the flash (read-only) tensor's contents, the slots of
the fast-storage weight buffers, and the address of every buffer.

The flash tensor holds the real encoded records (``emit.weights``) one after another, 16-byte
aligned (each distinct record once), so its size comes from the hardware encoding, not from the plan's size estimate; then the
constant feature maps NPU operations read (a PAD's fill values, an elementwise op's constant
operand), NHWC, each 16-byte aligned; then the 256-byte table of each LUT activation. Weight
buffers hold slot 0 at their start and, double-buffered, slot 1 after the largest even slice.
When a real record no longer fits the buffer the plan reserved, the plan's buffers are allocated
again with the real weight-buffer sizes (same allocator, same lifetimes) and the note says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace


from npuplan.records import record
from npuplan.result import Plan
from npuplan.commands.addresses import allocate_schedule_buffers, graph_lifetimes
from npuplan.commands.layout import buffer_specs, weight_buffer_name
from npuplan.commands.types import Address, Command
from npuplan.emit.weights import EncodedOp
from npuplan.errors import EmitError
from npuplan.hw.memory import MemArea
from npuplan.lowering.flash_constants import flash_constants
from npuplan.schedule.model.types import WeightBuffering
from npuplan.units import ALIGN_BYTES, round_up

SliceKey = tuple[str, int]  # (op name, slice index)


@record(eq=False, slots=False)
class DeployLayout:
    """The emitted file's memory layout.

    ``addresses`` maps every plan buffer to its address (re-allocated if needed); ``flash`` is the
    read-only tensor's bytes; ``flash_offsets`` and ``slot_offsets`` give each slice record's byte
    offset in the flash and inside its op's weight buffer; ``notes`` say what moved and why.
    """

    addresses: Mapping[str, Address]
    flash: bytes
    flash_offsets: Mapping[SliceKey, int]
    constant_offsets: Mapping[str, int]  # constant feature map (tensor name) -> its offset in the flash
    lut_offsets: Mapping[str, int]  # LUT activation op (name) -> its table's offset in the flash
    slot_offsets: Mapping[SliceKey, int]
    area_peaks: Mapping[MemArea, int]
    notes: tuple[str, ...]


class _Flash:
    """The flash tensor's parts as they are placed, each 16-byte aligned, joined once at the end
    (its tens of megabytes copied once)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.top = 0

    def place(self, data: bytes) -> int:
        """Place ``data`` and its padding after what is placed; its offset."""
        offset = self.top
        pad = -len(data) % ALIGN_BYTES
        self.parts += (data, bytes(pad)) if pad else (data,)
        self.top += len(data) + pad
        return offset

    def joined(self) -> bytes:
        return b"".join(self.parts)


def _place_records(flash: _Flash, encoded: Sequence[EncodedOp]) -> dict[SliceKey, int]:
    """Every slice record, in op order; each record's offset. Identical records (the phases of a
    dilated kernel, ``lowering.dilation_phases``, each read the layer's weights) are stored once."""
    placed: dict[bytes, int] = {}
    offsets: dict[SliceKey, int] = {}
    for op in encoded:
        for piece in op.slices:
            if piece.data not in placed:
                placed[piece.data] = flash.place(piece.data)
            offsets[(op.op, piece.index)] = placed[piece.data]
    return offsets


def _placed_once(flash: _Flash, stored: dict[bytes, int], data: bytes) -> int:
    """The offset of ``data`` in the flash, placed there unless the same bytes already are."""
    if data not in stored:
        stored[data] = flash.place(data)
    return stored[data]


def weight_slots(op: EncodedOp, buffering: WeightBuffering) -> tuple[dict[SliceKey, int], int]:
    """Each slice's offset inside ``op``'s weight buffer and the bytes the buffer needs."""
    sizes = [round_up(s.size_bytes, ALIGN_BYTES) for s in op.slices]
    if buffering is WeightBuffering.DOUBLE:
        even = max(sizes[0::2], default=0)
        slots = {(op.op, s.index): (0 if k % 2 == 0 else even) for k, s in enumerate(op.slices)}
        return slots, even + max(sizes[1::2], default=0)
    if buffering is WeightBuffering.SINGLE:
        return {(op.op, s.index): 0 for s in op.slices}, max(sizes, default=0)
    offsets, top = {}, 0
    for s, size in zip(op.slices, sizes):
        offsets[(op.op, s.index)] = top
        top += size
    return offsets, top


def deploy_layout(plan: Plan, encoded: Sequence[EncodedOp]) -> DeployLayout:
    """The layout of ``plan`` with the real ``encoded`` weights."""
    assert plan.allocation is not None
    buffering = {s.name: s.weight_buffering for s in plan.schedule.ops}
    parts = _Flash()
    flash_offsets = _place_records(parts, encoded)
    records_end = parts.top
    stored: dict[bytes, int] = {}  # identical contents (a PAD's fills of the zero point, a table) stored once
    constants, luts = flash_constants(plan.lowered)
    constant_offsets = {name: _placed_once(parts, stored, data) for name, data in constants}
    lut_offsets = {name: _placed_once(parts, stored, data) for name, data in luts}
    flash = parts.joined()
    slot_offsets: dict[SliceKey, int] = {}
    needed: dict[str, int] = {}
    for op in encoded:
        mode = buffering.get(op.op, WeightBuffering.NONE)
        if mode is WeightBuffering.NONE:
            continue
        slots, size = weight_slots(op, mode)
        slot_offsets.update(slots)
        needed[weight_buffer_name(op.op)] = round_up(size, ALIGN_BYTES)
    addresses = dict(plan.allocation.addresses)
    grown = {name: size for name, size in needed.items() if size > addresses[name].size_bytes}
    notes: list[str] = []
    peaks = {area: plan.allocation.peak_bytes(area) for area in plan.allocation.allocations}
    if grown:
        addresses, peaks = _reallocated(plan, needed, plan.commands)
        fast, budget = plan.arch.fast_area, plan.arch.arena_cache_size_bytes
        if peaks.get(fast, 0) > budget:
            raise EmitError(None, f"the real encoded weights need {peaks[fast]} bytes of {fast} but the budget is "
                            f"{budget} bytes (the plan's estimate fitted); try a larger --arena-cache-size")
        notes.append(f"{len(grown)} weight buffer(s) re-allocated for the real encoded sizes "
                     f"(+{sum(grown[n] - plan.allocation.addresses[n].size_bytes for n in grown)} bytes; "
                     f"{fast} peak {plan.allocation.peak_bytes(fast)} -> {peaks.get(fast, 0)} bytes)")
    planned_flash = sum(a.size_bytes for n, a in plan.allocation.addresses.items() if n.endswith("#weights"))
    planned_flash += len(flash) - records_end  # the constants and tables: the plan's own, no estimate
    notes.append(f"flash laid out from the real encodings: {len(flash)} bytes (the plan's estimate {planned_flash})")
    return DeployLayout(addresses, flash, flash_offsets, constant_offsets, lut_offsets, slot_offsets, peaks,
                        tuple(notes))


def _reallocated(plan: Plan, needed: Mapping[str, int],
                 commands: Sequence[Command]) -> tuple[dict[str, Address], dict[MemArea, int]]:
    """Every buffer re-allocated as the plan did, with the weight buffers at their ``needed`` sizes."""
    specs, _ = buffer_specs(plan.schedule, plan.lowered, plan.arch, encodings=plan.weight_encodings)
    specs = {name: (replace(spec, size_bytes=max(spec.size_bytes, needed[name])) if name in needed else spec)
             for name, spec in specs.items()}
    lifetimes = graph_lifetimes(commands, plan.lowered)
    allocation = allocate_schedule_buffers(plan.schedule, plan.lowered, specs, lifetimes,
                                           allocator=plan.options.tensor_allocator,
                                           cpu_tensor_alignment=plan.options.cpu_tensor_alignment_bytes)
    return dict(allocation.addresses), {area: allocation.peak_bytes(area) for area in allocation.allocations}
