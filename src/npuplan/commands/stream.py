"""Build the high-level command stream a schedule implies.

Ops run in the lowered graph's order. A cascade is emitted as a unit, pulled from its last op: a
stripe of op j first asks its producer for the IFM rows its kernel, stride and padding need, so a
consumer stripe runs as soon as its input rows exist (the order Vela's generator produces).
Buffered weights are DMA'd slice by slice before the first stripe that reads them; a prebuffered
first slice is fetched while the previous op runs (after its first stripe and its own DMAs).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from npuplan.commands.layout import BufferSpec, WeightLayout, buffer_specs, weight_buffer_name, weight_stream_name
from npuplan.commands.types import (
    Address,
    Box,
    BufferRef,
    Command,
    CpuCommand,
    DmaCommand,
    DmaPurpose,
    NpuStripeCommand,
    Operand,
    WeightSlice,
)
from npuplan.hw.memory import Architecture
from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import BlockType, CpuOp, LoweredGraph, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.schedule.model.geometry import input_rows
from npuplan.schedule.model.stripes import cascade_stripes
from npuplan.schedule.model.types import Schedule, ScheduledOp
from npuplan.schedule.model.usage import staged_name

_FULL_DEPTH_READERS = (BlockType.CONV, BlockType.VECTOR_PRODUCT, BlockType.REDUCE_SUM)
Layouts = tuple[dict[str, BufferSpec], dict[str, WeightLayout]]


class _Builder:
    """Emits commands for one schedule; holds the buffer layouts and addresses it reads."""

    def __init__(self, schedule: Schedule, lowered: LoweredGraph, arch: Architecture,
                 addresses: Mapping[str, Address], layouts: Layouts | None) -> None:
        self.schedule = schedule
        self.lowered = lowered
        self.specs, self.weights = layouts or buffer_specs(schedule, lowered, arch)
        self.addresses = addresses
        self.commands: list[Command] = []
        self.shapes: dict[str, Shape4D] = {}  # tensor name -> its own NHWC shape (computed once)
        self.early: dict[int, list[Command]] = {}  # position -> DMAs to insert before it
        self.staged: set[str] = set()  # staged maps already copied (before their first reader)
        self.rolling: dict[int, set[str]] = {}  # cascade id -> the maps it holds in rolling buffers
        for c in schedule.cascades:
            self.rolling.setdefault(c.id, set()).update(p.tensor_name for p in c.rolling_buffers)
        self.refs: dict[tuple[str, int], BufferRef] = {}  # each buffer (and slot in it) built once
        # per scheduled op (by id): what every stripe of it shares (block config text, weight
        # stream name, whether it is pointwise, whether its IFM is read from a staged copy)
        self.fixed: dict[int, tuple[str, str, bool, bool]] = {}

    def ref(self, name: str, base_bytes: int = 0) -> BufferRef:
        found = self.refs.get((name, base_bytes))
        if found is None:
            spec = self.specs[name]
            found = self.refs[(name, base_bytes)] = BufferRef(name, _address(self.addresses, name), spec.kind,
                                                              spec.row_bytes, spec.rows, base_bytes)
        return found

    def shared(self, sop: ScheduledOp) -> tuple[str, str, bool, bool]:
        """What every stripe of ``sop`` shares (``fixed``), worked out on its first stripe."""
        found = self.fixed.get(id(sop))
        if found is None:
            op = sop.op
            found = self.fixed[id(sop)] = (_block_text(sop.block_config), weight_stream_name(op.name), op.pointwise,
                                           op.ifm.name in self.schedule.staged_fms)
        return found

    # ------------------------------------------------------------------ weights

    def weight_ref(self, sop: ScheduledOp, piece: WeightSlice) -> BufferRef:
        layout = self.weights[sop.name]
        if layout.buffered:
            return self.ref(weight_buffer_name(sop.name), layout.slot_offsets[piece.index])
        return self.ref(weight_stream_name(sop.name), piece.stream_offset_bytes)

    def weight_dma(self, sop: ScheduledOp, piece: WeightSlice) -> DmaCommand:
        src = self.ref(weight_stream_name(sop.name), piece.stream_offset_bytes)
        dst = self.weight_ref(sop, piece)
        return DmaCommand(
            src.address.area, src.address.offset + src.base_bytes, dst.address.area,
            dst.address.offset + dst.base_bytes, piece.size_bytes, weight_stream_name(sop.name),
            DmaPurpose.WEIGHTS, src, dst, piece, sop.name,
        )

    # ------------------------------------------------------------------ stripes

    def emit_op_rows(self, sop: ScheduledOp, rows: tuple[int, int], *, prefetched_first: bool) -> None:
        """Every depth slice of OFM rows ``rows`` of ``sop`` (with their weight DMAs)."""
        layout: WeightLayout | None = self.weights.get(sop.name)
        pieces: tuple[WeightSlice | None, ...] = layout.slices if layout else (None,)
        first_rows = rows[0] == 0
        for piece in pieces:
            if piece is not None and layout is not None and layout.buffered and first_rows:
                if not (prefetched_first and piece.index == 0):
                    self.commands.append(self.weight_dma(sop, piece))
            depth = (piece.depth_start, piece.depth_end) if piece else (0, sop.op.ofm_shape.c)
            self.commands.append(self.stripe(sop, rows, depth, piece))

    def stripe(self, sop: ScheduledOp, rows: tuple[int, int], depth: tuple[int, int],
               piece: WeightSlice | None) -> NpuStripeCommand:
        op = sop.op
        block_text, stream_name, pointwise, staged = self.shared(sop)
        whole = rows == (0, op.ofm_shape.h) and sop.cascade_id < 0
        ifm_rows = (0, op.ifm_shape.h) if whole else input_rows(op, op.ifm_shape, rows)
        ifm = self.operand(op.ifm, op.ifm_shape, op.ifm_read_offset, ifm_rows, _in_depth(op, op.ifm_shape, depth),
                           staged=staged, frame=op.ifm_frame, step=op.ifm_step)
        ifm2 = None
        if op.ifm2 is not None and op.ifm2_shape is not None:
            rows2 = (0, op.ifm2_shape.h) if whole or op.ifm2_shape.h != op.ofm_shape.h else rows
            ifm2 = self.operand(op.ifm2, op.ifm2_shape, op.ifm2_read_offset, rows2, _in_depth(op, op.ifm2_shape, depth))
        if op.ofm_write_shape is not None:  # the op writes only its box (a concatenated slice, a pad border)
            box = op.ofm_write_shape
            ofm = self.operand(op.ofm, box, op.ofm_write_offset, (min(rows[0], box.h), min(rows[1], box.h)),
                               (min(depth[0], box.c), min(depth[1], box.c)), frame=op.ofm_frame)
        else:
            ofm = self.operand(op.ofm, op.ofm_shape, op.ofm_write_offset, rows, depth, step=op.ofm_step)
        weights = None if piece is None else self.weight_ref(sop, piece)
        return NpuStripeCommand(op.name, ifm, ifm2, ofm, piece, weights, block_text,
                                stream_name if piece is not None else "", pointwise)

    def operand(self, tensor: Tensor, view: Shape4D, offset: Shape4D | None,
                rows: tuple[int, int], depth: tuple[int, int], *, staged: bool = False,
                frame: Shape4D | None = None, step: tuple[int, int] | None = None) -> Operand:
        full = self.shapes.get(tensor.name)
        if full is None:
            full = self.shapes[tensor.name] = tensor.shape4d
        buffer = self.ref(staged_name(tensor.name) if staged else tensor.name)
        return Operand(tensor.name, tensor_box(tensor, view, offset, rows, depth, full=full, frame=frame, step=step),
                       buffer)

    def stage(self, sop: ScheduledOp) -> None:
        """Copy ``sop``'s IFM whole into its fast-storage copy when the schedule stages it and no
        earlier reader copied it."""
        name = sop.op.ifm.name
        if name not in self.schedule.staged_fms or name in self.staged:
            return
        self.staged.add(name)
        src, dst = self.ref(name), self.ref(staged_name(name))
        self.commands.append(DmaCommand(
            src.address.area, src.address.offset, dst.address.area, dst.address.offset,
            self.specs[name].size_bytes, name, DmaPurpose.FEATURE_MAP, src, dst, None, sop.name,
        ))

    # ------------------------------------------------------------------ units

    def emit_cascade(self, sops: list[ScheduledOp]) -> None:
        """Pull the last op's stripes; each stripe first pulls the producer rows it reads."""
        rolling = self.rolling.get(sops[0].cascade_id, set())
        for j, a, b in cascade_stripes([s.op for s in sops], [s.ofm_stripe.h for s in sops], rolling):
            self.emit_op_rows(sops[j], (a, b), prefetched_first=False)

    def emit_single(self, sop: ScheduledOp, prefetched_first: bool) -> None:
        height = sop.op.ofm_shape.h
        step = max(1, min(sop.ofm_stripe.h, height))
        for a in range(0, height, step):
            self.emit_op_rows(sop, (a, min(a + step, height)), prefetched_first=prefetched_first)

    def emit_cpu(self, op: CpuOp) -> None:
        def whole(t: Tensor) -> Operand:
            s = t.shape4d
            return Operand(t.name, Box((0, 0, 0, 0), (s.n, s.h, s.w, s.c)), self.ref(t.name))

        self.commands.append(CpuCommand(op.name, tuple(whole(t) for t in op.op.inputs if t is not None),
                                        tuple(whole(t) for t in op.op.outputs if t is not None)))

    def build(self) -> tuple[Command, ...]:
        by_op = {id(s.op): s for s in self.schedule.ops}
        cascades: dict[int, list[ScheduledOp]] = {}
        for s in self.schedule.ops:
            if s.cascade_id >= 0:
                cascades.setdefault(s.cascade_id, []).append(s)
        previous_start: int | None = None
        done: set[int] = set()
        for op in self.lowered.ops:
            if isinstance(op, CpuOp):
                self.emit_cpu(op)
                continue
            sop = by_op.get(id(op))
            if sop is None:
                raise ValueError(f"NPU op '{op.name}' is not in the schedule")
            start = len(self.commands)
            if sop.cascade_id >= 0:
                if sop.cascade_id not in done:
                    done.add(sop.cascade_id)
                    self.emit_cascade(cascades[sop.cascade_id])
            else:
                prefetch = self.prefetch(sop, previous_start)
                self.stage(sop)
                self.emit_single(sop, prefetch)
            previous_start = start
        return self.merged()

    def prefetch(self, sop: ScheduledOp, previous_start: int | None) -> bool:
        """Queue the first weight slice under the previous op when the schedule prebuffers it."""
        layout = self.weights.get(sop.name)
        if previous_start is None or layout is None or not layout.buffered or sop.prebuffered_weight_bytes <= 0:
            return False
        dma = replace(self.weight_dma(sop, layout.slices[0]), ahead=True)
        self.early.setdefault(self.prefetch_point(previous_start), []).append(dma)
        return True

    def prefetch_point(self, previous_start: int) -> int:
        """Where a prefetch goes among the previous op's commands (from ``previous_start``): once it
        has started (after its first stripe, so that the DMA runs under it and not under the op
        before it, whose memory its buffer may share) and after its own DMAs (its weight slices, its
        table: the DMA queue runs in order, and the op waits for those)."""
        commands = self.commands[previous_start:]
        first_stripe = next((k for k, c in enumerate(commands) if isinstance(c, NpuStripeCommand)), -1)
        last_dma = max((k for k, c in enumerate(commands) if isinstance(c, DmaCommand)), default=-1)
        return previous_start + max(first_stripe, last_dma) + 1

    def merged(self) -> tuple[Command, ...]:
        out: list[Command] = []
        for k, command in enumerate(self.commands):
            out.extend(self.early.get(k, ()))
            out.append(command)
        return tuple(out)


