"""What the hardware requires of an operation's addresses, checked before it is written (the
checks Vela's generator makes, so the native one refuses what Vela refuses): every access within
its region (0-7, at most 2**address bits; the shared buffer, at most its size), feature-map bases
aligned to their element (16 bytes for NHCWB16), strides likewise, weight streams at 16 bytes with
lengths of 16-byte multiples (scale streams: lengths), DMAs at 16 bytes (on an Ethos-U65 only
into or out of the shared buffer)."""

from __future__ import annotations

from npuplan.emit.native.accesses import Accesses
from npuplan.emit.native.hardware import SHRAM_REGION, NativeArch
from npuplan.emit.native.view import Fm
from npuplan.errors import EmitError
from npuplan.units import ALIGN_BYTES  # NHCWB16 bases and strides, weight and DMA addresses and lengths


def _fail(index: int, kind: str, what: str) -> EmitError:
    return EmitError(None, f"the native register command stream generator refuses operation {index} ({kind}): {what}")


def check_limits(arch: NativeArch, accesses: Accesses, index: int, kind: str) -> None:
    """Every access in a known region, from offset 0 up to the region's size."""
    for region, start, end in accesses.reads + accesses.writes:
        limit = arch.shram_bytes if region == SHRAM_REGION else arch.max_address if 0 <= region < 8 else None
        if limit is None:
            raise _fail(index, kind, f"invalid region {region}")
        if start < 0 or end > limit:
            raise _fail(index, kind, f"address range {start:#x}..{end:#x} of region {region} out of 0..{limit:#x}")


def check_feature_map(fm: Fm, index: int, kind: str) -> None:
    """Bases aligned to the element (16 bytes in NHCWB16); strides likewise (NHCWB16: C and Y)."""
    quantum = ALIGN_BYTES if fm.nhcwb16 else fm.element_bytes
    strides = (fm.stride_c, fm.stride_y) if fm.nhcwb16 else (fm.stride_y, fm.stride_x)
    for value in fm.bases + strides:
        if value % quantum:
            raise _fail(index, kind, f"feature map address or stride {value:#x} is not a multiple of {quantum}")


def check_streams(weights: tuple[tuple[int, int, int], ...], scales: tuple[tuple[int, int, int], ...],
                  index: int, kind: str) -> None:
    """Weight streams 16-byte aligned, weight and scale lengths multiples of 16."""
    for _, address, length in weights:
        if address % ALIGN_BYTES or length % ALIGN_BYTES:
            raise _fail(index, kind, f"weight stream at {address:#x} of {length} bytes is not 16-byte aligned")
    for _, _, length in scales:
        if length % ALIGN_BYTES:
            raise _fail(index, kind, f"scale stream of {length} bytes is not a multiple of 16")


def check_dma(arch: NativeArch, src: tuple[int, int, int], dst: tuple[int, int, int], index: int) -> None:
    """DMA addresses and length 16-byte aligned (Ethos-U65: those in the shared buffer only)."""
    length = src[2]
    checked = ([src[1]] if src[0] == SHRAM_REGION else []) + ([dst[1], length] if dst[0] == SHRAM_REGION else []) \
        if arch.is_u65 else [src[1], dst[1], length]
    if any(value % ALIGN_BYTES for value in checked):
        raise _fail(index, "Dma", f"DMA of {length} bytes from {src[1]:#x} to {dst[1]:#x} is not 16-byte aligned")
