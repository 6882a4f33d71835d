"""The output stage's scale arithmetic: real-valued rescales as the (multiplier, shift) pairs the
Ethos-U scale registers hold.

The output stage computes ``round(acc * multiplier / 2**shift)``: ``multiplier`` a 32-bit payload
word, ``shift`` 0..63 in the command's parameter. A real scale becomes a Q31 significand (rounded
half away from zero, as TFLite's ``QuantizeMultiplier``) and ``31 - exponent``; a scale whose
shift falls outside 0..63 is written as multiplier 0, shift 16 (the value 0, as Vela writes it).

Elementwise ADD/SUB scale each operand before adding (the OPA/OPB scale registers): when both
inputs share one scale, no operand needs rescaling and the sum is scaled once, over ``2**16``
(the inputs' headroom); otherwise the operand with the smaller scale is multiplied by the ratio
of the two with ``2**20`` (8-bit) or ``2**15`` (16/32-bit) of headroom, and the output stage
divides that headroom out. Average pooling divides by the kernel's element count with a
multiplier of ``2**(31 + k - rescale_bits) / elements``. All scales are read as IEEE doubles
(Python floats) unless a formula says float32 (MUL's product of scales).
"""

from __future__ import annotations

import math
from enum import IntEnum

import numpy as np

from npuplan.lowering.fixedpoint import tflite_round
from npuplan.records import record

SHIFT_LIMIT = 64  # the shift field's range is 0..63
ZERO_SCALE_SHIFT = 16  # the shift written with multiplier 0 for a scale outside the shift's range
ADD_HEADROOM_BITS = 16  # bits of headroom of equally scaled ADD/SUB operands


@record
class Scale:
    """A multiplier (up to 32 bits) and a right shift (bits): the real value ``multiplier / 2**shift``."""

    multiplier: int
    shift: int

    @property
    def register(self) -> int:
        """The scale register as ``regstream`` decodes a cmd1 word: the payload (the multiplier's
        low 32 bits) with the parameter's low byte (the shift) above bit 32."""
        return (self.multiplier & 0xFFFF_FFFF) | ((self.shift & 0xFF) << 32)


UNITY = Scale(1, 0)


class OperandToScale(IntEnum):
    """Which elementwise operand the OPA scale multiplies (IFM_PRECISION bits 8-9)."""

    NONE = 0
    OPA = 1
    OPB = 2


def q31_scale(real: float) -> Scale:
    """``real`` as a Q31 significand and shift; ``Scale(0, 16)`` when the shift is not 0..63
    (a zero scale gives ``Scale(0, 31)``)."""
    significand, exponent = math.frexp(real)
    shift = 31 - exponent
    if not 0 <= shift < SHIFT_LIMIT:
        return Scale(0, ZERO_SCALE_SHIFT)
    # 2**31 itself (a significand rounding up to 1.0) is kept: the payload word holds it unsigned
    return Scale(int(tflite_round(significand * (1 << 31))), shift)


def binary_digits(value: float) -> int:
    """How many binary digits the ceiling of a positive ``value`` has."""
    return max(math.ceil(value).bit_length(), 1)


def averaging_scale(elements: int, rescale: float, rescale_bits: int) -> Scale:
    """Divide a sum of ``elements`` values by ``elements`` and multiply by ``rescale``, leaving
    ``rescale_bits`` of the 31-bit multiplier for the rescale (negative: more precision for a
    rescale below 1)."""
    k = math.frexp(elements - 1)[1]  # bits of elements - 1 (0 for one element)
    shift = 31 - rescale_bits + k
    divider = ((1 << shift) + (1 << k)) // elements
    return Scale(int(tflite_round(divider * float(rescale))), shift)


def rescale_bits(rescale: float) -> int:
    """The multiplier bits a 1x1 average pool keeps for the rescale ``rescale`` (a ratio of input
    to output scale): its integer digits and a sign bit above 1, fewer fraction bits below 1."""
    if rescale > 1:
        return binary_digits(rescale) + 1
    if rescale < 1:
        return 1 - binary_digits(1 / rescale)
    return 0


