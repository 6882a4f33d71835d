"""Units and alignment, in one place: every module that rounds a size or an address asks here.

``ALIGN_BYTES``: the alignment of every buffer address and size in NPU memory (feature maps,
weight streams, scratch). ``BRICK_DEPTH``: the channels of one NHCWB16 brick.
"""

from __future__ import annotations

ALIGN_BYTES = 16
BRICK_DEPTH = 16  # NHCWB16 stores channels in bricks of 16


def round_up(value: int, multiple: int) -> int:
    """``value`` rounded up to a multiple of ``multiple`` (a positive integer)."""
    return -(-value // multiple) * multiple


def div_round_up(value: int, divisor: int) -> int:
    """``value / divisor`` rounded up (both integers, ``divisor`` positive)."""
    return -(-value // divisor)
