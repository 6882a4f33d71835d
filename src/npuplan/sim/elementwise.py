"""NPU_OP_ELEMENTWISE: MUL, ADD, SUB, MIN, MAX, LRELU, ABS, CLZ, SHR, SHL (the operation's
parameter) on zero-point-corrected operands, before the output stage.

Operands: OPA is the IFM and OPB the IFM2 (or the IFM2_SCALAR register), swapped when
IFM2_BROADCAST bit 6 (reversed operands) is set. IFM2_BROADCAST bits 0-2 broadcast the IFM2's
height, width, depth; bit 7 uses the scalar.

ADD/SUB scale their operands first (IFM_PRECISION bits 8-9): mode 0 multiplies each by its 16-bit
scale (OPA_SCALE, OPB_SCALE); modes 1 and 2 (OPA_32, OPB_32) multiply OPA (mode 1) or OPB (mode 2)
by the 32-bit OPA_SCALE and its shift, the other operand being shifted left by the same headroom
the scale carries (``scaled_headroom_bits``). ADD, SUB, MUL, LRELU and ABS then rescale by
OFM_SCALE; the others pass their result unscaled.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from npuplan.sim.output_stage import OutputStage, Precision, Scale, signed16
from npuplan.sim.rounding import RoundingMode, rescale, round_shift, saturate, widened

MUL, ADD, SUB, MIN, MAX, LRELU, ABS, CLZ, SHR, SHL = range(10)
UNARY = frozenset({LRELU, ABS, CLZ})
REVERSED_BIT, SCALAR_BIT = 1 << 6, 1 << 7
SCALE_MODE_SHIFT = 8  # IFM_PRECISION bits 8-9
OPA_32, OPB_32 = 1, 2
INT32_LOW, INT32_HIGH = -(1 << 31), (1 << 31) - 1


def _zero_point(regs: Mapping[str, int], name: str, precision: Precision) -> int:
    value = regs.get(name, 0)
    return signed16(value) if precision.signed else value & 0xFFFF


def operands(regs: Mapping[str, int], ifm: np.ndarray, ifm2: np.ndarray | None,
             function: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(OPA, OPB), zero points removed, broadcast to the OFM's shape; OPB None for a unary op."""
    p1 = Precision.of_ifm(regs.get("IFM_PRECISION", 0))
    a = np.asarray(ifm, dtype=np.int64) - _zero_point(regs, "IFM_ZERO_POINT", p1)
    if function in UNARY:
        return a, None
    p2 = Precision.of_ifm(regs.get("IFM2_PRECISION", 0))
    broadcast = regs.get("IFM2_BROADCAST", 0)
    if ifm2 is None or broadcast & SCALAR_BIT:
        raw = regs.get("IFM2_SCALAR", 0)
        value = signed16(raw) if p2.signed else raw & 0xFFFF
        b = np.full(a.shape, value, dtype=np.int64)
    else:
        b = np.broadcast_to(np.asarray(ifm2, dtype=np.int64), a.shape)
    b = b - _zero_point(regs, "IFM2_ZERO_POINT", p2)
    if broadcast & REVERSED_BIT:
        a, b = b, a
    return a, b


def scaled_headroom_bits(ifm: Precision) -> int:
    """The left shift of the unscaled ADD/SUB operand in the 32-bit scale modes: 19 bits for 8-bit
    IFMs, 14 for wider ones (the other operand's OPA_SCALE carries the same headroom; Vela writes
    it as ``2**20`` (``2**15``) over twice the larger input scale). Measured: with 19 the hardware
    model reproduces TFLite's int8 ADD/SUB bit for bit on Vela's registers."""
    return 19 if ifm.bits == 8 else 14


def _add_sub(function: int, a: np.ndarray, b: np.ndarray, regs: Mapping[str, int],
             rounding: RoundingMode) -> np.ndarray:
    mode = (regs.get("IFM_PRECISION", 0) >> SCALE_MODE_SHIFT) & 0x3
    opa = Scale.of_register(regs.get("OPA_SCALE", 1))
    if mode in (OPA_32, OPB_32):
        scaled, plain = (a, b) if mode == OPA_32 else (b, a)
        scaled = rescale(scaled, opa.multiplier, opa.shift, rounding)
        plain = plain << scaled_headroom_bits(Precision.of_ifm(regs.get("IFM_PRECISION", 0)))
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
    if Precision.of_ifm(regs.get("IFM_PRECISION", 0)).bits == 32:
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
    raise ValueError(f"unknown elementwise function {function}")


def compute(function: int, regs: Mapping[str, int], ifm: np.ndarray, ifm2: np.ndarray | None,
            stage: OutputStage) -> np.ndarray:
    """The elementwise result before the zero point and activation (rescaled where it scales)."""
    a, b = operands(regs, ifm, ifm2, function)
    if b is None:
        return _unary(function, a, stage)
    return _binary(function, regs, a, b, stage)
