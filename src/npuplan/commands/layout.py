"""Buffer layouts the command stream needs: which buffers exist, in which area, how big, and how
tensor rows and weight slices map to bytes inside them.

Row mapping: a whole feature map keeps batch b, row r at ``(b * H + r) * row_bytes``; a rolling
buffer of R rows keeps row r at ``(r % R) * row_bytes``. Weight slices sit at their offset in the
encoded stream (constant area, full buffers) or in slot 0/1 of a single/double buffer.
"""

from __future__ import annotations


from npuplan.commands.types import BufferKind, WeightSlice
from npuplan.cost.weights import WeightEncodings, encoding_order
from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import CpuOp, LoweredGraph, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.records import record
from npuplan.schedule.model.types import BufferMode, Schedule, ScheduledOp, WeightBuffering
from npuplan.schedule.model.usage import staged_name
from npuplan.units import ALIGN_BYTES, BRICK_DEPTH, round_up



def weight_stream_name(op_name: str) -> str:
    """Content name of an op's encoded weight stream (also its constant-area buffer)."""
    return f"{op_name}#weights"


def weight_buffer_name(op_name: str) -> str:
    """Name of an op's fast-storage weight buffer."""
    return f"{op_name}#weight_buffer"


@record(eq=False)
class BufferSpec:
    """One buffer before it has an address: area, bytes needed and row geometry.

    ``shape`` is the tensor's own NHWC shape (feature maps); ``rows`` the rolling-buffer rows.
    """

    name: str
    area: MemArea
    size_bytes: int
    kind: BufferKind
    shape: Shape4D = Shape4D()
    row_bytes: int = 0
    rows: int | None = None

    def row_span(self, batch: int, row: int) -> tuple[int, int]:
        """Byte range ``[lo, hi)`` of one tensor row inside the buffer."""
        if self.rows is not None:
            slot = row % self.rows
        else:
            slot = batch * self.shape.h + row
        return slot * self.row_bytes, (slot + 1) * self.row_bytes

    def row_lap(self, batch: int, row: int) -> int:
        """Which pass over a rolling buffer row ``row`` belongs to (0 for whole tensors)."""
        return row // self.rows if self.rows is not None else 0


@record(eq=False)
class WeightLayout:
    """An op's weight slices and where each sits in its fast-storage buffer (if buffered)."""

    op: str
    buffering: WeightBuffering
    slices: tuple[WeightSlice, ...]
    slot_offsets: tuple[int, ...]  # byte offset of each slice inside the weight buffer
    stream_bytes: int
    buffer_bytes: int

    @property
    def buffered(self) -> bool:
        return self.buffering is not WeightBuffering.NONE


def row_bytes_of(shape: Shape4D, element_bytes: int, fmt: str) -> int:
    depth = round_up(shape.c, BRICK_DEPTH) if fmt == "NHCWB16" else shape.c
    return shape.w * depth * element_bytes


def weight_layout(sop: ScheduledOp, arch: Architecture, encodings: WeightEncodings | None = None) -> WeightLayout:
    """Slices of ``sop``'s weights and their slots in its fast-storage buffer.

    The schedule's own slices and slice sizes when it recorded them (so the buffer is exactly the
    size the schedule reserved); otherwise uniform OFM depth slices of ``weight_depth_slice`` sized
    by the weight encoder (through the plan's ``encodings`` when given).
    """
    if sop.weight_depth_slices and len(sop.weight_slice_bytes) == len(sop.weight_depth_slices) - 1:
        bounds, sizes = sop.weight_depth_slices, [round_up(b, ALIGN_BYTES) for b in sop.weight_slice_bytes]
    else:
        bounds, sizes = _encoded_slices(sop, encodings or WeightEncodings(arch.accelerator))
    slices: list[WeightSlice] = []
    offset = 0
    for k, (start, end) in enumerate(zip(bounds, bounds[1:])):
        slices.append(WeightSlice(k, start, end, offset, sizes[k]))
        offset += sizes[k]
    if sop.weight_buffering is WeightBuffering.SINGLE:
        slots = tuple(0 for _ in slices)
        buffer_bytes = max(sizes, default=0)
    elif sop.weight_buffering is WeightBuffering.DOUBLE:
        even = max(sizes[0::2], default=0)
        slots = tuple(0 if k % 2 == 0 else even for k in range(len(slices)))
        buffer_bytes = even + max(sizes[1::2], default=0)
    else:
        slots = tuple(s.stream_offset_bytes for s in slices)
        buffer_bytes = offset if sop.weight_buffering is WeightBuffering.FULL else 0
    return WeightLayout(sop.op.name, sop.weight_buffering, tuple(slices), slots, offset, buffer_bytes)


