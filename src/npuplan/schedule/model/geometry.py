"""Stripe geometry and storage sizes: pure arithmetic on shapes, in rows and bytes."""

from __future__ import annotations

from typing import NamedTuple

from npuplan.ir.lowered import BlockType, NpuOp, Resampling
from npuplan.ir.shape import Shape4D
from npuplan.units import ALIGN_BYTES, BRICK_DEPTH, round_up


def storage_bytes(shape: Shape4D, element_bytes: int, fmt: str = "NHWC") -> int:
    """Bytes a tensor of ``shape`` occupies, rounded up to the allocator alignment."""
    depth = round_up(shape.c, BRICK_DEPTH) if fmt == "NHCWB16" else shape.c
    return round_up(shape.n * shape.h * shape.w * depth * element_bytes, ALIGN_BYTES)


def ifm_rows_for(op: NpuOp, ofm_rows: int) -> int:
    """IFM rows read to produce ``ofm_rows`` OFM rows (clipped to the IFM height). An upscaling op
    reads its window in the upscaled IFM, so a row more than the window over the factor when the
    window does not start on a source row."""
    k = op.kernel
    rows = (ofm_rows - 1) * k.stride_y + k.dilated_height
    if op.upscale > 1:
        rows = -(-rows // op.upscale) + 1
    return max(1, min(rows, op.ifm_shape.h))


def input_rows(op: NpuOp, view: Shape4D, ofm_rows: tuple[int, int]) -> tuple[int, int]:
    """IFM rows ``[lo, hi)`` (in ``view``) that OFM rows ``ofm_rows`` of ``op`` read.

    Kernel footprint: ``a * stride - pad_top`` to ``(b - 1) * stride + dilated_height - pad_top``,
    in the upscaled IFM for ops that upscale it (divided by the factor).
    """
    return window_rows(row_window(op, view), *ofm_rows)


class RowWindow(NamedTuple):
    """What ``input_rows`` reads of an op and its IFM view, for a stripe walk that asks it often."""

    stride_y: int
    dilated_height: int
    pad_top: int
    upscale: int
    view_height: int


def row_window(op: NpuOp, view: Shape4D) -> RowWindow:
    k = op.kernel
    return RowWindow(k.stride_y, k.dilated_height, k.padding.top, op.upscale, view.h)


def window_rows(window: RowWindow, a: int, b: int) -> tuple[int, int]:
    """``input_rows`` of OFM rows ``[a, b)`` through ``window``."""
    stride, dilated, top, up, height = window
    lo = (a * stride - top) // up
    hi = -(-((b - 1) * stride + dilated - top) // up)
    lo = min(max(lo, 0), height - 1)
    return lo, min(max(hi, lo + 1), height)


def ifm_stripe_for(op: NpuOp, ofm_stripe: Shape4D) -> Shape4D:
    """The IFM box read per step when producing ``ofm_stripe``."""
    if ofm_stripe.h >= op.ofm_shape.h:
        return op.ifm_shape
    return op.ifm_shape.with_h(ifm_rows_for(op, ofm_stripe.h))


def ifm2_stripe_for(op: NpuOp, ifm_stripe: Shape4D) -> Shape4D | None:
    if op.ifm2_shape is None:
        return None
    return op.ifm2_shape.with_h(min(ifm_stripe.h, op.ifm2_shape.h))


def producer_rows_for(consumer: NpuOp, consumer_ofm_rows: int) -> int:
    """Rows the producer must output per step so ``consumer`` can make ``consumer_ofm_rows`` rows.

    As in Vela's stripe proposal: the consumer's stripe times its vertical stride (over its upscaling
    factor), clipped to the producer's OFM height.
    """
    rows = -(-consumer_ofm_rows * consumer.kernel.stride_y // consumer.upscale)
    return max(1, min(rows, consumer.ifm_shape.h))


def rolling_buffer_rows(producer_rows: int, consumer_ifm_rows: int) -> int:
    """Rows a rolling buffer must hold when the consumer pulls its producer stripe by stripe.

    Before a consumer stripe reads its IFM window (at most ``consumer_ifm_rows`` rows starting at
    ``lo``) the producer has run whole stripes of ``producer_rows`` until the window's last row
    exists, so it may have written up to ``producer_rows - 1`` rows beyond the window; rows before
    ``lo`` are never read again. Every row from ``lo`` to the last one written must still be held.
    """
    return max(1, consumer_ifm_rows + producer_rows - 1)


def rolling_rows(producer: NpuOp, producer_rows: int, consumer: NpuOp, consumer_ofm_rows: int) -> int:
    """Rows of the rolling buffer between two cascaded ops (never more than the tensor's height)."""
    rows = rolling_buffer_rows(producer_rows, ifm_rows_for(consumer, consumer_ofm_rows))
    return min(rows, producer.ofm_shape.h)


def rolling_buffer_bytes(producer: NpuOp, producer_rows: int, consumer: NpuOp, consumer_ofm_rows: int,
                         fmt: str = "NHCWB16") -> int:
    """Size of the rolling buffer (in format ``fmt``) between two cascaded ops."""
    rows = rolling_rows(producer, producer_rows, consumer, consumer_ofm_rows)
    width = max(producer.ofm_shape.w, consumer.ifm_shape.w)
    depth = round_up(producer.ofm_shape.c, BRICK_DEPTH) if fmt == "NHCWB16" else producer.ofm_shape.c
    return round_up(rows * width * depth * producer.ofm.dtype.size_bytes, ALIGN_BYTES)


def is_cascadable(op: NpuOp, *, fm_ifm2: bool = False) -> bool:
    """Whether ``op`` can run stripe by stripe in a cascade (Vela's rules: no FC/reduce, no FM ifm2).

    Unlike Vela, an op reading a box of a whole input (a slice read in place) may start a cascade
    and an op writing its box of a whole output (a concatenated slice written in place) may end
    one: only the maps between cascaded ops are rolling buffers (``links_rolling``)."""
    if op.block_type in (BlockType.VECTOR_PRODUCT, BlockType.REDUCE_SUM) or op.strided_views:
        return False
    box = op.ofm_write_shape
    if box is not None and (box.h != op.ofm_shape.h or box.w != op.ofm_shape.w):
        return False  # it writes part of its OFM rows (a pad border), not whole rows of a depth slice
    if op.writes_transposed or (op.ofm_write_offset is None and op.ofm_shape != op.ofm.shape4d and op.ofm.shape):
        return False  # its OFM rows are not the tensor's rows (a transpose's are its columns; a reshaped view)
    if op.ofm_shape.h <= 1:
        return False
    if op.ifm2 is not None and not op.ifm2.is_constant:
        # with ``fm_ifm2`` (cascades through branches), an elementwise op reading its second
        # feature map row for row or as one broadcast row
        return (fm_ifm2 and op.block_type is BlockType.ELEMENTWISE and op.ifm2_shape is not None
                and op.ifm2_shape.h in (1, op.ofm_shape.h))
    return True


def links_rolling(producer: NpuOp, consumer: NpuOp) -> bool:
    """Whether the map between two cascadable ops can be a rolling buffer: the producer writes it
    whole (not a box of a larger map) and the consumer reads it from its first row (no offset)."""
    return producer.ofm_write_offset is None and not consumer.reads_at_offset


def min_stripe_rows(op: NpuOp, consumer: NpuOp | None) -> int:
    """Smallest OFM stripe ``op`` can usefully produce: its consumer's vertical stride."""
    return max(1, min(consumer.kernel.stride_y if consumer is not None else 1, op.ofm_shape.h))


def stripe_row_step(op: NpuOp) -> int:
    """OFM rows every stripe of ``op`` must be a multiple of (its OFM height: it cannot be striped)
    so that each stripe starts reading where the hardware can start.

    The hardware upscales the IFM box it is given from the box's first row, so a nearest-upscaled
    op (a resize's pools) reads the first copy of a source row first: a stripe must start reading
    at an even upscaled row, ``first_row * stride - pad_top``. A one-row kernel of stride 1 and no
    top padding is the exception (the emitter runs an odd first row as an operation of its own,
    ``emit.upscale``); transpose upscaling pads instead, and other ops start anywhere."""
    k = op.kernel
    if op.strided_views:
        return max(1, op.ofm_shape.h)
    if op.resampling is not Resampling.NEAREST or (k.height == 1 and k.stride_y == 1 and k.padding.top == 0):
        return 1
    if k.padding.top % 2:  # stripe m starts at m * step * stride - pad_top: odd for every even m
        return max(1, op.ofm_shape.h)
    return 1 if k.stride_y % 2 == 0 else 2


def aligned_stripe_rows(op: NpuOp, rows: int) -> int:
    """``rows`` rounded up to ``stripe_row_step(op)``, at most the OFM height."""
    step = stripe_row_step(op)
    return max(1, min(op.ofm_shape.h, -(-rows // step) * step))
