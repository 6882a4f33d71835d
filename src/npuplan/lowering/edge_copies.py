"""Drop the copy that puts an edge-padded operation's input into bricks where the input's producer
can write those bricks itself (``fuse_edge_copies``).

A half-pixel bilinear resize reads its input padded with the input's own edges, which the hardware
does by reading re-based tiles of a map stored NHCWB16 (``NpuOp.edge_padding``,
``formats.brick_format_tensors``). Vela copies the input into such a map first (``resize``'s
``rb_init`` copy), whatever wrote it. When a kernel operation alone wrote the input, whole and
in its own shape, and only that copy reads it, the operation may as well write the bricks: the
same values, one copy fewer (its cycles, and the copy's map is not held beside its source).
"""

from __future__ import annotations

from dataclasses import replace

from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import Activation, BlockType, CpuOp, LoweredOp, NpuOp, PoolKind, Resampling, reads, writes

_KERNEL_BLOCKS = frozenset({BlockType.CONV, BlockType.DEPTHWISE, BlockType.POOLING})


def _plain_copy(op: LoweredOp) -> bool:
    """Whether ``op`` is a 1x1 average pool copying a whole map to another of the same shape,
    type and quantization, element for element (no offset, view, resampling, activation or table)."""
    if not isinstance(op, NpuOp) or op.pool is not PoolKind.AVERAGE or op.kernel.elements != 1:
        return False
    same_view = op.ifm_shape == op.ofm_shape == op.ifm.shape4d == op.ofm.shape4d
    return (same_view and op.resampling is Resampling.NONE and op.activation is Activation.NONE and op.lut is None
            and op.rescale is None and op.fixed_point is None and op.ifm2 is None and op.ifm_read_offset is None
            and op.ofm_write_offset is None and op.ofm_step is None and op.ifm_step is None
            and op.ifm.quant == op.ofm.quant and op.ifm.dtype == op.ofm.dtype)


def _writes_whole(op: LoweredOp, tensor: Tensor) -> bool:
    """Whether ``op`` is a kernel operation writing all of ``tensor`` in its own shape and order."""
    return (isinstance(op, NpuOp) and op.block_type in _KERNEL_BLOCKS and op.ofm is tensor
            and op.ofm_shape == tensor.shape4d and op.ofm_write_offset is None and op.ofm_write_shape is None
            and op.ofm_frame is None and op.ofm_step is None and not op.writes_transposed)


def fuse_edge_copies(ops: tuple[LoweredOp, ...], outputs: tuple[Tensor, ...]) -> tuple[LoweredOp, ...]:
    """Drop each plain copy (``_plain_copy``) whose readers all pad it with its edges and whose
    input is written by one kernel operation alone (``_writes_whole``), with no CPU operator
    between the two (the map would cross NPU partitions, which keeps it NHWC), and read by that
    copy alone; its readers read the input instead. A network input or output keeps its copy."""
    readers: dict[int, list[LoweredOp]] = {}
    writers: dict[int, list[int]] = {}
    for index, op in enumerate(ops):
        for t in dict.fromkeys(reads(op)):
            readers.setdefault(id(t), []).append(op)
        for t in writes(op):
            writers.setdefault(id(t), []).append(index)
    kept = {id(t) for t in outputs}
    rewired: dict[int, NpuOp] = {}
    dropped: set[int] = set()
    for at, copy in enumerate(ops):
        if not _plain_copy(copy) or id(copy.ofm) in kept:  # type: ignore[union-attr]
            continue
        assert isinstance(copy, NpuOp)
        uses, makers = readers.get(id(copy.ofm), []), writers.get(id(copy.ifm), [])
        if not uses or not all(isinstance(u, NpuOp) and u.edge_padding and u.ifm is copy.ofm for u in uses):
            continue
        if id(copy.ifm) in kept or readers.get(id(copy.ifm)) != [copy] or len(makers) != 1:
            continue
        if not _writes_whole(ops[makers[0]], copy.ifm) or any(isinstance(o, CpuOp) for o in ops[makers[0]:at]):
            continue
        rewired.update((id(u), replace(u, ifm=copy.ifm)) for u in uses if isinstance(u, NpuOp))
        dropped.add(id(copy))
    return tuple(rewired.get(id(op), op) for op in ops if id(op) not in dropped)  # type: ignore[misc]
