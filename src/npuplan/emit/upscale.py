"""Stripes of an upscaling operation (IFM resampling x2) aligned on the rows the hardware can start at.

The hardware upscales the IFM box it is given, so an operation's first (upscaled) row is always
the first copy of a source row: with nearest resampling row ``2r`` (its second copy ``2r + 1``
equals it), with transpose resampling row ``2r`` (``2r + 1`` is an inserted zero). A stripe whose
kernel starts reading at an odd upscaled row (the planner may stripe an upscaling op by an odd
number of rows) is expressed exactly as:

- transpose resampling: the IFM box starting one source row later, with one row of top padding
  (the padding is the zero point, as the inserted zeros are);
- nearest resampling with a one-row kernel (the pools of a resize): the stripe's first OFM row as
  an operation of its own (row ``2r + 1`` is source row ``r``, which a one-row box starting at ``r``
  gives), then the rest of the stripe, which starts on an even row.

Anything else is refused (``EmitError``; the op can stay on the CPU).
"""

from __future__ import annotations

from dataclasses import replace

from npuplan.commands.stream import input_rows
from npuplan.commands.types import Box, NpuStripeCommand, Operand
from npuplan.errors import EmitError
from npuplan.ir.lowered import NpuOp, Resampling


def first_row_read(op: NpuOp, ofm_row: int) -> int:
    """The upscaled IFM row the kernel reads first for OFM row ``ofm_row`` (negative: padding)."""
    return ofm_row * op.kernel.stride_y - op.kernel.padding.top


def aligned(op: NpuOp, ofm_rows: tuple[int, int], ifm_start: int) -> bool:
    """Whether an IFM box starting at source row ``ifm_start`` is one ``aligned_commands`` made for
    the stripe ``ofm_rows`` starting on an odd upscaled row."""
    need = first_row_read(op, ofm_rows[0])
    if op.resampling is Resampling.TRANSPOSE:
        return 2 * ifm_start == need + 1
    return (op.resampling is Resampling.NEAREST and op.kernel.height == 1 and ofm_rows[1] - ofm_rows[0] == 1
            and 2 * ifm_start == need - 1)


def _with_rows(operand: Operand, rows: tuple[int, int]) -> Operand:
    start, end = operand.box.start, operand.box.end
    return replace(operand, box=Box((start[0], rows[0], *start[2:]), (end[0], rows[1], *end[2:])))


def aligned_commands(op: NpuOp, command: NpuStripeCommand) -> list[NpuStripeCommand]:
    """``command`` as stripes whose IFM boxes start where the hardware can start reading
    (``command`` itself unless ``op`` upscales and the stripe starts on an odd upscaled row)."""
    shift = op.ofm_write_offset.h if op.ofm_write_offset is not None else 0  # the box is in the tensor's rows
    a, b = (row - shift for row in command.ofm.box.rows)
    need = first_row_read(op, a)
    if op.upscale == 1 or command.ifm is None or need <= 0 or need % 2 == 0:
        return [command]
    lo, hi = command.ifm.box.rows
    if op.resampling is Resampling.TRANSPOSE:
        start = need // 2 + 1  # the inserted zero row becomes one row of padding
        if start >= hi:
            raise EmitError(op.name, "a transpose-upscaled stripe reads only inserted zeros")
        return [replace(command, ifm=_with_rows(command.ifm, (start, hi)))]
    k = op.kernel
    if op.resampling is Resampling.NEAREST and k.height == 1 and k.stride_y == 1 and k.padding.top == 0:
        first = replace(command, ofm=_with_rows(command.ofm, (shift + a, shift + a + 1)),
                        ifm=_with_rows(command.ifm, (need // 2, need // 2 + 1)))
        if b == a + 1:
            return [first]
        rest_rows = input_rows(op, op.ifm_shape, (a + 1, b))
        rest = replace(command, ofm=_with_rows(command.ofm, (shift + a + 1, shift + b)),
                       ifm=_with_rows(command.ifm, rest_rows))
        return [first, rest]
    raise EmitError(op.name, f"a stripe of a {op.resampling}-upscaled op starts reading at odd upscaled row {need} "
                    f"with a {k.height}-row kernel (not expressible)")
