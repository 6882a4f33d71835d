"""Register writes: a command stream that skips a register write whose value is unchanged since
it was last written, and the (code, value) pairs of each group of registers (feature maps,
kernel, weights), written in one pass per operation.

Codes are the public Ethos-U register map (``npuplan.regstream.words.CODE_OF``): a ``cmd0``
register takes a 16-bit parameter; a ``cmd1`` register (code with ``PAYLOAD32`` set) a 32-bit
payload word, its parameter holding the value's bits above 32 (40-bit addresses, a scale's shift).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from npuplan.emit.native.view import Fm
from npuplan.regstream.words import CODE_OF, PAYLOAD32

Pairs = list[tuple[int, int]]  # (register code, value)
_MASK32, _MASK48 = 0xFFFF_FFFF, 0xFFFF_FFFF_FFFF


class RegisterStream:
    """Command words under construction, and the last value written to each register."""

    __slots__ = ("words", "last")

    def __init__(self) -> None:
        self.words: list[int] = []
        self.last: dict[int, int] = {}

    def write(self, pairs: Iterable[tuple[int, int]]) -> None:
        """Write each (code, value), skipping a register that holds its value already."""
        last, words = self.last, self.words
        for code, value in pairs:
            if code & PAYLOAD32:
                key = value & _MASK48
                if last.get(code) != key:
                    last[code] = key
                    words.append(code | (((value >> 32) & 0xFFFF) << 16))
                    words.append(value & _MASK32)
            else:
                word = code | ((value & 0xFFFF) << 16)
                if last.get(code) != word:
                    last[code] = word
                    words.append(word)

    def command(self, code: int, param: int = 0) -> None:
        """An operation or wait command: always written."""
        self.words.append(code | ((param & 0xFFFF) << 16))


def named(values: Mapping[str, int], names: tuple[tuple[str, int], ...]) -> Pairs:
    """The pairs of those registers of ``names`` ((name, code)) that ``values`` holds."""
    return [(code, values[name]) for name, code in names if name in values]


def codes(*names: str) -> tuple[tuple[str, int], ...]:
    """(name, code) of each register name."""
    return tuple((n, CODE_OF[n]) for n in names)


def _fm_codes(prefix: str) -> tuple[int, ...]:
    return tuple(CODE_OF[f"{prefix}_{n}"] for n in (
        "REGION", "BASE0", "BASE1", "BASE2", "BASE3", "HEIGHT0_M1", "HEIGHT1_M1", "WIDTH0_M1"))


_IFM, _IFM2, _OFM = _fm_codes("IFM"), _fm_codes("IFM2"), _fm_codes("OFM")
_IFM_REST = tuple(CODE_OF[f"IFM_{n}"] for n in ("DEPTH_M1", "STRIDE_C", "STRIDE_Y", "STRIDE_X"))
_IFM2_REST = tuple(CODE_OF[f"IFM2_{n}"] for n in ("STRIDE_C", "STRIDE_Y", "STRIDE_X"))
_OFM_REST = tuple(CODE_OF[f"OFM_{n}"] for n in ("HEIGHT_M1", "WIDTH_M1", "DEPTH_M1", "STRIDE_C", "STRIDE_Y",
                                                  "STRIDE_X"))


def _fm_common(fm: Fm) -> list[int]:
    b = fm.bases
    return [fm.region, b[0], b[1], b[2], b[3], fm.height_0 - 1, fm.height_1 - 1, fm.width_0 - 1]


def ifm(fm: Fm) -> Pairs:
    """IFM region, tile bases and sizes, depth, strides (C between bricks, Y, X)."""
    return list(zip(_IFM + _IFM_REST, _fm_common(fm) + [fm.depth - 1, fm.stride_c, fm.stride_y, fm.stride_x]))


def ifm2(fm: Fm) -> Pairs:
    """IFM2 region, tile bases and sizes, strides."""
    return list(zip(_IFM2 + _IFM2_REST, _fm_common(fm) + [fm.stride_c, fm.stride_y, fm.stride_x]))


def ofm(fm: Fm) -> Pairs:
    """OFM region, tile bases and sizes, shape, strides."""
    return list(zip(_OFM + _OFM_REST, _fm_common(fm) + [
        fm.height - 1, fm.width - 1, fm.depth - 1, fm.stride_c, fm.stride_y, fm.stride_x]))


_PADDING = tuple(CODE_OF[n] for n in ("IFM_PAD_TOP", "IFM_PAD_LEFT", "IFM_PAD_BOTTOM", "IFM_PAD_RIGHT"))
_KERNEL = tuple(CODE_OF[n] for n in ("KERNEL_HEIGHT_M1", "KERNEL_WIDTH_M1", "KERNEL_STRIDE"))


def padding(pad: tuple[int, int, int, int]) -> Pairs:
    """IFM_PAD_* from (top, left, bottom, right)."""
    return list(zip(_PADDING, pad))


def kernel(k: tuple[int, int, int, int, int, int], part_kernel_first: bool) -> Pairs:
    """Dilated kernel extent less one, and KERNEL_STRIDE: strides less one split into a low bit
    (x bit 0, y bit 1) and extension bits (x 6-8, y 9-11), dilations less one (x bit 3, y bit 4),
    part-kernel-first traversal (bit 2)."""
    kw, kh, sx, sy, dx, dy = k
    sx, sy = sx - 1, sy - 1
    stride = (sx & 1) | ((sy & 1) << 1) | ((sx >> 1) << 6) | ((sy >> 1) << 9) | ((dx - 1) << 3) | ((dy - 1) << 4)
    return [(_KERNEL[0], dy * (kh - 1)), (_KERNEL[1], dx * (kw - 1)), (_KERNEL[2], stride | (4 if part_kernel_first
                                                                                            else 0))]


_STREAMS = {
    "WEIGHT": (CODE_OF["WEIGHT_REGION"], ((CODE_OF["WEIGHT_BASE"], CODE_OF["WEIGHT_LENGTH"]),
                                          (CODE_OF["WEIGHT1_BASE"], CODE_OF["WEIGHT1_LENGTH"]))),
    "SCALE": (CODE_OF["SCALE_REGION"], ((CODE_OF["SCALE_BASE"], CODE_OF["SCALE_LENGTH"]),
                                        (CODE_OF["SCALE1_BASE"], CODE_OF["SCALE1_LENGTH"]))),
}


def core_streams(kind: str, spans: tuple[tuple[int, int, int], ...], cores: int) -> Pairs:
    """WEIGHT_* or SCALE_* (``kind``) from one (region, address, length) per core: a core present
    without its own stream reads the first one's address for length 0."""
    if not spans:
        return []
    region, per_core = _STREAMS[kind]
    out = [(region, spans[0][0])]
    for core, (base, length) in enumerate(per_core):
        if core < len(spans):
            out += ((base, spans[core][1]), (length, spans[core][2]))
        elif core < cores:
            out += ((base, spans[0][1]), (length, 0))
    return out
