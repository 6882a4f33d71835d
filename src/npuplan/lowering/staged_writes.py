"""The staged form of an operator whose output is written in short bursts (``staged_output``).

Some operations write their output map in runs far shorter than a memory burst: a TRANSPOSE's
steps write with the height and width strides swapped (one pixel's depth, often one element, a
run), a half-pixel RESIZE_BILINEAR's phases and a dilated convolution's phases write every other
row and column (``NpuOp.ofm_step``). Where the output lies in slow memory (a network output, or a
map the CPU reads, both in the arena: DRAM on Dedicated_Sram) each short run costs a burst. Staged,
those operations write an intermediate map of the output's shape instead, which the planner may
keep in fast storage, and one copy (a 1x1 average pool, element for element) writes it to the
output in whole rows: one more operation, but the slow memory sees long bursts only. Which form
is cheaper depends on where the maps end up, so both are offered and priced (``lower``'s
``other_forms``, ``form_price``).

Reads in short runs have their staging in the scheduler: an arena map whose readers read it whole
is copied by one DMA into fast storage before its first reader where that prices faster
(``schedule.moves.staging``; a DMA runs beside the NPU, where a copy here would be an operation).
"""

from __future__ import annotations

from dataclasses import replace

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import Activation, BlockType, LoweredOp, NpuOp, PoolKind
from npuplan.ir.types import DataType

_COPIED_TYPES = (DataType.INT8, DataType.UINT8, DataType.INT16)  # maps a 1x1 pool copies exactly


def writes_in_short_runs(op: LoweredOp) -> bool:
    """Whether ``op`` is an NPU operation writing its OFM in runs shorter than its rows: with the
    height and width strides swapped, or every ``step``-th row and column (a strided view)."""
    return isinstance(op, NpuOp) and (op.writes_transposed or op.ofm_step is not None)


def may_stage(op: Op, lowered: tuple[LoweredOp, ...]) -> bool:
    """Whether ``staged_output`` changes ``lowered`` (the NPU operations of ``op``): one of them
    writes ``op``'s output in short runs (``writes_in_short_runs``), and the output is a map one
    copy moves exactly (8 or 16 bits, one batch of at most four axes: the copy the emitter writes)."""
    out = op.outputs[0] if op.outputs else None
    return (out is not None and out.dtype in _COPIED_TYPES and out.quant is not None
            and len(out.shape) <= 4 and out.shape4d.n == 1
            and any(isinstance(o, NpuOp) and o.ofm is out and writes_in_short_runs(o) for o in lowered))


def staged_output(op: Op, lowered: tuple[LoweredOp, ...]) -> tuple[LoweredOp, ...] | None:
    """``lowered`` (the NPU operations of ``op``) with every write of ``op``'s output going to an
    intermediate map of its shape, type and quantization (``<output>_staged``), then one plain
    copy of that map to the output; None when staging changes nothing (``may_stage``). The
    writers keep their activations and tables: the copy moves their results as they are."""
    if not may_stage(op, lowered):
        return None
    out = op.outputs[0]
    staged = Tensor(f"{out.name}_staged", out.shape, out.dtype, out.quant)
    moved = tuple(replace(o, ofm=staged) if isinstance(o, NpuOp) and o.ofm is out else o for o in lowered)
    copy = NpuOp(name=f"{staged.name}_avgpool", tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING,
                 ifm=staged, ifm_shape=staged.shape4d, ofm=out, ofm_shape=out.shape4d, pool=PoolKind.AVERAGE,
                 activation=Activation.NONE, source_index=op.index)
    return (*moved, copy)
