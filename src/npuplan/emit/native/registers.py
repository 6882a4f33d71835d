"""Register writes: a command stream that skips a register write whose value is unchanged since
it was last written, and the writers of each group of registers (feature maps, kernel, weights).

Codes are the public Ethos-U register map (``npuplan.regstream.words.CODE_OF``): a ``cmd0``
register takes a 16-bit parameter; a ``cmd1`` register a 32-bit payload word, its parameter
holding the value's bits above 32 (40-bit addresses, a scale's shift).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from npuplan.emit.native.view import Fm
from npuplan.regstream.words import CMD1, CODE_OF, PAYLOAD32

_CMD1_NAMES = frozenset(CMD1.values())


class RegisterStream:
    """Command words under construction, and the last value written to each register."""

    __slots__ = ("words", "last")

    def __init__(self) -> None:
        self.words: list[int] = []
        self.last: dict[int, int] = {}

    def set0(self, code: int, param: int) -> None:
        """Write 16-bit register ``code`` (skipped when it holds ``param`` already)."""
        word = code | ((param & 0xFFFF) << 16)
        if self.last.get(code) != word:
            self.last[code] = word
            self.words.append(word)

    def set1(self, code: int, value: int) -> None:
        """Write 32-bit register ``code`` (bits above 32 in the parameter), unless unchanged."""
        key = value & 0xFFFF_FFFF_FFFF
        if self.last.get(code) != key:
            self.last[code] = key
            self.words.append(code | (((value >> 32) & 0xFFFF) << 16))
            self.words.append(value & 0xFFFF_FFFF)

    def command(self, code: int, param: int = 0) -> None:
        """An operation or wait command: always written."""
        self.words.append(code | ((param & 0xFFFF) << 16))

    def named(self, values: Mapping[str, int], names: Iterable[str]) -> None:
        """Write those of ``names`` that ``values`` holds (register name -> value)."""
        for name in names:
            value = values.get(name)
            if value is not None:
                if name in _CMD1_NAMES:
                    self.set1(CODE_OF[name], value)
                else:
                    self.set0(CODE_OF[name], value)


def _codes(*names: str) -> tuple[int, ...]:
    return tuple(CODE_OF[n] for n in names)


# Per feature map: region, the four bases, tile heights and width (less one), strides C, Y, X.
_FM_CODES = {
    prefix: (CODE_OF[f"{prefix}_REGION"], _codes(*(f"{prefix}_BASE{k}" for k in range(4))),
             _codes(f"{prefix}_HEIGHT0_M1", f"{prefix}_HEIGHT1_M1", f"{prefix}_WIDTH0_M1"),
             _codes(f"{prefix}_STRIDE_C", f"{prefix}_STRIDE_Y", f"{prefix}_STRIDE_X"))
    for prefix in ("IFM", "IFM2", "OFM")
}
assert all(code & PAYLOAD32 for code in _FM_CODES["IFM"][1])


def feature_map(s: RegisterStream, prefix: str, fm: Fm) -> None:
    """Region, tile bases, tile sizes and strides of feature map ``prefix`` (IFM, IFM2, OFM)."""
    region, bases, tiles, strides = _FM_CODES[prefix]
    s.set0(region, fm.region)
    for code, base in zip(bases, fm.bases):
        s.set1(code, base)
    s.set0(tiles[0], fm.height_0 - 1)
    s.set0(tiles[1], fm.height_1 - 1)
    s.set0(tiles[2], fm.width_0 - 1)
    if prefix == "OFM":
        s.set0(_OFM_SHAPE[0], fm.height - 1)
        s.set0(_OFM_SHAPE[1], fm.width - 1)
        s.set0(_OFM_SHAPE[2], fm.depth - 1)
    elif prefix == "IFM":
        s.set0(_IFM_DEPTH, fm.depth - 1)
    s.set1(strides[0], fm.stride_c)
    s.set1(strides[1], fm.stride_y)
    s.set1(strides[2], fm.stride_x)


_OFM_SHAPE = _codes("OFM_HEIGHT_M1", "OFM_WIDTH_M1", "OFM_DEPTH_M1")
_IFM_DEPTH = CODE_OF["IFM_DEPTH_M1"]
_PADDING = _codes("IFM_PAD_TOP", "IFM_PAD_LEFT", "IFM_PAD_BOTTOM", "IFM_PAD_RIGHT")
_KERNEL = _codes("KERNEL_HEIGHT_M1", "KERNEL_WIDTH_M1", "KERNEL_STRIDE")


def padding(s: RegisterStream, pad: tuple[int, int, int, int]) -> None:
    """IFM_PAD_* from (top, left, bottom, right)."""
    for code, value in zip(_PADDING, pad):
        s.set0(code, value)


def kernel(s: RegisterStream, k: tuple[int, int, int, int, int, int], part_kernel_first: bool) -> None:
    """Dilated kernel extent less one, and KERNEL_STRIDE: strides less one split into a low bit
    (x bit 0, y bit 1) and extension bits (x 6-8, y 9-11), dilations less one (x bit 3, y bit 4),
    part-kernel-first traversal (bit 2)."""
    kw, kh, sx, sy, dx, dy = k
    s.set0(_KERNEL[0], dy * (kh - 1))
    s.set0(_KERNEL[1], dx * (kw - 1))
    sx, sy = sx - 1, sy - 1
    stride = (sx & 1) | ((sy & 1) << 1) | ((sx >> 1) << 6) | ((sy >> 1) << 9) | ((dx - 1) << 3) | ((dy - 1) << 4)
    s.set0(_KERNEL[2], stride | (4 if part_kernel_first else 0))


_STREAMS = {
    "WEIGHT": (CODE_OF["WEIGHT_REGION"], ((CODE_OF["WEIGHT_BASE"], CODE_OF["WEIGHT_LENGTH"]),
                                          (CODE_OF["WEIGHT1_BASE"], CODE_OF["WEIGHT1_LENGTH"]))),
    "SCALE": (CODE_OF["SCALE_REGION"], ((CODE_OF["SCALE_BASE"], CODE_OF["SCALE_LENGTH"]),
                                        (CODE_OF["SCALE1_BASE"], CODE_OF["SCALE1_LENGTH"]))),
}


def core_streams(s: RegisterStream, kind: str, spans: tuple[tuple[int, int, int], ...], cores: int) -> None:
    """WEIGHT_* or SCALE_* (``kind``) from one (region, address, length) per core: a core present
    without its own stream reads the first one's address for length 0."""
    if not spans:
        return
    region, per_core = _STREAMS[kind]
    s.set0(region, spans[0][0])
    for core, (base, length) in enumerate(per_core):
        if core < len(spans):
            s.set1(base, spans[core][1])
            s.set1(length, spans[core][2])
        elif core < cores:
            s.set1(base, spans[0][1])
            s.set1(length, 0)
