"""Feature-map operands of a stripe as the hardware addresses them: region, tile boxes, strides.

A whole feature map keeps row r at ``r * row_bytes``; a rolling buffer of R rows keeps row r in
slot ``r % R``, so a stripe box that crosses the end of the buffer is two tiles: tile 0 from the
box's first row to the buffer's end, tile 2 (the bottom-left tile) from slot 0 on, with
``height_0 == height_1`` the rows before the wrap (Vela's convention for rolling buffers).
NHCWB16 keeps 16-channel bricks: x stride 16 elements, channel-brick stride 16 x width.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

from npuplan.commands.types import Address, BufferKind, Operand
from npuplan.errors import EmitError
from npuplan.hw.memory import MemArea
from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import element_type
from npuplan.ir.shape import Shape4D, keeps_rows
from npuplan.ir.types import DataType
from npuplan.records import record
from npuplan.units import round_up


@record(eq=False)
class Geometry:
    """How a buffer lays out its tensor: format, full shape, bytes per row and rolling rows."""

    nhcwb16: bool
    shape: Shape4D
    element_bytes: int
    rows: int | None

    @property
    def stored_depth(self) -> int:
        return round_up(self.shape.c, 16) if self.nhcwb16 else self.shape.c

    @property
    def row_bytes(self) -> int:
        return self.shape.w * self.stored_depth * self.element_bytes

    def strides(self, step: tuple[int, int] = (1, 1)) -> tuple[int, int, int]:
        """Byte strides (y, x, c) of a view of every ``step``-th row and column (NHWC only: a
        brick's x stride is its 16 channels')."""
        e = self.element_bytes
        if self.nhcwb16:
            if step != (1, 1):
                raise ValueError(f"a strided view {step} of an NHCWB16 map")
            return self.row_bytes, 16 * e, 16 * e * self.shape.w
        return step[0] * self.row_bytes, step[1] * self.shape.c * e, e

    def batch_bytes(self, n: int) -> int:
        """Byte offset of batch element ``n`` of a whole map (a slice read at a batch offset: each
        element's rows follow the previous element's)."""
        return n * self.shape.h * self.row_bytes

    def offset(self, y: int, x: int, c: int) -> int:
        """Byte offset of element (y, x, c) inside the buffer."""
        slot = y % self.rows if self.rows is not None else y
        e = self.element_bytes
        base = slot * self.row_bytes
        if self.nhcwb16:
            return base + (c // 16) * 16 * e * self.shape.w + x * 16 * e + (c % 16) * e
        return base + (x * self.shape.c + c) * e


def geometry(operand: Operand, tensor: Tensor, view: Shape4D, nhcwb16: bool, *,
             view_rows: tuple[int, int] | None = None,
             view_channels: tuple[int, int] | None = None) -> tuple[Geometry, tuple[int, ...], tuple[int, ...]]:
    """The buffer geometry and the box ``(y0, x0, c0), (y1, x1, c1)`` in it the operand touches.

    A view that reshapes the tensor (same bytes, another shape) is addressed in the view's shape
    and must be a whole NHWC map (the stream records it as the whole tensor): rows ``view_rows``
    of the view are then one contiguous run of its bytes, addressed at the view's row stride, and
    ``view_channels`` (a depth slice's) at the view's channel offset. A view that keeps the tensor's
    rows (``keeps_rows``) may be read in whole rows of the tensor: the same rows of the
    view (``NpuOp.ifm_frame``)."""
    full = tensor.shape4d
    rows = operand.buffer.rows if operand.buffer.kind is BufferKind.ROLLING else None
    start, end = operand.box.start, operand.box.end
    if (view.h, view.w, view.c) != (full.h, full.w, full.c):
        whole = start[1:] == (0, 0, 0) and end[1:] == (full.h, full.w, full.c)
        in_rows = keeps_rows(view, full) and start[2:] == (0, 0) and end[2:] == (full.w, full.c)
        if nhcwb16 or rows is not None or not (whole or in_rows) or start[0]:
            raise EmitError(operand.tensor, f"a reshaped view {view} of a {full} tensor read in part or in NHCWB16")
        # contiguous bytes of the NHWC map
        y0, y1 = view_rows if view_rows is not None else (start[1], end[1]) if in_rows else (0, view.h)
        c0, c1 = view_channels if view_channels is not None else (0, view.c)
        return Geometry(False, view, element_type(tensor).size_bytes, None), (y0, 0, c0), (y1, view.w, c1)
    return Geometry(nhcwb16, full, tensor.dtype.size_bytes, rows), start[1:], end[1:]


_DATA_TYPES = {DataType.INT8: "INT8", DataType.UINT8: "UINT8", DataType.INT16: "INT16", DataType.INT32: "INT32"}


def feature_map(api: ModuleType, operand: Operand, tensor: Tensor, view: Shape4D, *, nhcwb16: bool,
                address: Address, regions: Mapping[MemArea, int], view_rows: tuple[int, int] | None = None,
                view_channels: tuple[int, int] | None = None) -> Any:
    """The API's ``NpuFeatureMap`` for ``operand`` (its buffer at ``address``); ``view_rows`` the
    rows a stripe reads of a reshaped view (see ``geometry``)."""
    geo, (y0, x0, c0), (y1, x1, c1) = geometry(operand, tensor, view, nhcwb16, view_rows=view_rows,
                                               view_channels=view_channels)
    if nhcwb16 and c0 % 16:
        raise EmitError(operand.tensor, f"an NHCWB16 box starting at channel {c0}")
    fm = api.NpuFeatureMap()
    fm.data_type = getattr(api.NpuDataType, _DATA_TYPES[element_type(tensor)])
    fm.region = regions[address.area]
    fm.shape = api.NpuShape3D(height=y1 - y0, width=x1 - x0, depth=c1 - c0)
    height_0 = y1 - y0
    batch = operand.box.start[0]
    if batch and geo.rows is not None:
        raise EmitError(operand.tensor, f"batch element {batch} of a rolling buffer")
    addresses = [address.offset + geo.batch_bytes(batch) + geo.offset(y0, x0, c0), 0, 0, 0]
    if geo.rows is not None:
        if y1 - y0 > geo.rows:
            raise EmitError(operand.tensor, f"a box of {y1 - y0} rows in a rolling buffer of {geo.rows}")
        wrap = geo.rows - y0 % geo.rows
        if y1 - y0 > wrap:
            height_0 = wrap
            addresses[2] = address.offset + geo.offset(y0 + wrap, x0, c0)
    fm.tiles = api.NpuTileBox(height_0=height_0, height_1=height_0, width_0=x1 - x0, addresses=addresses)
    quant = tensor.quant  # None: a raw 32-bit intermediate (no scaling, zero point 0), as Vela's
    fm.quantization = None if quant is None else api.NpuQuantization(scale_f32=float(quant.scale[0]),
                                                                      zero_point=int(quant.zero_point[0]))
    fm.layout = api.NpuLayout.NHCWB16 if nhcwb16 else api.NpuLayout.NHWC
    sy, sx, sc = geo.strides()
    fm.strides = api.NpuShape3D(height=sy, width=sx, depth=sc)
    fm.name = operand.tensor
    return fm


def transposed_ofm(api: ModuleType, operand: Operand, tensor: Tensor, view: Shape4D, *, address: Address,
                   regions: Mapping[MemArea, int]) -> Any:
    """The OFM of a TRANSPOSE's 1x1 pool (``lowering.slices.convert_transpose``): the op walks its
    ``view`` (H x W x C) and writes element (y, x, c) where the transposed map, laid out as
    W x H x C, keeps it: NHWC with the height and width strides swapped (as Vela's output)."""
    if operand.buffer.kind is not BufferKind.FEATURE_MAP or view.elements != tensor.elements:
        raise EmitError(operand.tensor, "a transpose's OFM must be a whole NHWC feature map")
    e = tensor.dtype.size_bytes
    (y0, x0, c0), (y1, x1, c1) = operand.box.start[1:], operand.box.end[1:]
    full = tensor.shape4d
    if (view.h, view.w, view.c) != (full.h, full.w, full.c):  # the stream records the whole tensor
        if operand.box.start[1:] != (0, 0, 0) or operand.box.end[1:] != (full.h, full.w, full.c):
            raise EmitError(operand.tensor, "a transpose's OFM written in part")
        (y0, x0, c0), (y1, x1, c1) = (0, 0, 0), (view.h, view.w, view.c)
    stride_y, stride_x = view.c * e, view.h * view.c * e
    fm = api.NpuFeatureMap()
    fm.data_type = getattr(api.NpuDataType, _DATA_TYPES[tensor.dtype])
    fm.region = regions[address.area]
    fm.shape = api.NpuShape3D(height=y1 - y0, width=x1 - x0, depth=c1 - c0)
    base = address.offset + y0 * stride_y + x0 * stride_x + c0 * e
    fm.tiles = api.NpuTileBox(height_0=y1 - y0, height_1=y1 - y0, width_0=x1 - x0, addresses=[base, 0, 0, 0])
    quant = tensor.quant
    assert quant is not None
    fm.quantization = api.NpuQuantization(scale_f32=float(quant.scale[0]), zero_point=int(quant.zero_point[0]))
    fm.layout = api.NpuLayout.NHWC
    fm.strides = api.NpuShape3D(height=stride_y, width=stride_x, depth=e)
    fm.name = operand.tensor
    return fm


def strided_view(api: ModuleType, operand: Operand, tensor: Tensor, view: Shape4D, *, origin: Shape4D,
                 step: tuple[int, int], channels: tuple[int, int], address: Address,
                 regions: Mapping[MemArea, int]) -> Any:
    """A strided view of a whole NHWC map (``NpuOp.ifm_step``): the ``view.h`` x ``view.w`` elements
    at rows ``origin.h + step[0] * i`` and columns ``origin.w + step[1] * j``, channels ``channels``
    from ``origin.c``, addressed by the map's strides times the step (the hardware reads and
    writes at any byte strides; a rolling buffer or brick format cannot be viewed so)."""
    if operand.buffer.kind is not BufferKind.FEATURE_MAP:
        raise EmitError(operand.tensor, "a strided view of a map that is not whole in memory")
    geo = Geometry(False, tensor.shape4d, tensor.dtype.size_bytes, None)
    c0, c1 = channels
    fm = api.NpuFeatureMap()
    fm.data_type = getattr(api.NpuDataType, _DATA_TYPES[tensor.dtype])
    fm.region = regions[address.area]
    fm.shape = api.NpuShape3D(height=view.h, width=view.w, depth=c1 - c0)
    base = address.offset + geo.batch_bytes(origin.n) + geo.offset(origin.h, origin.w, origin.c + c0)
    fm.tiles = api.NpuTileBox(height_0=view.h, height_1=view.h, width_0=view.w, addresses=[base, 0, 0, 0])
    quant = tensor.quant
    fm.quantization = None if quant is None else api.NpuQuantization(scale_f32=float(quant.scale[0]),
                                                                      zero_point=int(quant.zero_point[0]))
    fm.layout = api.NpuLayout.NHWC
    sy, sx, sc = geo.strides(step)
    fm.strides = api.NpuShape3D(height=sy, width=sx, depth=sc)
    fm.name = operand.tensor
    return fm


def edge_padded_tiles(api: ModuleType, fm: Any, padding: tuple[int, int, int, int]) -> Any:
    """``fm``'s tiles (a whole NHCWB16 map in one tile) re-based so that the hardware, reading one
    row and column beyond it on the two sides ``padding`` (top, left, bottom, right) names, reads
    the edge row and column again (Vela's TILE padding): tile 0 ends before the repeated row or
    column and the tiles after it start over at the edge. Brick addresses stay 16-byte aligned."""
    if fm.layout != api.NpuLayout.NHCWB16:
        raise EmitError(fm.name, "an edge-padded IFM must be NHCWB16 (its tile bases 16-byte aligned)")
    tiles = fm.tiles
    base, h, w = tiles.addresses[0], tiles.height_0, tiles.width_0
    right = (w - 1) * fm.strides.width  # to the last column
    bottom = (h - 1) * fm.strides.height  # to the last row
    top_pad, left_pad, bottom_pad, right_pad = padding
    if (top_pad, bottom_pad) not in ((1, 0), (0, 1)) or (left_pad, right_pad) not in ((1, 0), (0, 1)):
        raise EmitError(fm.name, f"edge padding {padding} is not one row and one column")
    rows_0 = 1 if top_pad else h  # tile 0 (and 1) rows: the top edge alone, or every row
    width_0 = 1 if left_pad else w
    down = 0 if top_pad else bottom  # where the rows after tile 0 start: the top edge again, or the bottom
    across = 0 if left_pad else right
    addresses = [base, base + across, base + down, base + down + across]
    return api.NpuTileBox(height_0=rows_0, height_1=rows_0, width_0=width_0, addresses=addresses)
