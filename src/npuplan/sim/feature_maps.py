"""Feature maps as the NPU addresses them: a box of (height, width, depth) elements read from or
written to a region through its tiles, strides, layout and precision.

Addressing facts (the Ethos-U register map; Vela's tile padding relies on the same rules):

- four tiles: tile 0 holds the rows above ``HEIGHT0`` and the columns left of ``WIDTH0``, tile 1
  the rows above ``HEIGHT1`` right of ``WIDTH0``, tile 2 the rows from ``HEIGHT0`` down left of
  ``WIDTH0``, tile 3 the rows from ``HEIGHT1`` down right of ``WIDTH0``; each tile starts at its
  ``BASEk`` with its own row and column 0 (element (y, x) of tile 3 lies at
  ``BASE3 + (y - HEIGHT1) * STRIDE_Y + (x - WIDTH0) * STRIDE_X``);
- NHWC: channel ``c`` at ``c * element bytes`` (``STRIDE_C`` is not used);
  NHCWB16: bricks of 16 channels, channel ``c`` at ``(c // 16) * STRIDE_C + (c % 16) * element bytes``;
- PRECISION: bit 0 signed, element size in bits 2-3 (IFM/IFM2) or 1-2 (OFM): 0 8-bit, 1 16-bit,
  2 32-bit; bit 6 the NHCWB16 layout.

Reads and writes are one numpy gather or scatter over a byte-offset array, never a loop per element.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from npuplan.errors import ValidationError
from npuplan.records import record

BRICK_DEPTH = 16
_ELEMENT_BYTES = {0: 1, 1: 2, 2: 4}
_DTYPES = {(1, True): "<i1", (1, False): "<u1", (2, True): "<i2", (2, False): "<u2", (4, True): "<i4",
           (4, False): "<u4"}


@record
class FmLayout:
    """Where a feature map's elements lie: region, the four tile bases, tile heights and width
    (elements), strides (bytes), element bytes, signedness and the NHCWB16 layout."""

    region: int
    bases: tuple[int, int, int, int]
    height_0: int
    height_1: int
    width_0: int
    stride_y: int
    stride_x: int
    stride_c: int
    element_bytes: int
    signed: bool
    brick: bool


def layout_of(regs: Mapping[str, int], prefix: str) -> FmLayout:
    """The layout registers of feature map ``prefix`` ("IFM", "IFM2" or "OFM") say; a precision
    field the NPU has no element size for is a ``ValidationError``."""
    precision = regs.get(f"{prefix}_PRECISION", 0)
    field = (precision >> 1) & 0x3 if prefix == "OFM" else (precision >> 2) & 0x3
    if field not in _ELEMENT_BYTES:
        raise ValidationError(f"{prefix}_PRECISION {precision:#x}: element size field {field} is not 8, 16 or 32 bits")
    return FmLayout(
        region=regs.get(f"{prefix}_REGION", 0) & 0x7,
        bases=tuple(regs.get(f"{prefix}_BASE{k}", 0) for k in range(4)),  # type: ignore[arg-type]
        height_0=regs.get(f"{prefix}_HEIGHT0_M1", 0) + 1,
        height_1=regs.get(f"{prefix}_HEIGHT1_M1", 0) + 1,
        width_0=regs.get(f"{prefix}_WIDTH0_M1", 0) + 1,
        stride_y=regs.get(f"{prefix}_STRIDE_Y", 0),
        stride_x=regs.get(f"{prefix}_STRIDE_X", 0),
        stride_c=regs.get(f"{prefix}_STRIDE_C", 0),
        element_bytes=_ELEMENT_BYTES[field],
        signed=bool(precision & 1),
        brick=bool(precision & (1 << 6)),
    )


def byte_offsets(fm: FmLayout, shape: tuple[int, int, int]) -> np.ndarray:
    """The byte address (int64, shape ``(height, width, depth)``) of each element of a box."""
    height, width, depth = shape
    y = np.arange(height, dtype=np.int64)[:, None]
    x = np.arange(width, dtype=np.int64)[None, :]
    b0, b1, b2, b3 = (np.int64(b) for b in fm.bases)
    left = np.where(y < fm.height_0, b0 + y * fm.stride_y, b2 + (y - fm.height_0) * fm.stride_y) + x * fm.stride_x
    right = np.where(y < fm.height_1, b1 + y * fm.stride_y, b3 + (y - fm.height_1) * fm.stride_y) \
        + (x - fm.width_0) * fm.stride_x
    rows = np.where(x < fm.width_0, left, right)
    c = np.arange(depth, dtype=np.int64)
    if fm.brick:
        channel = (c // BRICK_DEPTH) * fm.stride_c + (c % BRICK_DEPTH) * fm.element_bytes
    else:
        channel = c * fm.element_bytes
    return rows[:, :, None] + channel[None, None, :]


def _checked(offsets: np.ndarray, fm: FmLayout, region: np.ndarray, label: str) -> None:
    if not offsets.size:
        return
    lo, hi = int(offsets.min()), int(offsets.max()) + fm.element_bytes
    if lo < 0 or hi > region.size:
        raise ValidationError(f"{label} touches bytes {lo}..{hi} of region {fm.region} ({region.size} bytes)")


def _region(regions: Mapping[int, np.ndarray], fm: FmLayout, label: str) -> np.ndarray:
    region = regions.get(fm.region)
    if region is None:
        raise ValidationError(f"{label} uses region {fm.region}, which the operator does not provide")
    return region


def read_box(regions: Mapping[int, np.ndarray], fm: FmLayout, shape: tuple[int, int, int], *,
             label: str = "IFM") -> np.ndarray:
    """The elements of a ``(height, width, depth)`` box as stored (int64)."""
    region = _region(regions, fm, label)
    offsets = byte_offsets(fm, shape)
    _checked(offsets, fm, region, label)
    dtype = np.dtype(_DTYPES[fm.element_bytes, fm.signed])
    if fm.element_bytes == 1:
        return region[offsets].view(dtype).astype(np.int64)
    raw = region[offsets[..., None] + np.arange(fm.element_bytes)]
    return np.ascontiguousarray(raw).view(dtype)[..., 0].astype(np.int64)


def write_box(regions: Mapping[int, np.ndarray], fm: FmLayout, values: np.ndarray, *, label: str = "OFM") -> None:
    """Stores ``values`` (height, width, depth integers in the element's range) through ``fm``."""
    region = _region(regions, fm, label)
    shape = tuple(int(n) for n in values.shape)
    offsets = byte_offsets(fm, shape)  # type: ignore[arg-type]
    _checked(offsets, fm, region, label)
    if not region.flags.writeable:
        raise ValidationError(f"{label} writes region {fm.region}, which is read-only")
    dtype = np.dtype(_DTYPES[fm.element_bytes, fm.signed])
    data = np.asarray(values).astype(np.int64).astype(dtype)  # two's complement wrap, as the bus stores it
    if fm.element_bytes == 1:
        region[offsets] = data.view(np.uint8)
        return
    raw = np.ascontiguousarray(data)[..., None].view(np.uint8)
    region[offsets[..., None] + np.arange(fm.element_bytes)] = raw