def _in_depth(op: NpuOp, view: Shape4D, depth: tuple[int, int]) -> tuple[int, int]:
    if op.block_type in _FULL_DEPTH_READERS or view.c < op.ofm_shape.c:
        return 0, view.c
    return min(depth[0], view.c - 1), min(depth[1], view.c)


def _stepped(origin: int, step: int, indices: tuple[int, int]) -> tuple[int, int]:
    """The tensor coordinates ``[lo, hi)`` spanned by view indices ``indices`` of a strided axis
    from ``origin`` (a negative ``step`` walks the axis backwards: a mirrored view)."""
    first, last = origin + step * indices[0], origin + step * (indices[1] - 1)
    return min(first, last), max(first, last) + 1


def tensor_box(tensor: Tensor, view: Shape4D, offset: Shape4D | None,
               rows: tuple[int, int], depth: tuple[int, int], *, full: Shape4D | None = None,
               frame: Shape4D | None = None, step: tuple[int, int] | None = None) -> Box:
    """The box ``rows`` x ``depth`` of the op's ``view`` in the tensor's own coordinates.

    A strided view (``step``: every ``step``-th row and column from ``offset``, backwards for a
    negative step) touches the box from its first element to its last, a superset
    (``NpuOp.ifm_step``).

    A view that reshapes the tensor (same bytes, other shape) touches the whole tensor. A box at an
    offset of ``frame``, a view of all of the tensor in another shape (a copy writing its slot of
    a reshaped tensor), touches the tensor rows its bytes span: a superset, as its elements need
    not be whole rows. ``full`` is the tensor's own shape when the caller has it already.
    """
    full = full or tensor.shape4d
    o = offset or Shape4D(0, 0, 0, 0)
    if step is not None:
        (y0, y1), (x0, x1) = _stepped(o.h, step[0], rows), _stepped(o.w, step[1], (0, view.w))
        return Box((o.n, y0, x0, o.c + depth[0]),
                   (min(o.n + view.n, full.n), min(y1, full.h), min(x1, full.w), min(o.c + depth[1], full.c)))
    if frame is not None and offset is not None and (frame.h, frame.w, frame.c) != (full.h, full.w, full.c):
        first = ((o.n * frame.h + o.h + rows[0]) * frame.w + o.w) * frame.c + o.c + depth[0]
        last = ((o.n * frame.h + o.h + rows[1] - 1) * frame.w + o.w + view.w - 1) * frame.c + o.c + depth[1]
        row = full.w * full.c
        return Box((0, first // row, 0, 0), (full.n, min(-(-last // row), full.h), full.w, full.c))
    if offset is None and (view.h, view.w, view.c) != (full.h, full.w, full.c):
        return Box((0, 0, 0, 0), (full.n, full.h, full.w, full.c))
    start = (o.n, o.h + rows[0], o.w, o.c + depth[0])
    end = (min(o.n + view.n, full.n), min(o.h + rows[1], full.h), min(o.w + view.w, full.w),
           min(o.c + depth[1], full.c))
    return Box(start, end)


def _block_text(block_config: Any) -> str:
    vela = getattr(block_config, "vela_repr", None)
    if vela is not None:
        return "x".join(str(v) for v in vela)
    return "" if block_config is None else str(block_config)


def build_command_stream(
    schedule: Schedule, lowered: LoweredGraph, arch: Architecture, addresses: Mapping[str, Address],
    *, layouts: Layouts | None = None,
) -> tuple[Command, ...]:
    """The ordered DMA, NPU-stripe and CPU commands ``schedule`` implies.

    ``addresses`` maps every buffer name (tensor names; ``"<op>#weights"`` constant streams;
    ``"<op>#weight_buffer"`` fast-storage weight buffers) to its ``Address``; see
    ``npuplan.commands.addresses.plan_addresses``. ``layouts`` is ``buffer_specs``'s result when
    the caller has it already. Raises ``ValueError`` for a missing address.
    """
    return _Builder(schedule, lowered, arch, addresses, layouts).build()


def _address(addresses: Mapping[str, Address], name: str) -> Address:
    address = addresses.get(name)
    if address is None:
        raise ValueError(f"no address for buffer '{name}'")
    return address


def readdressed(commands: Sequence[Command], addresses: Mapping[str, Address]) -> tuple[Command, ...]:
    """``commands`` with every buffer moved to its address in ``addresses``: the stream
    ``build_command_stream`` would give with these addresses (it depends on them only there).
    Raises ``ValueError`` for a missing address."""
    return tuple(_Mover(addresses).command(c) for c in commands)


class _Mover:
    """Rebuilds commands around re-addressed buffers; each buffer (and slot in it) moved once."""

    def __init__(self, addresses: Mapping[str, Address]) -> None:
        self.addresses = addresses
        self.refs: dict[tuple[str, int], BufferRef] = {}

    def ref(self, old: BufferRef) -> BufferRef:
        key = (old.name, old.base_bytes)
        found = self.refs.get(key)
        if found is None:
            found = self.refs[key] = BufferRef(old.name, _address(self.addresses, old.name), old.kind,
                                               old.row_bytes, old.rows, old.base_bytes)
        return found

    def operand(self, old: Operand | None) -> Operand | None:
        return None if old is None else Operand(old.tensor, old.box, self.ref(old.buffer))

    def operands(self, old: tuple[Operand, ...]) -> tuple[Operand, ...]:
        return tuple(Operand(o.tensor, o.box, self.ref(o.buffer)) for o in old)

    def command(self, old: Command) -> Command:
        if isinstance(old, NpuStripeCommand):
            ofm = Operand(old.ofm.tensor, old.ofm.box, self.ref(old.ofm.buffer))
            weights = None if old.weights is None else self.ref(old.weights)
            return NpuStripeCommand(old.op, self.operand(old.ifm), self.operand(old.ifm2), ofm, old.weight_slice,
                                    weights, old.block_config, old.weights_tensor, old.elementwise)
        if isinstance(old, DmaCommand):
            src, dst = self.ref(old.src), self.ref(old.dst)
            return DmaCommand(src.address.area, src.address.offset + src.base_bytes, dst.address.area,
                              dst.address.offset + dst.base_bytes, old.size_bytes, old.tensor, old.purpose, src, dst,
                              old.weight_slice, old.op, old.ahead)
        return CpuCommand(old.op, self.operands(old.inputs), self.operands(old.outputs))


def iter_operands(command: Command) -> Iterator[Operand]:
    """Every feature-map operand of a command."""
    if isinstance(command, NpuStripeCommand):
        yield from (o for o in (command.ifm, command.ifm2, command.ofm) if o is not None)
    elif isinstance(command, CpuCommand):
        yield from command.inputs
        yield from command.outputs
