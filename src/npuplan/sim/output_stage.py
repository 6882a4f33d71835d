"""The output stage of every NPU operation: the registers that decide it, read once, and the steps
after the arithmetic: the OFM zero point, the activation (a lookup table, TANH, SIGMOID), the
ACTIVATION_MIN/MAX clamp and the saturation to the OFM's precision.

Register values are as ``npuplan.regstream.events`` keeps them: a 16-bit register its parameter
(a signed value as its 16-bit two's complement), a 32-bit scale register its payload with the
command's parameter (the shift) above bit 32.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from npuplan.errors import ValidationError
from npuplan.emit.native.output_stage import ElementType
import npuplan.sim.lut as lookup
from npuplan.records import record
from npuplan.sim.rounding import RoundingMode, rescale, saturate

_BITS = {0: 8, 1: 16, 2: 32, 3: 64}  # precision size field -> element bits
FUNCTION_MASK = 0x1F  # ACTIVATION bits 0-4: the function
CLIP_SHIFT = 12  # ACTIVATION bits 12-14: the clip range
TANH, SIGMOID, FIRST_TABLE = 3, 4, 16
_CLIP_RANGES = {2: (0, 255), 3: (-128, 127), 5: (-32768, 32767)}  # FORCE_UINT8, FORCE_INT8, FORCE_INT16
GLOBAL_SCALE_BIT = 8  # OFM_PRECISION: one scale (OFM_SCALE) for every channel
ROUNDING_SHIFT = 14  # OFM_PRECISION bits 14-15


def signed16(value: int) -> int:
    """A 16-bit register's parameter as a signed value."""
    value &= 0xFFFF
    return value - 0x10000 if value & 0x8000 else value


def ifm_type(register: int) -> ElementType:
    """IFM_PRECISION/IFM2_PRECISION: bit 0 signed, bits 2-3 the size."""
    return ElementType(_BITS[(register >> 2) & 0x3], bool(register & 1))


def ofm_type(register: int) -> ElementType:
    """OFM_PRECISION: bit 0 signed, bits 1-2 the size."""
    return ElementType(_BITS[(register >> 1) & 0x3], bool(register & 1))


def zero_point(regs: Mapping[str, int], prefix: str) -> int:
    """``prefix``'s (IFM, IFM2, OFM) zero point: its 16-bit register, signed for a signed type."""
    precision = regs.get(f"{prefix}_PRECISION", 0)
    signed = ofm_type(precision).signed if prefix == "OFM" else ifm_type(precision).signed
    raw = regs.get(f"{prefix}_ZERO_POINT", 0)
    return signed16(raw) if signed else raw & 0xFFFF


@record
class Scale:
    """A rescale: multiplier (32-bit, unsigned field) and right shift (6 bits)."""

    multiplier: int
    shift: int

    @classmethod
    def of_register(cls, value: int) -> Scale:
        return cls(value & 0xFFFF_FFFF, (value >> 32) & 0x3F)


@record
class OutputStage:
    """What the output stage does after the arithmetic, from the registers at the kick."""

    ofm: ElementType
    zero_point: int
    rounding: RoundingMode
    global_scale: bool
    scale: Scale  # OFM_SCALE (used where global_scale is set)
    function: int
    clip_range: int
    act_min: int
    act_max: int

    @classmethod
    def of(cls, regs: Mapping[str, int]) -> OutputStage:
        precision = regs.get("OFM_PRECISION", 0)
        activation = regs.get("ACTIVATION", 0)
        return cls(ofm=ofm_type(precision), zero_point=zero_point(regs, "OFM"),
                   rounding=RoundingMode((precision >> ROUNDING_SHIFT) & 0x3),
                   global_scale=bool(precision & (1 << GLOBAL_SCALE_BIT)),
                   scale=Scale.of_register(regs.get("OFM_SCALE", 1)),
                   function=activation & FUNCTION_MASK, clip_range=(activation >> CLIP_SHIFT) & 0x7,
                   act_min=signed16(regs.get("ACTIVATION_MIN", 0x8000)),
                   act_max=signed16(regs.get("ACTIVATION_MAX", 0x7FFF)))

    def rescaled(self, values: np.ndarray, scale: Scale | None = None) -> np.ndarray:
        """``values`` times the OFM scale (``scale``, else OFM_SCALE), rounded by the mode."""
        s = scale or self.scale
        return rescale(values, s.multiplier, s.shift, self.rounding)

    def finish(self, values: np.ndarray, lut: np.ndarray | None = None) -> np.ndarray:
        """The OFM values from the rescaled results: zero point, activation function, the
        ACTIVATION_MIN/MAX clamp (within the clip range), a lookup table (it maps the clamped
        value), saturation to the OFM's precision."""
        if self.function in (TANH, SIGMOID):
            values = lookup.function(saturate(values, -(1 << 31), (1 << 31) - 1), tanh=self.function == TANH,
                                     bits=self.ofm.bits)
        values = saturate(values + self._zero_point(), *self._range())
        if self.function >= FIRST_TABLE:
            if lut is None:
                raise ValidationError(f"ACTIVATION {self.function} reads a lookup table but none was given")
            values = lookup.table(saturate(values, *lookup.input_range(lut, self.ofm)), lut, self.ofm)
        return saturate(values, self.ofm.min_value, self.ofm.max_value)

    def _zero_point(self) -> int:
        """The OFM zero point, which a 32-bit result leaves out unless its clip range forces a
        narrower one (the int8 index of a table). Measured: Vela's legacy core writes the MEAN's zero
        point on its int32 depthwise sum too, and that MEAN matches TFLite only so."""
        return 0 if self.ofm.bits == 32 and self.clip_range not in _CLIP_RANGES else self.zero_point

    def _range(self) -> tuple[int, int]:
        """The final clamp: ACTIVATION_MIN/MAX (16-bit) within the OFM's range or the forced range;
        a 32-bit OFM is only saturated (its clamps cannot express its range)."""
        low, high = _CLIP_RANGES.get(self.clip_range, (self.ofm.min_value, self.ofm.max_value))
        if self.ofm.bits <= 16 or self.clip_range in _CLIP_RANGES:
            low, high = max(low, self.act_min), min(high, self.act_max)
        return max(low, self.ofm.min_value), min(high, self.ofm.max_value)
