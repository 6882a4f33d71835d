"""NPU_OP_ELEMENTWISE: MUL, ADD, SUB, MIN, MAX, LRELU, ABS, CLZ, SHR, SHL (the operation's
parameter) on zero-point-corrected operands, before the output stage.

Operands: OPA is the IFM and OPB the IFM2 (or the IFM2_SCALAR register), swapped when
IFM2_BROADCAST bit 6 (reversed operands) is set. IFM2_BROADCAST bits 0-2 broadcast the IFM2's
height, width, depth; bit 7 uses the scalar.

ADD/SUB scale their operands first (IFM_PRECISION bits 8-9): mode 0 multiplies each by its 16-bit
scale (OPA_SCALE, OPB_SCALE); modes 1 and 2 (OPA_32, OPB_32) multiply OPA (mode 1) or OPB (mode 2)
by the 32-bit OPA_SCALE and its shift, both operands carrying TFLite's headroom
(``input_shift_bits``). ADD, SUB, MUL, LRELU and ABS then rescale by
OFM_SCALE; the others pass their result unscaled.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from npuplan.errors import ValidationError
from npuplan.emit.native.output_stage import ElementType
from npuplan.sim.output_stage import OutputStage, Scale, ifm_type, signed16, zero_point
from npuplan.sim.rounding import RoundingMode, rescale, round_shift, saturate, widened

MUL, ADD, SUB, MIN, MAX, LRELU, ABS, CLZ, SHR, SHL = range(10)
UNARY = frozenset({LRELU, ABS, CLZ})
REVERSED_BIT, SCALAR_BIT = 1 << 6, 1 << 7
SCALE_MODE_SHIFT = 8  # IFM_PRECISION bits 8-9
OPA_32, OPB_32 = 1, 2
INT32_LOW, INT32_HIGH = -(1 << 31), (1 << 31) - 1


def operands(regs: Mapping[str, int], ifm: np.ndarray, ifm2: np.ndarray | None,
             function: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(OPA, OPB), zero points removed, broadcast to the OFM's shape; OPB None for a unary op."""
    a = np.asarray(ifm, dtype=np.int64) - zero_point(regs, "IFM")
    if function in UNARY:
        return a, None
    p2 = ifm_type(regs.get("IFM2_PRECISION", 0))
    broadcast = regs.get("IFM2_BROADCAST", 0)
    if ifm2 is None or broadcast & SCALAR_BIT:
        raw = regs.get("IFM2_SCALAR", 0)
        value = signed16(raw) if p2.signed else raw & 0xFFFF
        b = np.full(a.shape, value, dtype=np.int64)
    else:
        b = np.asarray(ifm2, dtype=np.int64)
        shape = np.broadcast_shapes(a.shape, b.shape)
        a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    b = b - zero_point(regs, "IFM2")
    if broadcast & REVERSED_BIT:
        a, b = b, a
    return a, b


def input_shift_bits(ifm: ElementType) -> int:
    """The left shift of both ADD/SUB operands in the 32-bit scale modes: 20 bits for 8-bit IFMs,
    15 for wider ones (TFLite's ``left_shift``). The scaled operand is multiplied by OPA_SCALE and
    shifted right by its shift plus these bits, rounding as the OFM rounds (TFL: twice, at bit 31
    first, as TFLite's ``MultiplyByQuantizedMultiplierSmallerThanOneExp`` of the shifted input); the
    other operand is kept at half that scale (shifted one bit less: Vela writes the scaled operand's
    multiplier over twice the larger input scale). Measured: only so is Vela's int8/int16 ADD/SUB
    with unequal input scales bit-exact against LiteRT (a single rounding of OPA is off by one on
    outputs that land within 2**-20 of a half)."""
    return 20 if ifm.bits == 8 else 15


def _add_sub(function: int, a: np.ndarray, b: np.ndarray, regs: Mapping[str, int],
             rounding: RoundingMode) -> np.ndarray:
    mode = (regs.get("IFM_PRECISION", 0) >> SCALE_MODE_SHIFT) & 0x3
    opa = Scale.of_register(regs.get("OPA_SCALE", 1))
    if mode in (OPA_32, OPB_32):
        bits = input_shift_bits(ifm_type(regs.get("IFM_PRECISION", 0)))
        scaled, plain = (a, b) if mode == OPA_32 else (b, a)
        scaled = rescale(scaled << bits, opa.multiplier, opa.shift + bits, rounding)
        plain = plain << (bits - 1)
        a, b = (scaled, plain) if mode == OPA_32 else (plain, scaled)
    else:
        a = a * (opa.multiplier & 0xFFFF)
        b = b * (regs.get("OPB_SCALE", 1) & 0xFFFF)
    return a + b if function == ADD else a - b


def _clz(a: np.ndarray) -> np.ndarray:
    """Leading zeros of the 32-bit two's complement value."""
    unsigned = a & 0xFFFF_FFFF
    bits = np.zeros(a.shape, dtype=np.int64)
    for step in (16, 8, 4, 2, 1):
        small = unsigned < (1 << (32 - step))
        bits = np.where(small, bits + step, bits)
        unsigned = np.where(small, unsigned << step, unsigned)
    return np.where(a & 0xFFFF_FFFF == 0, 32, bits)


def _unary(function: int, a: np.ndarray, stage: OutputStage) -> np.ndarray:
    if function == ABS:
        return stage.rescaled(np.abs(a))
    if function == LRELU:  # OFM_SCALE holds alpha: negative values scaled, the others kept
        return np.where(a < 0, stage.rescaled(a), a)
    return _clz(a)


def _multiply(regs: Mapping[str, int], a: np.ndarray, b: np.ndarray, stage: OutputStage) -> np.ndarray:
    if ifm_type(regs.get("IFM_PRECISION", 0)).bits == 32:
        # 32-bit operands: the 64-bit product is shifted by OFM_SCALE's shift alone (its multiplier is
        # not applied). Measured: Vela's int8 SOFTMAX (both cores; SaturatingRoundingDoublingHighMul
        # written as multiplier 2**30, shift 31, and "times 4" as 1, 0) is bit-exact only so.
        return round_shift(widened(a, b) * widened(b, a), stage.scale.shift, stage.rounding)
    return stage.rescaled(a * b)


def _binary(function: int, regs: Mapping[str, int], a: np.ndarray, b: np.ndarray, stage: OutputStage) -> np.ndarray:
    if function in (ADD, SUB):
        return stage.rescaled(_add_sub(function, a, b, regs, stage.rounding))
    if function == MUL:
        return _multiply(regs, a, b, stage)
    if function == MIN:
        return np.minimum(a, b)
    if function == MAX:
        return np.maximum(a, b)
    if function == SHL:
        return saturate(a.astype(object) << np.clip(b, 0, 63).astype(object), INT32_LOW, INT32_HIGH)
    if function == SHR:
        return round_shift(a, np.clip(b, 0, 63), stage.rounding)
    raise ValidationError(f"unknown elementwise function {function}")


def compute(function: int, regs: Mapping[str, int], ifm: np.ndarray, ifm2: np.ndarray | None,
            stage: OutputStage) -> np.ndarray:
    """The elementwise result before the zero point and activation (rescaled where it scales)."""
    a, b = operands(regs, ifm, ifm2, function)
    if b is None:
        return _unary(function, a, stage)
    return _binary(function, regs, a, b, stage)
