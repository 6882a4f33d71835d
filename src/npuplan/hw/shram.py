"""The NPU shared buffer (SHRAM): how IFM and accumulator banks are laid out for one OFM block.

Bank map, low to high: ``shram_reserved_output_banks`` output banks, IFM buffer (double
buffered), for elementwise ops a second IFM buffer, then accumulators (double buffered, not for
elementwise), then the LUT/reserved banks at the top. Sizes are rounded to each element kind's
bank granule (``Accelerator.granules``).
"""

from __future__ import annotations

from dataclasses import dataclass

from npuplan._compat import StrEnum
from npuplan.hw.accelerator import Accelerator, Block


class AccType(StrEnum):
    """Accumulator element type."""

    ACC16 = "Acc16"
    ACC32 = "Acc32"
    ACC40 = "Acc40"

    @property
    def bits(self) -> int:
        return _ACC_BITS[self]


_ACC_BITS = {AccType.ACC16: 16, AccType.ACC32: 32, AccType.ACC40: 40}


class ElementwiseUse(StrEnum):
    """How an op uses the second IFM buffer: not elementwise, two full IFMs, or a scalar IFM2."""

    NONE = "none"
    FULL = "full"
    SCALAR = "scalar"


@dataclass(frozen=True, slots=True)
class ShramLayout:
    """Bank indices of the shared-buffer regions (``ib`` IFM buffer, ``ab`` accumulators)."""

    ib_start: int
    ib_end: int
    ib_start2: int
    ab_start: int
    lut_start: int


def round_up(value: int, quantum: int) -> int:
    """``value`` rounded up to a multiple of ``quantum``."""
    return ((value + quantum - 1) // quantum) * quantum


def div_round_up(value: int, divisor: int) -> int:
    """``ceil(value / divisor)`` for non-negative integers."""
    return (value + divisor - 1) // divisor


def ifm_granule_banks(accel: Accelerator, ifm_bits: int, ew: ElementwiseUse) -> int:
    g = accel.granules
    if ifm_bits == 32:
        return g.ifm32
    if ew is not ElementwiseUse.NONE:
        return g.ifm16_elementwise if ifm_bits == 16 else g.ifm8_elementwise
    return g.ifm16 if ifm_bits == 16 else g.ifm8


def acc_granule_banks(accel: Accelerator, acc: AccType) -> int:
    g = accel.granules
    return {AccType.ACC16: g.acc16, AccType.ACC32: g.acc32, AccType.ACC40: g.acc40}[acc]


def _double_buffered_banks(size_bytes: int, accel: Accelerator, granule: int) -> int:
    return round_up(div_round_up(size_bytes, accel.shram_bank_bytes) * 2, granule)


def try_layout(
    accel: Accelerator,
    ew: ElementwiseUse,
    ofm_block: Block,
    ifm_block: Block,
    ifm_bits: int,
    acc: AccType,
    lut_banks: int,
) -> ShramLayout | None:
    """The layout holding ``ifm_block`` and (non-elementwise) ``ofm_block`` accumulators, or None.

    ``lut_banks`` is what the activation LUT needs at the top (0 or 2); at least the
    accelerator's reserved top banks are always kept.
    """
    ifm_bytes = ifm_block.height * ifm_block.width * round_up(ifm_block.depth * ifm_bits // 8, 8)
    ifm_banks = _double_buffered_banks(ifm_bytes, accel, ifm_granule_banks(accel, ifm_bits, ew))
    lut_start = accel.shram_banks - max(lut_banks, accel.shram_reserved_unused_banks)
    ib_start = accel.shram_reserved_output_banks
    ifm_end = ib_start + ifm_banks
    ifm2_start = ifm_end
    acc_start = lut_start
    if ew is ElementwiseUse.NONE:
        acc_bytes = ofm_block.height * ofm_block.width * round_up(ofm_block.depth, 8) * acc.bits // 8
        acc_start -= _double_buffered_banks(acc_bytes, accel, acc_granule_banks(accel, acc))
    else:
        ifm2_banks = ifm_banks if ew is ElementwiseUse.FULL else 0
        if ifm2_start + ifm2_banks > acc_start:
            return None
        ifm_end = acc_start
    if ifm_end > acc_start:
        return None
    return ShramLayout(ib_start=ib_start, ib_end=ifm_end, ib_start2=ifm2_start, ab_start=acc_start, lut_start=lut_start)
