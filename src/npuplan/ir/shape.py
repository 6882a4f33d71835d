"""Four-dimensional NHWC shapes."""

from __future__ import annotations

import math
from collections.abc import Sequence

from npuplan.records import record


@record(order=True)
class Shape4D:
    """An NHWC shape; shorter shapes are right-aligned and padded with 1 (``[8]`` -> 1x1x1x8)."""

    n: int = 1
    h: int = 1
    w: int = 1
    c: int = 1

    @classmethod
    def of(cls, shape: Sequence[int]) -> "Shape4D":
        """Right-align ``shape`` into NHWC; beyond four dims, the first is N, the last two W and C
        and those between fold into H (a 5-D view of a map, ``1 x H x k x W x C``, is its rows)."""
        dims = [max(int(d), 1) for d in shape]
        if len(dims) > 4:
            dims = [dims[0], math.prod(dims[1:-2]), dims[-2], dims[-1]]
        dims = [1] * (4 - len(dims)) + dims
        return cls(*dims)

    @property
    def elements(self) -> int:
        return self.n * self.h * self.w * self.c

    def as_list(self) -> list[int]:
        return [self.n, self.h, self.w, self.c]

    def with_h(self, h: int) -> "Shape4D":
        return Shape4D(self.n, h, self.w, self.c)

    def with_w(self, w: int) -> "Shape4D":
        return Shape4D(self.n, self.h, w, self.c)

    def with_c(self, c: int) -> "Shape4D":
        return Shape4D(self.n, self.h, self.w, c)

    def with_hw(self, h: int, w: int) -> "Shape4D":
        return Shape4D(self.n, h, w, self.c)

    def __str__(self) -> str:
        return f"{self.n}x{self.h}x{self.w}x{self.c}"


BRICK_ELEMENTS = 16  # depth of one NHCWB16 brick


def same_element_order(a: Shape4D, b: Shape4D) -> bool:
    """Whether whole tensors of shapes ``a`` and ``b`` (as many elements, stored in one format,
    NHWC or NHCWB16) hold each element of a shared NHWC view at the same byte: the same rows
    (width and depth), or the same depth within one brick (then pixels follow one order)."""
    if a.elements != b.elements or a.c != b.c:
        return False
    return a.w == b.w or a.c <= BRICK_ELEMENTS


def keeps_rows(view: Shape4D, full: Shape4D) -> bool:
    """Whether ``view`` (a reshape of a map of shape ``full``, batch 1) has the map's rows: as many,
    of the same bytes, so that row ``y`` of the one is row ``y`` of the other."""
    return view.n == full.n == 1 and view.h == full.h and view.w * view.c == full.w * full.c
