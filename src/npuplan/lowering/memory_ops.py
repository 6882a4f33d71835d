"""Operators that only move data, lowered to 1x1 average pools writing at offsets.

PAD (when not folded into a convolution) becomes, like Vela's legacy core, a copy of the input
into the middle of the output plus one op per padded side (of height, width or depth) that fills
it with the zero point.
CONCATENATION becomes one copy per input, each writing at its offset along the axis.
A RESHAPE (SQUEEZE, EXPAND_DIMS) that the graph passes could not drop, because its readers count
the axes of its output and its producer cannot write that shape, becomes one copy reading the
input's bytes in the output's shape; ``fuse_reshape_reads`` then drops it where its readers can
read the input through that shape themselves.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypeGuard

import numpy as np

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import BlockType, LoweredOp, NpuOp, PoolKind, reads, writes
from npuplan.ir.shape import Shape4D, keeps_rows


MEMORY_TYPES = frozenset({"RESHAPE", "SQUEEZE", "EXPAND_DIMS"})  # ops that only relabel their input's bytes
PAD_TYPES = frozenset({"PAD", "PADV2"})  # PADV2: a PAD whose fill is its third input's value


def _copy(op: Op, name: str, ifm: Tensor, ifm_shape: Shape4D, ofm: Tensor, offset: Shape4D) -> NpuOp:
    """A 1x1 average pool copying ``ifm`` into its box of ``ofm`` at ``offset``. Its OFM shape is
    that box, as for a producer writing a concatenated slice in place: the rows it computes, so
    that it can end a cascade (a pad's main copy after a convolution, as Vela cascades it)."""
    return NpuOp(
        name=name, tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING,
        ifm=ifm, ifm_shape=ifm_shape, ofm=ofm, ofm_shape=ifm_shape, pool=PoolKind.AVERAGE,
        ofm_write_offset=offset, ofm_write_shape=ifm_shape, source_index=op.index,
    )


def pad_value(op: Op) -> int:
    """The stored integer a PAD (the output's zero point) or PADV2 (its constant's, written as it
    is: TFLite requires it quantized as the output) fills the border with."""
    ofm = op.outputs[0]
    value = op.inputs[2] if op.type == "PADV2" and len(op.inputs) > 2 else None
    if value is not None and value.data is not None:
        return int(value.data.reshape(-1)[0])
    return int(ofm.quant.zero_point[0]) if ofm.quant and ofm.quant.zero_point else 0


def _fill(op: Op, name: str, shape: Shape4D, offset: Shape4D) -> NpuOp:
    ofm = op.outputs[0]
    data = np.full(shape.as_list(), pad_value(op), dtype=np.int64)
    data.flags.writeable = False
    const = Tensor(f"{name}_const", tuple(shape.as_list()), ofm.dtype, ofm.quant, data)
    return _copy(op, name, const, shape, ofm, offset)


def _pads4(pads: Tensor) -> list[list[int]]:
    """A pad tensor's (before, after) rows right-aligned into NHWC (a 3D or 2D tensor has no batch)."""
    assert pads.data is not None
    rows: list[list[int]] = pads.data.reshape(-1, 2).tolist()
    return [[0, 0]] * (4 - len(rows)) + rows


def convert_pad(op: Op) -> tuple[NpuOp, ...]:
    """PAD (PADV2) -> main copy + top/bottom/left/right fills, then near/far fills of the padded
    depth (only for sides with padding; Vela legacy's names)."""
    ifm, pads, ofm = op.inputs[0], op.inputs[1], op.outputs[0]
    assert ifm is not None and pads is not None
    (top, bottom), (left, right), (near, far) = _pads4(pads)[1:]
    s, out = ifm.shape4d, ofm.shape4d
    name = op.name
    ops = [_copy(op, f"{name}_main", ifm, s, ofm, Shape4D(0, top, left, near))]
    if top:
        ops.append(_fill(op, f"{name}_top", Shape4D(1, top, s.w, s.c), Shape4D(0, 0, left, near)))
    if bottom:
        ops.append(_fill(op, f"{name}_bottom", Shape4D(1, bottom, s.w, s.c), Shape4D(0, top + s.h, left, near)))
    if left:
        ops.append(_fill(op, f"{name}_left", Shape4D(1, out.h, left, s.c), Shape4D(0, 0, 0, near)))
    if right:
        ops.append(_fill(op, f"{name}_right", Shape4D(1, out.h, right, s.c), Shape4D(0, 0, left + s.w, near)))
    if near:
        ops.append(_fill(op, f"{name}_near", Shape4D(1, out.h, out.w, near), Shape4D(0, 0, 0, 0)))
    if far:
        ops.append(_fill(op, f"{name}_far", Shape4D(1, out.h, out.w, far), Shape4D(0, 0, 0, near + s.c)))
    return tuple(ops)


def convert_reshape_copy(op: Op) -> tuple[NpuOp, ...]:
    """A reshape that stays -> one copy of the same bytes, read in the output's 4D shape (its batch
    elements as rows: the NPU has no batch axis, ``lowering.batches``)."""
    ifm, ofm = op.inputs[0], op.outputs[0]
    assert ifm is not None
    view = ofm.shape4d
    view = Shape4D(1, view.n * view.h, view.w, view.c) if view.n > 1 else view
    return (NpuOp(name=f"{op.name}_copy", tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING,
                  ifm=ifm, ifm_shape=view, ofm=ofm, ofm_shape=view, pool=PoolKind.AVERAGE, source_index=op.index),)


def convert_concat(op: Op) -> tuple[NpuOp, ...]:
    """CONCATENATION -> one copy per input at its offset along the concatenation axis."""
    ofm = op.outputs[0]
    rank = len(ofm.shape)
    axis = int(op.options["axis"]) % rank
    axis4 = axis + 4 - rank
    ops: list[NpuOp] = []
    position = 0
    for i, t in enumerate(x for x in op.inputs if x is not None):
        offset = [0, 0, 0, 0]
        offset[axis4] = position
        ops.append(_copy(op, f"{op.name}{i}_avgpool", t, t.shape4d, ofm, Shape4D(*offset)))  # Vela's names
        position += t.shape4d.as_list()[axis4]
    return tuple(ops)


def _box_copy(op: Op, name: str, src: Tensor, read: Shape4D, read_at: Shape4D, dst: Tensor, write_at: Shape4D,
              ) -> NpuOp:
    """A 1x1 average pool copying the box ``read`` of ``src`` at ``read_at`` to ``dst`` at ``write_at``."""
    return NpuOp(
        name=name, tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING, ifm=src, ifm_shape=read,
        ofm=dst, ofm_shape=dst.shape4d, pool=PoolKind.AVERAGE, ifm_read_offset=read_at, ofm_write_offset=write_at,
        ofm_write_shape=read, source_index=op.index,
    )


def mirror_pad_reason(op: Op) -> str | None:
    ifm, pads, ofm = op.inputs[0], op.inputs[1], op.outputs[0]
    assert ifm is not None
    if pads is None or pads.data is None or list(pads.shape) != [len(ifm.shape), 2] or not 2 <= len(ifm.shape) <= 4:
        return "The padding tensor must be constant with the shape [rank, 2], of a 2D, 3D or 4D input"
    (batch, rows, columns, depth), shape = _pads4(pads), ifm.shape4d
    if min(v for pair in (batch, rows, columns, depth) for v in pair) < 0:
        return "Padding values must not be negative"
    if any(batch):
        return "The pad tensor can only pad height, width and depth"
    reflect = str(op.options.get("mode", "REFLECT")) in ("REFLECT", "0")
    for (before, after), size in ((rows, shape.h), (columns, shape.w), (depth, shape.c)):
        if max(before, after) > size - (1 if reflect else 0):
            return "The number of pad values for each direction must not be larger than the ifm size in that dimension"
    if ifm.dtype != ofm.dtype or ifm.quant != ofm.quant:
        return "IFM and OFM data types and quantization must match"
    return None


def _band(op: Op, name: str, src: Tensor, read: Shape4D, read_at: Shape4D, dst: Tensor, write_at: Shape4D,
          step: tuple[int, int]) -> NpuOp:
    """A copy of the box ``read`` of ``src`` at ``read_at`` into ``dst`` from ``write_at``: a box
    copy, or a strided view written backwards along each axis of step -1 (a negative stride, as
    Vela's mirror pads write)."""
    if step == (1, 1):
        return _box_copy(op, name, src, read, read_at, dst, write_at)
    return NpuOp(
        name=name, tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING, ifm=src, ifm_shape=read,
        ofm=dst, ofm_shape=read, pool=PoolKind.AVERAGE, ifm_read_offset=read_at, ofm_write_offset=write_at,
        ofm_step=step, source_index=op.index,
    )


def _reflected(size: int, before: int, after: int, skip: int, sides: tuple[str, str],
               ) -> list[tuple[str, int, int, int]]:
    """The border bands of a padded axis whose input starts at ``before``: (side, size, where the
    band reads, where it writes its first element read). Each reads the band inside the edge
    (REFLECT, ``skip`` 1, leaves the edge itself out) in order and writes it backwards, from the
    element next to the input (``before``) or from the axis's last (``after``)."""
    bands = [(sides[0], before, before + skip, before - 1)] if before else []
    return bands + ([(sides[1], after, before + size - after - skip, before + size + after - 1)] if after else [])


def _backwards(count: int) -> int:
    """The step a band of ``count`` elements is written with: backwards, or forwards for one."""
    return -1 if count > 1 else 1


def _depth_bands(op: Op, rows: Tensor, middle: Shape4D, at: Shape4D, near: int, far: int, skip: int,
                 ) -> list[NpuOp]:
    """The reflected channels of a MIRROR_PAD padding the depth, over the input's box ``middle``
    of ``rows`` at ``at``: one copy per channel (the NPU walks channels forwards only), each
    reading the channel it mirrors there."""
    ops: list[NpuOp] = []
    for side, count, read_at, write_at in _reflected(middle.c, near, far, skip, ("near", "far")):
        for k in range(count):
            ops.append(_box_copy(op, f"{op.name}_pad_{side}{k}", rows, middle.with_c(1), at.with_c(read_at + k),
                                 rows, at.with_c(write_at - k)))
    return ops


def convert_mirror_pad(op: Op, *, through_rows: bool = False) -> tuple[NpuOp, ...]:
    """MIRROR_PAD -> the input copied into the middle of the output, then each border band
    reflected from the output itself as one copy, whatever its width, written backwards (a band
    of one row or column: a plain copy): each padded channel of the input's box, the top and
    bottom bands over the input's columns, then the left and right bands over all rows, their
    corners with them (Vela 5.2's default core's five copies). The first copy is a PAD's main
    copy: its input's producer may write the middle in place instead (``fuse_concat_writes``).

    ``through_rows`` (with left or right padding): the input and its top and bottom bands go to an
    intermediate map of the padded rows, which the left and right bands and one last copy read
    (Vela's legacy core's six copies): one more copy, but only those three touch the output, and
    none reads it (cheaper when the output lies in slow memory and the intermediate in fast)."""
    ifm, pads, ofm = op.inputs[0], op.inputs[1], op.outputs[0]
    assert ifm is not None and pads is not None
    (top, bottom), (left, right), (near, far) = _pads4(pads)[1:]
    skip = 1 if str(op.options.get("mode", "REFLECT")) in ("REFLECT", "0") else 0  # REFLECT leaves out the edge
    s, out = ifm.shape4d, ofm.shape4d
    rows, x0 = ofm, left
    if through_rows and (left or right):
        rows, x0 = Tensor(f"{op.name}_rows", (s.n, out.h, s.w, out.c), ofm.dtype, ofm.quant), 0
    ops = [_copy(op, f"{op.name}_init_pool", ifm, s, rows, Shape4D(0, top, x0, near))]
    ops += _depth_bands(op, rows, s, Shape4D(0, top, x0, 0), near, far, skip)
    for side, count, read_at, write_at in _reflected(s.h, top, bottom, skip, ("top", "bottom")):
        ops.append(_band(op, f"{op.name}_pad_{side}", rows, Shape4D(s.n, count, s.w, out.c),
                         Shape4D(0, read_at, x0, 0), rows, Shape4D(0, write_at, x0, 0), (_backwards(count), 1)))
    for side, count, read_at, write_at in _reflected(s.w, left, right, skip, ("left", "right")):
        ops.append(_band(op, f"{op.name}_pad_{side}", rows, Shape4D(s.n, out.h, count, out.c),
                         Shape4D(0, 0, read_at - left + x0, 0), ofm, Shape4D(0, 0, write_at, 0), (1, _backwards(count))))
    if rows is not ofm:
        ops.append(_box_copy(op, f"{op.name}_rows_copy", rows, rows.shape4d, Shape4D(0, 0, 0, 0), ofm,
                             Shape4D(0, 0, left, 0)))
    return tuple(ops)


def pads_columns(op: Op) -> bool:
    """Whether ``op`` is a MIRROR_PAD of left or right padding (whose lowering ``through_rows``
    changes)."""
    pads = op.inputs[1] if op.type == "MIRROR_PAD" and len(op.inputs) > 1 else None
    return pads is not None and pads.data is not None and any(_pads4(pads)[2])


_SLICE_COPY_TYPES = frozenset({"CONCATENATION", "MIRROR_PAD", *PAD_TYPES})  # copies of a whole input into a box of the output


def is_slice_copy(op: LoweredOp) -> TypeGuard[NpuOp]:
    """Whether ``op`` copies a whole input of a concatenation or pad into its box of the output:
    the ops ``fuse_concat_writes`` may drop (a lowering without any is the same with or without it)."""
    return (isinstance(op, NpuOp) and op.tflite_type in _SLICE_COPY_TYPES and op.ofm_write_offset is not None
            and not op.ifm.is_constant and op.ifm_read_offset is None)


def fuse_concat_writes(ops: tuple[LoweredOp, ...], outputs: tuple[Tensor, ...]) -> tuple[LoweredOp, ...]:
    """Drop each concatenation copy (or a PAD's main copy) whose input's producer can write its
    box directly: that op writes into the output tensor at the copy's offset (as Vela's concat
    writes do; a PAD's fills still write the border around it), so the input never exists on its
    own. A copy stays when its input is a network output, has another reader, is written by
    several ops, the CPU or an op already writing at an offset, or when the copy rescales (other
    quantization) or reshapes it."""
    producers: dict[int, list[LoweredOp]] = {}
    readers: dict[int, int] = {}
    for op in ops:
        for t in writes(op):
            producers.setdefault(id(t), []).append(op)
        for r in reads(op):
            readers[id(r)] = readers.get(id(r), 0) + 1
    kept_outputs = {id(t) for t in outputs}
    rewired: dict[int, NpuOp] = {}
    dropped: set[int] = set()
    for copy in ops:
        if not is_slice_copy(copy):
            continue
        source = copy.ifm
        writers = producers.get(id(source), [])
        if id(source) in kept_outputs or readers.get(id(source)) != 1 or len(writers) != 1:
            continue
        producer = writers[0]
        if not isinstance(producer, NpuOp) or id(producer) in rewired or producer.ofm_write_offset is not None:
            continue
        if source.quant != copy.ofm.quant or source.dtype != copy.ofm.dtype or producer.ofm_shape != copy.ifm_shape:
            continue
        rewired[id(producer)] = replace(producer, ofm=copy.ofm, ofm_write_offset=copy.ofm_write_offset,
                                        ofm_write_shape=producer.ofm_shape)
        dropped.add(id(copy))
    return tuple(rewired.get(id(op), op) for op in ops if id(op) not in dropped)  # type: ignore[arg-type]


def fuse_reshape_reads(ops: tuple[LoweredOp, ...], outputs: tuple[Tensor, ...], *,
                       framed_writes: bool = True, framed_reads: bool = True) -> tuple[LoweredOp, ...]:
    """Drop each reshape copy whose readers all read its whole output as an NPU input (they read the
    copy's input through the same 4D shape instead) or, where the reshape keeps the rows, whole rows
    of it from an offset as their IFM (the same rows of the input, through the output's view:
    ``NpuOp.ifm_frame``), or else whose input only it reads and only
    NPU ops write (they write the copy's output through their own view instead): the same bytes
    either way, and the tensor seen in another shape stays linear NHWC. A copy stays when a CPU op
    touches its input or output, a reader reads part of it, or it would join a network input to a
    network output. One copy at a time, so chains of them fold too. Without ``framed_writes`` (the
    emitter writes no box through another view) writers at offsets keep their copy; without
    ``framed_reads``, readers at offsets."""
    kept = {id(t) for t in outputs}
    while any(isinstance(op, NpuOp) and op.tflite_type in MEMORY_TYPES for op in ops) and (
            fused := _fuse_one_reshape(ops, kept, framed_writes, framed_reads)) is not None:
        ops = fused
    return ops


def _fuse_one_reshape(ops: tuple[LoweredOp, ...], kept: set[int], framed_writes: bool, framed_reads: bool,
                      ) -> tuple[LoweredOp, ...] | None:
    readers: dict[int, list[LoweredOp]] = {}
    writers: dict[int, list[LoweredOp]] = {}
    for op in ops:
        for t in dict.fromkeys(reads(op)):
            readers.setdefault(id(t), []).append(op)
        for t in writes(op):
            writers.setdefault(id(t), []).append(op)
    for copy in ops:
        if not (isinstance(copy, NpuOp) and copy.tflite_type in MEMORY_TYPES and copy.ofm_write_offset is None
                and copy.ifm_read_offset is None and copy.ifm.quant == copy.ofm.quant
                and copy.ifm.dtype == copy.ofm.dtype):
            continue
        rewired = _rewired(copy, readers, writers, kept, framed_writes, framed_reads)
        if rewired is not None:
            return tuple(rewired.get(id(op), op) for op in ops if op is not copy)
    return None


def _rewired(copy: NpuOp, readers: dict[int, list[LoweredOp]], writers: dict[int, list[LoweredOp]],
             kept: set[int], framed_writes: bool, framed_reads: bool) -> dict[int, LoweredOp] | None:
    """The ops that take the place of reshape ``copy`` (by id of the op each replaces): its readers
    reading its input whole in its shape; else its input's writers writing its output; else its
    readers reading their boxes of its input where they lie (``_read_through``) or, with
    ``framed_reads``, their rows of it through the output's view (``_reads_rows``); or None."""
    uses = readers.get(id(copy.ofm), [])
    makers = writers.get(id(copy.ifm), [])
    through = [_read_instead(use, copy, framed_reads) for use in uses] if id(copy.ofm) not in kept else []
    if uses and all(through) and not any(_reads_at_offset(use, copy.ofm) for use in uses):
        return {id(use): now for use, now in zip(uses, through) if now is not None}
    if id(copy.ifm) not in kept and readers.get(id(copy.ifm)) == [copy] and makers and all(
            isinstance(m, NpuOp) and (m.ofm_write_offset is not None and framed_writes
                                      or m.ofm_write_offset is None
                                      and m.ofm_shape.elements == copy.ifm_shape.elements) for m in makers):
        return {id(m): _writing(m, copy.ofm) for m in makers}  # type: ignore[arg-type]
    if uses and all(through):
        return {id(use): now for use, now in zip(uses, through) if now is not None}
    return None


def _read_instead(use: LoweredOp, copy: NpuOp, framed_reads: bool) -> NpuOp | None:
    """``use`` reading ``copy``'s input instead of its output: where the bytes it reads are a box of
    the input (``_read_through``), else, with ``framed_reads``, whole rows through the output's view."""
    found = _read_through(use, copy)
    if found is None and framed_reads and _reads_rows(use, copy):
        return _reading(use, copy.ofm, copy.ifm)
    return found


def _reading(op: LoweredOp, was: Tensor, now: Tensor) -> NpuOp:
    """``op`` (an NPU op, as ``_reads_rows`` checked) reading ``now`` wherever
    it read ``was``; rows at an offset, in ``was``'s view (``NpuOp.ifm_frame``)."""
    assert isinstance(op, NpuOp)
    frame = (op.ifm_frame or was.shape4d) if op.ifm is was and op.ifm_read_offset is not None else op.ifm_frame
    return replace(op, ifm=now if op.ifm is was else op.ifm, ifm2=now if op.ifm2 is was else op.ifm2, ifm_frame=frame)


def _reads_rows(op: LoweredOp, copy: NpuOp) -> bool:
    """Whether ``op`` is an NPU op of one feature-map operand reading whole rows of the reshape ``copy``'s
    output from a row offset, when the copy keeps its input's rows (``keeps_rows``): those are
    the input's rows, read through the output's view instead."""
    if not isinstance(op, NpuOp) or op.ofm is copy.ofm or op.ifm is not copy.ofm or op.ifm2 is not None:
        return False
    frame, offset = op.ifm_frame or copy.ofm.shape4d, op.ifm_read_offset
    return (offset is not None and (offset.n, offset.w, offset.c) == (0, 0, 0) and op.ifm_step is None
            and (op.ifm_shape.w, op.ifm_shape.c) == (frame.w, frame.c) and keeps_rows(frame, copy.ifm.shape4d))


def _writing(op: NpuOp, tensor: Tensor) -> NpuOp:
    """``op`` writing ``tensor`` (the same bytes in another shape); at an offset, in its old view."""
    frame = (op.ofm_frame or op.ofm.shape4d) if op.ofm_write_offset is not None else None
    return replace(op, ofm=tensor, ofm_frame=frame)


def _reads_at_offset(op: LoweredOp, tensor: Tensor) -> bool:
    """Whether NPU op ``op`` reads a box of ``tensor`` at an offset."""
    return isinstance(op, NpuOp) and (op.ifm is tensor and op.ifm_read_offset is not None
                                      or op.ifm2 is tensor and op.ifm2_read_offset is not None)


def _read_through(use: LoweredOp, copy: NpuOp) -> NpuOp | None:
    """``use`` reading ``copy``'s input wherever it read ``copy``'s output, or None if it cannot: an
    NPU op reading all of the output in the copy's shape reads the input in that shape; one reading
    a box at an offset (in the output's own coordinates) reads the same bytes as a box of the input
    at an offset (in the input's), when they are one run of elements that is such a box of the same
    shape (a row of a sequence, as a last time step's read)."""
    if not isinstance(use, NpuOp) or use.ofm is copy.ofm:
        return None
    was, now = copy.ofm, copy.ifm
    ifm, ifm_offset = use.ifm, use.ifm_read_offset
    ifm2, ifm2_offset = use.ifm2, use.ifm2_read_offset
    if ifm is was:
        # a strided view's offset is where its steps start, not a box
        ifm_offset = None if use.ifm_step is not None and ifm_offset is not None else _box_through(
            use.ifm_shape, ifm_offset, copy)
        if ifm_offset is None:
            return None
        ifm = now
    if ifm2 is was:
        ifm2_offset = _box_through(use.ifm2_shape, ifm2_offset, copy) if use.ifm2_shape is not None else None
        if ifm2_offset is None:
            return None
        ifm2 = now
    return replace(use, ifm=ifm, ifm2=ifm2,
                   ifm_read_offset=None if ifm_offset is _WHOLE else ifm_offset,
                   ifm2_read_offset=None if ifm2_offset is _WHOLE else ifm2_offset)


_WHOLE = Shape4D(0, 0, 0, 0)  # ``_box_through``'s answer for a whole read (no offset)


def _box_through(view: Shape4D, offset: Shape4D | None, copy: NpuOp) -> Shape4D | None:
    """Where a read of ``copy``'s output (``view``, at ``offset`` in the output's coordinates, or
    whole in the copy's shape) lies in its input: ``_WHOLE`` for a whole read, the offset of the
    same box in the input's coordinates, or None when the bytes are no such box."""
    if offset is None:
        return _WHOLE if view == copy.ofm_shape else None
    run = linear_run(copy.ofm.shape4d, offset, view)
    found = None if run is None else run_as_box(copy.ifm.shape4d, *run)
    if found is None or found[1] != view or found[0].n:  # (the NPU reads no batch axis)
        return None
    return found[0]


def _strides(shape: Shape4D) -> tuple[int, int, int, int]:
    """Elements between neighbours along N, H, W and C of linear NHWC ``shape``."""
    return shape.h * shape.w * shape.c, shape.w * shape.c, shape.c, 1


def linear_run(shape: Shape4D, offset: Shape4D, box: Shape4D) -> tuple[int, int] | None:
    """(first element, element count) of the box ``box`` at ``offset`` of linear NHWC ``shape``
    when its elements are one run (every axis inside the outermost one it spans is whole), else None."""
    dims, size = shape.as_list(), box.as_list()
    spans = next((k for k in range(4) if size[k] > 1), 3)
    if any(size[k] != dims[k] for k in range(spans + 1, 4)):
        return None
    return sum(o * s for o, s in zip(offset.as_list(), _strides(shape))), box.elements


def run_as_box(shape: Shape4D, start: int, count: int) -> tuple[Shape4D, Shape4D] | None:
    """(offset, box) of linear NHWC ``shape`` whose elements are exactly the run of ``count`` from
    ``start`` (whole along every axis inside the one it spans, one along those outside), or None."""
    dims, strides = shape.as_list(), _strides(shape)
    for axis in (3, 2, 1, 0):
        step = strides[axis]
        if start % step or count % step or start + count > shape.elements:
            continue
        first = (start // step) % dims[axis]
        if first + count // step > dims[axis]:
            continue
        offset = [(start // strides[k]) % dims[k] if k <= axis else 0 for k in range(4)]
        box = [1] * axis + [count // step] + dims[axis + 1:]
        return Shape4D(*offset), Shape4D(*box)
    return None