def _encoded_slices(sop: ScheduledOp, encodings: WeightEncodings) -> tuple[tuple[int, ...], list[int]]:
    """Uniform depth slices of ``weight_depth_slice`` and their encoded sizes (16-byte aligned)."""
    depth = sop.op.ofm_shape.c
    sliced = sop.weight_buffering in (WeightBuffering.SINGLE, WeightBuffering.DOUBLE) and 0 < sop.weight_depth_slice < depth
    step = sop.weight_depth_slice if sliced else depth
    stream = encodings.stream_size(sop.op, depth_step=step, order=encoding_order(sop.op, sop.block_config))
    per_offset: dict[int, int] = {}
    for part in stream.slices:
        per_offset[part.depth_offset] = per_offset.get(part.depth_offset, 0) + part.total_bytes
    starts = tuple(range(0, depth, step))
    return (*starts, depth), [round_up(per_offset.get(start, 0), ALIGN_BYTES) for start in starts]


def _op_tensors(op: NpuOp | CpuOp) -> list[Tensor]:
    if isinstance(op, NpuOp):
        return [t for t in (op.ifm, op.ifm2, op.ofm) if t is not None]
    return [t for t in (*op.op.inputs, *op.op.outputs) if t is not None]


def _fm_spec(tensor: Tensor, schedule: Schedule, arch: Architecture) -> BufferSpec:
    shape = tensor.shape4d
    element = tensor.dtype.size_bytes
    placement = schedule.placements.get(tensor.name)
    if tensor.is_constant:
        return BufferSpec(tensor.name, arch.const_area, round_up(tensor.size_bytes, ALIGN_BYTES),
                          BufferKind.CONSTANT, shape, row_bytes_of(shape, element, "NHWC"))
    if placement is not None and placement.buffer_mode is BufferMode.ROLLING and placement.rows:
        rb = row_bytes_of(shape, element, placement.format)
        size = round_up(max(placement.size_bytes, placement.rows * rb), ALIGN_BYTES)
        return BufferSpec(tensor.name, placement.area, size, BufferKind.ROLLING, shape, rb, placement.rows)
    fmt = placement.format if placement is not None else "NHWC"
    area = placement.area if placement is not None else arch.arena_area
    rb = row_bytes_of(shape, element, fmt)
    size = round_up(max(placement.size_bytes if placement else 0, shape.n * shape.h * rb), ALIGN_BYTES)
    return BufferSpec(tensor.name, area, size, BufferKind.FEATURE_MAP, shape, rb)


def buffer_specs(
    schedule: Schedule, lowered: LoweredGraph, arch: Architecture, *, encodings: WeightEncodings | None = None,
) -> tuple[dict[str, BufferSpec], dict[str, WeightLayout]]:
    """Every buffer the plan's command stream touches, and each weighted op's slice layout
    (weights the schedule did not size are encoded through the plan's ``encodings`` when given)."""
    specs: dict[str, BufferSpec] = {}
    for op in lowered.ops:
        for tensor in _op_tensors(op):
            if tensor.name not in specs and not (isinstance(op, NpuOp) and tensor is op.weight_tensor):
                specs[tensor.name] = _fm_spec(tensor, schedule, arch)
    for name in schedule.staged_fms:
        whole = specs[name]
        specs[staged_name(name)] = BufferSpec(staged_name(name), arch.fast_area, whole.size_bytes, BufferKind.STAGED,
                                              whole.shape, whole.row_bytes)
    weights: dict[str, WeightLayout] = {}
    for sop in schedule.ops:
        if sop.op.weights is None:
            continue
        layout = weight_layout(sop, arch, encodings)
        weights[sop.name] = layout
        name = weight_stream_name(sop.name)
        specs[name] = BufferSpec(name, arch.const_area, round_up(layout.stream_bytes, ALIGN_BYTES), BufferKind.CONSTANT)
        if layout.buffered:
            buf = weight_buffer_name(sop.name)
            specs[buf] = BufferSpec(buf, arch.fast_area, round_up(layout.buffer_bytes, ALIGN_BYTES),
                                    BufferKind.WEIGHT_BUFFER)
    return specs, weights