# Outputs of the NPU's TANH and SIGMOID activations are in units of 1/0x3000 (3 * 4096).
LUT_FUNCTION_UNITS = 0x3000


def function_input_scale(ifm_scale: float, *, elements: int, tanh: bool, int16: bool) -> Scale:
    """The OFM scale of a pooling op feeding the NPU's TANH/SIGMOID: the IFM scale in the
    function's input units of ``1/0x3000``."""
    rescale = LUT_FUNCTION_UNITS * float(ifm_scale)
    if not int16:
        return averaging_scale(elements, rescale, binary_digits(rescale) + 1)
    exponent = math.log2(ifm_scale)
    nearest = round(exponent)
    power_shift = nearest + 12  # 0: scale 1/4096, 1: 1/2048
    if abs(exponent - nearest) < 0.001 and (power_shift == 0 or (tanh and power_shift == 1)):
        return Scale(3 << power_shift, 0)  # exact: 0x3000 * 2**-12 == 3
    shift = 0
    while rescale <= np.iinfo(np.int16).max / 2 and shift <= 30:  # as many bits as a 16-bit multiplier holds
        shift += 1
        rescale *= 2
    return Scale(int(rescale), shift)


def mul_scale(ifm_scale: float, ifm2_scale: float, ofm_scale: float) -> Scale:
    """Elementwise MUL: the product of the input scales over the output's, in float32."""
    product = np.float32(ifm_scale) * np.float32(ifm2_scale) / np.float32(ofm_scale)
    return q31_scale(float(product))


@record(eq=False)
class AddSubScales:
    """The three scale registers of an ADD/SUB and the operand OPA multiplies."""

    opa: Scale
    opb: Scale
    ofm: Scale
    op_to_scale: OperandToScale = OperandToScale.NONE


UNSCALED_ADD = AddSubScales(UNITY, UNITY, UNITY)


def add_sub_scales(ifm_scale: float, ifm2_scale: float, ofm_scale: float, *, ifm_bits: int,
                   reversed_operands: bool) -> AddSubScales:
    """The scales of an ADD/SUB of two quantized inputs (``ifm_bits``: the IFM's element bits)."""
    a, b, out = float(ifm_scale), float(ifm2_scale), float(ofm_scale)
    if a == b:
        ofm = q31_scale(a / out * 2.0 ** (1 - ADD_HEADROOM_BITS))
        if ifm_bits == 16:  # one bit less on each side so it rounds as the advanced form does
            half = 1 << (ADD_HEADROOM_BITS - 2)
            return AddSubScales(Scale(half, 0), Scale(half, 0), Scale(ofm.multiplier, ofm.shift - 1))
        if ofm.multiplier & 0xFFF == 0:  # low bits clear: no double rounding, same result as advanced
            half = 1 << (ADD_HEADROOM_BITS - 1)
            return AddSubScales(Scale(half, 0), Scale(half, 0), ofm)
    return _advanced_add_sub(a, b, out, ifm_bits=ifm_bits, reversed_operands=reversed_operands)


def _advanced_add_sub(a: float, b: float, out: float, *, ifm_bits: int, reversed_operands: bool) -> AddSubScales:
    """Scale the operand with the smaller scale by the ratio of the two, with headroom."""
    headroom = 20 if ifm_bits == 8 else 15
    low, high = min(a, b), max(a, b)
    operand = q31_scale(low / high * 2.0 ** (headroom - 1))
    ofm = q31_scale(high / out * 2.0 ** (1 - headroom))
    scaled = OperandToScale.OPA if a < b else OperandToScale.OPB
    if reversed_operands:  # the hardware's OPA is then the IFM2
        scaled = OperandToScale.OPB if scaled is OperandToScale.OPA else OperandToScale.OPA
    return AddSubScales(operand, Scale(0, 0), ofm, scaled)
