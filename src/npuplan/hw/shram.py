"""The NPU shared buffer (SHRAM): how IFM and accumulator banks are laid out for one OFM block.

Bank map, low to high: ``shram_reserved_output_banks`` output banks, IFM buffer (double
buffered), for elementwise ops a second IFM buffer, then accumulators (double buffered, not for
elementwise), then the LUT/reserved banks at the top. Sizes are rounded to each element kind's
bank granule (``Accelerator.granules``).
"""

from __future__ import annotations

from typing import NamedTuple

from npuplan._compat import StrEnum
from npuplan.hw.accelerator import Accelerator, Block
from npuplan.records import record
from npuplan.units import div_round_up, round_up


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


@record
class ShramLayout:
    """Bank indices of the shared-buffer regions (``ib`` IFM buffer, ``ab`` accumulators)."""

    ib_start: int
    ib_end: int
    ib_start2: int
    ab_start: int
    lut_start: int


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


def _double_buffered_banks(size_bytes: int, bank_bytes: int, granule: int) -> int:
    return round_up(div_round_up(size_bytes, bank_bytes) * 2, granule)


class ShramBudget(NamedTuple):
    """The shared-buffer banks one kind of op can use, and how its blocks are sized in them.

    Fixed per (accelerator, elementwise use, IFM bits, accumulator, LUT): a block search tests
    thousands of blocks against one budget. ``ifm_start``..``lut_start`` are the banks free for
    the IFM buffer(s) and (not elementwise) the accumulators.
    """

    ew: ElementwiseUse
    ifm_bits: int
    acc_bits: int
    bank_bytes: int
    ifm_granule: int
    acc_granule: int
    ifm_start: int
    lut_start: int

    @classmethod
    def of(cls, accel: Accelerator, ew: ElementwiseUse, ifm_bits: int, acc: AccType, lut_banks: int) -> "ShramBudget":
        """``lut_banks`` is what the activation LUT needs at the top (0 or 2); at least the
        accelerator's reserved top banks are always kept."""
        return cls(
            ew=ew,
            ifm_bits=ifm_bits,
            acc_bits=acc.bits,
            bank_bytes=accel.shram_bank_bytes,
            ifm_granule=ifm_granule_banks(accel, ifm_bits, ew),
            acc_granule=acc_granule_banks(accel, acc),
            ifm_start=accel.shram_reserved_output_banks,
            lut_start=accel.shram_banks - max(lut_banks, accel.shram_reserved_unused_banks),
        )

    def ifm_pixel_bytes(self, ifm_depth: int) -> int:
        """Bytes one IFM block position (all ``ifm_depth`` channels) takes in the IFM buffer."""
        return round_up(ifm_depth * self.ifm_bits // 8, 8)

    def acc_pixel_bytes(self, ofm_depth: int) -> int:
        """Bytes one OFM block position (all ``ofm_depth`` channels) takes in the accumulators."""
        return round_up(ofm_depth, 8) * self.acc_bits // 8

    def fits(self, ifm_bytes: int, acc_bytes: int) -> bool:
        """True when an IFM block of ``ifm_bytes`` and accumulators of ``acc_bytes`` (ignored
        for elementwise ops), each double buffered, fit: what ``layout`` would not refuse."""
        ifm_banks = _double_buffered_banks(ifm_bytes, self.bank_bytes, self.ifm_granule)
        if self.ew is ElementwiseUse.NONE:
            acc_banks = _double_buffered_banks(acc_bytes, self.bank_bytes, self.acc_granule)
            return self.ifm_start + ifm_banks + acc_banks <= self.lut_start
        ifm2_banks = ifm_banks if self.ew is ElementwiseUse.FULL else 0
        return self.ifm_start + ifm_banks + ifm2_banks <= self.lut_start

    def layout(self, ofm_block: Block, ifm_block: Block) -> ShramLayout | None:
        """The layout holding ``ifm_block`` and (not elementwise) ``ofm_block`` accumulators, or None."""
        ifm_bytes = ifm_block.height * ifm_block.width * self.ifm_pixel_bytes(ifm_block.depth)
        acc_bytes = ofm_block.height * ofm_block.width * self.acc_pixel_bytes(ofm_block.depth)
        if not self.fits(ifm_bytes, acc_bytes):
            return None
        ifm_end = self.ifm_start + _double_buffered_banks(ifm_bytes, self.bank_bytes, self.ifm_granule)
        if self.ew is ElementwiseUse.NONE:
            acc_start = self.lut_start - _double_buffered_banks(acc_bytes, self.bank_bytes, self.acc_granule)
            return ShramLayout(self.ifm_start, ifm_end, ifm_end, acc_start, self.lut_start)
        # elementwise: the IFM buffer runs up to the LUT, the second IFM from the first's end
        return ShramLayout(self.ifm_start, self.lut_start, ifm_end, self.lut_start, self.lut_start)


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
    return ShramBudget.of(accel, ew, ifm_bits, acc, lut_banks).layout(ofm_block, ifm_block)
