"""Reading the operations: API objects (Vela's ``NpuFeatureMap``... or any with the same
attributes) as plain tuples of ints, once per operation. Enums are compared by ``.name``."""

from __future__ import annotations

from typing import Any, NamedTuple

from npuplan.units import BRICK_DEPTH, round_up

DTYPE_BITS = {"UINT8": 8, "INT8": 8, "UINT16": 16, "INT16": 16, "INT32": 32}


class Fm(NamedTuple):
    """A feature map as the hardware addresses it: region, shape (elements), tiles (tile 0 height,
    tile 1 height, tile 0/2 width, four base addresses in bytes), strides in bytes (C between
    16-channel bricks, Y, X), element size in bytes and whether the layout is NHCWB16."""

    region: int
    height: int
    width: int
    depth: int
    height_0: int
    height_1: int
    width_0: int
    bases: tuple[int, int, int, int]
    stride_c: int
    stride_y: int
    stride_x: int
    element_bytes: int
    nhcwb16: bool

    @property
    def elements(self) -> int:
        return self.height * self.width * self.depth


def feature_map(fm: Any) -> Fm:
    """``fm`` (an ``NpuFeatureMap``-like object) read once."""
    shape, tiles = fm.shape, fm.tiles
    element = DTYPE_BITS[fm.data_type.name] // 8
    nhcwb16 = fm.layout.name == "NHCWB16"
    h, w, d = int(shape.height), int(shape.width), int(shape.depth)
    strides = fm.strides
    if strides is not None:
        sc, sy, sx = int(strides.depth), int(strides.height), int(strides.width)
    elif nhcwb16:
        sx = BRICK_DEPTH * element
        sc, sy = sx * w, element * w * round_up(d, BRICK_DEPTH)
    else:
        sc, sx = element, d * element
        sy = w * sx
    a = tiles.addresses
    return Fm(int(fm.region), h, w, d, int(tiles.height_0), int(tiles.height_1), int(tiles.width_0),
              (int(a[0]), int(a[1]), int(a[2]), int(a[3])), sc, sy, sx, element, nhcwb16)


def ranges(items: Any) -> tuple[tuple[int, int, int], ...]:
    """``NpuAddressRange``s as (region, address, length) tuples."""
    return tuple((int(r.region), int(r.address), int(r.length)) for r in items or ())


def kernel_of(op: Any) -> tuple[int, int, int, int, int, int]:
    """(width, height, stride x, stride y, dilation x, dilation y); 1x1 for an op without a kernel."""
    k = op.kernel
    if k is None:
        return 1, 1, 1, 1, 1, 1
    return int(k.width), int(k.height), int(k.stride_x), int(k.stride_y), int(k.dilation_x), int(k.dilation_y)


def padding_of(op: Any) -> tuple[int, int, int, int] | None:
    """(top, left, bottom, right) or None."""
    p = op.padding
    return None if p is None else (int(p.top), int(p.left), int(p.bottom), int(p.right))


def uses_lut(op: Any) -> bool:
    """Whether the operation's activation is a table lookup (its table in the shared buffer)."""
    act = op.activation
    return act is not None and act.op_type.name == "TABLE_LOOKUP"


def scalar_of(op: Any) -> float | None:
    """A binary elementwise operation's scalar IFM2 value (None: a feature map, or no IFM2)."""
    return getattr(op, "ifm2_scalar", None)


def accumulator_of(op: Any) -> str:
    """The accumulator an operation forces (``Int32``, ``Int40``), else ``Default``."""
    forced = getattr(op, "accumulator_type", None)
    return "Default" if forced is None else str(forced.name)


def has_ifm2(op: Any) -> bool:
    """Whether the operation reads a second feature map (not a scalar)."""
    return getattr(op, "ifm2", None) is not None and getattr(op, "ifm2_scalar", None) is None
