"""The output-stage registers of one NPU block operation: scales, zero points, activation clamp
and the precision words, as the register command stream sets them.

The operation is read duck-typed, with the attributes of ``ethosu.vela.api``'s block operations
(``op_type``, ``ifm``/``ifm2``/``ofm`` feature maps with ``data_type``, ``quantization``
(``scale_f32``, ``zero_point``) and ``layout``; ``kernel``, ``padding``, ``activation``,
``rounding_mode``, ``fused_quantize``, ``rescale``, ``sub_op_type``, ``reversed_operands``), every
enum compared by its ``.name``, so the native generator's own objects and Vela's both work.

Which registers an operation sets: every block operation its IFM's and OFM's zero point and
precision and the activation triple; a pooling operation its OFM scale when it scales globally
(an average or sum without padding, or an explicit scale that is not per channel); an
elementwise operation always its OFM scale, ADD/SUB also the operand scales, and a binary one the
IFM2's zero point and precision. Convolutions scale per channel from the scale stream and set no
scale register.

Register values are what ``npuplan.regstream`` decodes: a 16-bit register its parameter (a
negative value as its 16-bit two's complement), a 32-bit scale register its payload with the
shift above bit 32 (``Scale.register``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from npuplan.emit.native.scaling import (
    LUT_FUNCTION_UNITS, UNITY, UNSCALED_ADD, AddSubScales, OperandToScale, Scale, add_sub_scales, averaging_scale,
    binary_digits, function_input_scale, mul_scale, q31_scale, rescale_bits,
)
from npuplan.records import record

PARAM_MASK = 0xFFFF  # a cmd0 register's 16-bit parameter


@record(eq=False)
class ElementType:
    """A feature map's element type: bits per element and signedness."""

    bits: int
    signed: bool

    @property
    def min_value(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max_value(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    def precision(self, size_bit: int) -> int:
        """The precision word's type fields: bit 0 signed, the size code (8/16/32 bits: 0/1/2)
        from bit ``size_bit`` (IFM 2, OFM 1)."""
        return int(self.signed) | ({8: 0, 16: 1, 32: 2}[self.bits] << size_bit)


ELEMENT_TYPES = {"UINT8": ElementType(8, False), "INT8": ElementType(8, True), "UINT16": ElementType(16, False),
                 "INT16": ElementType(16, True), "INT32": ElementType(32, True)}
INT8, INT16 = ELEMENT_TYPES["INT8"], ELEMENT_TYPES["INT16"]

NHCWB16_BIT = 1 << 6
GLOBAL_SCALE_BIT = 1 << 8  # OFM_PRECISION: one scale for every channel (the OFM_SCALE register)
OP_TO_SCALE_SHIFT = 8  # IFM_PRECISION: which operand OPA_SCALE multiplies
ROUNDING_SHIFT = 14  # OFM_PRECISION bits 14-15
ROUNDING = {"TFL": 0, "TRUNCATE": 1, "NATURAL": 2}
ACTIVATION_FUNCTIONS = {"NONE_OR_RELU": 0, "TANH": 3, "SIGMOID": 4}
LUT_BASE = 16  # ACTIVATION 16 + k: look up table slot k
LUT_INT8_RANGE = 3 << 12  # ACTIVATION bits 12-13: a table's int32 OFM clamped to int8

BINARY = frozenset({"ADD", "SUB", "MUL", "MIN", "MAX", "SHL", "SHR"})
GLOBALLY_SCALED = frozenset({"ADD", "SUB", "MUL", "LRELU", "ABS"})
BLOCK_KINDS = frozenset({"Conv2D", "ConvDepthWise", "Pooling", "ElementWise"})


def output_stage_registers(operation: Any, accelerator_name: str) -> dict[str, int]:
    """Register name -> value of every output-stage register ``operation`` sets (see the module
    docstring). ``accelerator_name`` (e.g. ``"Ethos_U55_128"``) is accepted for the generator's
    symmetry: these registers are the same on every Ethos-U55/U65 configuration."""
    kind = operation.op_type.name
    if kind not in BLOCK_KINDS:
        raise ValueError(f"{kind} operation has no output stage")
    registers: dict[str, int] = {}
    op_to_scale = OperandToScale.NONE
    global_scale = False
    if kind == "Pooling":
        pooled = pooling_scale(operation)
        if pooled is not None:
            registers["OFM_SCALE"] = pooled.register
            global_scale = True
    elif kind == "ElementWise":
        scales, op_to_scale = elementwise_scales(operation)
        registers.update(scales)
        global_scale = operation.sub_op_type.name in GLOBALLY_SCALED
    ifm, ofm = operation.ifm, operation.ofm
    registers["IFM_ZERO_POINT"] = zero_point(ifm)
    registers["IFM_PRECISION"] = ifm_precision(ifm, op_to_scale)
    registers["OFM_ZERO_POINT"] = zero_point(ofm)
    registers["OFM_PRECISION"] = ofm_precision(ofm, global_scale=global_scale,
                                               rounding=_name(getattr(operation, "rounding_mode", None), "TFL"))
    registers.update(activation_registers(operation.activation, ofm))
    if kind == "ElementWise" and operation.sub_op_type.name in BINARY:
        registers["IFM2_ZERO_POINT"] = zero_point(operation.ifm2)
        registers["IFM2_PRECISION"] = ifm_precision(operation.ifm2, OperandToScale.NONE)
    return registers


def _name(enum: Any, default: str) -> str:
    return default if enum is None else str(enum.name)


def element_type(fm: Any) -> ElementType:
    return ELEMENT_TYPES[fm.data_type.name]


def zero_point(fm: Any) -> int:
    """A feature map's zero point register (0 without quantization)."""
    quant = fm.quantization
    return (int(quant.zero_point) if quant is not None else 0) & PARAM_MASK


def _nhcwb16(fm: Any) -> int:
    return NHCWB16_BIT if _name(fm.layout, "NHWC") == "NHCWB16" else 0


def ifm_precision(fm: Any, op_to_scale: OperandToScale) -> int:
    """IFM_PRECISION/IFM2_PRECISION: type, bit 6 NHCWB16, bits 8-9 the operand OPA scales."""
    return element_type(fm).precision(2) | _nhcwb16(fm) | (int(op_to_scale) << OP_TO_SCALE_SHIFT)


def ofm_precision(fm: Any, *, global_scale: bool, rounding: str) -> int:
    """OFM_PRECISION: type, bit 6 NHCWB16, bit 8 one global scale, bits 14-15 the rounding."""
    return (element_type(fm).precision(1) | _nhcwb16(fm) | (GLOBAL_SCALE_BIT if global_scale else 0)
            | (ROUNDING[rounding] << ROUNDING_SHIFT))


def quantise(value: float, quant: Any) -> int:
    """A real value in the feature map's quantization, rounded half away from zero in float32
    (as the clamps are computed; no quantization: scale 1, zero point 0)."""
    scale = 1.0 if quant is None or quant.scale_f32 is None else quant.scale_f32
    ratio = np.float32(value) / np.float32(scale)
    # the half is added in float32 too (as numpy 2 adds a Python float to a float32): a quotient
    # just below a half can round up to it
    rounded = np.trunc(ratio + np.float32(0.5 if ratio >= 0 else -0.5))
    return (0 if quant is None else int(quant.zero_point)) + int(rounded)


def activation_registers(activation: Any, ofm: Any) -> dict[str, int]:
    """ACTIVATION (function or table slot) and its clamp ACTIVATION_MIN/MAX in OFM units, within
    the OFM's type and int16 (no activation: no function, the type's whole range)."""
    dtype = element_type(ofm)
    op = _name(activation.op_type, "NONE_OR_RELU") if activation is not None else "NONE_OR_RELU"
    low = dtype.min_value if activation is None or activation.min is None else quantise(activation.min,
                                                                                         ofm.quantization)
    high = dtype.max_value if activation is None or activation.max is None else quantise(activation.max,
                                                                                          ofm.quantization)
    low, high = max(low, INT16.min_value, dtype.min_value), min(high, INT16.max_value, dtype.max_value)
    if op == "TABLE_LOOKUP":
        value = LUT_BASE + int(activation.lookup_table_index)
        if dtype.bits == 32:  # the table maps int8 values
            value |= LUT_INT8_RANGE
            low, high = max(low, INT8.min_value), min(high, INT8.max_value)
    else:
        value = ACTIVATION_FUNCTIONS[op]
    return {"ACTIVATION": value & PARAM_MASK, "ACTIVATION_MIN": low & PARAM_MASK, "ACTIVATION_MAX": high & PARAM_MASK}


def _scale_of(fm: Any) -> float | None:
    quant = None if fm is None else fm.quantization
    return None if quant is None else quant.scale_f32


def _lut_function(operation: Any) -> str | None:
    """``"TANH"``/``"SIGMOID"`` when the operation feeds the NPU's own function, else None."""
    act = operation.activation
    name = None if act is None else _name(act.op_type, "NONE_OR_RELU")
    return name if name in ("TANH", "SIGMOID") else None


def _explicit(rescale: Any) -> bool:
    """Whether a pooling ``rescale`` is an explicit (multiplier, shift) scaling record."""
    return rescale is not None and hasattr(rescale, "multiplier")


def pooling_scale(operation: Any) -> Scale | None:
    """A pooling operation's global OFM scale, or None when it scales per channel (a max pool, a
    padded average)."""
    rescale: Any = getattr(operation, "rescale", None)
    if _explicit(rescale):
        if rescale.per_channel:
            return None
        return Scale(int(rescale.multiplier[0]), int(rescale.shift[0]))
    padding = operation.padding
    if operation.sub_op_type.name not in ("AVERAGE", "REDUCE_SUM") or (padding is not None and sum(padding)):
        return None
    kernel = operation.kernel
    elements = kernel.height * kernel.width
    ifm_scale, ofm_scale = _scale_of(operation.ifm), _scale_of(operation.ofm)
    function = _lut_function(operation)
    if function is not None:
        if ifm_scale is None:
            raise ValueError(f"a pooling op feeding {function} needs the IFM's scale")
        return function_input_scale(ifm_scale, elements=elements, tanh=function == "TANH",
                                    int16=element_type(operation.ifm) == INT16)
    if operation.fused_quantize:  # a requantizing copy: the scale ratio as one multiplier
        if ifm_scale is None or ofm_scale is None:
            raise ValueError("a fused quantize needs the IFM's and OFM's scales")
        return q31_scale(float(ifm_scale) / float(ofm_scale))
    if rescale is not None:  # a resize's float rescale: its integer digits and a sign bit
        return averaging_scale(elements, float(rescale), binary_digits(rescale) + 1)
    if ifm_scale is None or ofm_scale is None:
        return UNITY
    ratio = ifm_scale / ofm_scale
    return averaging_scale(elements, ratio, rescale_bits(ratio) if elements == 1 else 0)


def elementwise_scales(operation: Any) -> tuple[dict[str, int], OperandToScale]:
    """An elementwise operation's OFM scale (and ADD/SUB's operand scales) and the operand OPA
    scales."""
    op = operation.sub_op_type.name
    if op in ("ADD", "SUB"):
        scales = add_sub(operation)
        return ({"OPA_SCALE": scales.opa.register, "OPB_SCALE": scales.opb.register,  # OPB's shift is 0
                 "OFM_SCALE": scales.ofm.register}, scales.op_to_scale)
    if op == "MUL":
        ofm = _mul(operation)
    elif op in ("LRELU", "ABS"):  # a unary op's scale is the OFM's (set to the IFM/OFM ratio)
        ofm = q31_scale(operation.ofm.quantization.scale_f32)
    else:
        ofm = UNITY
    return {"OFM_SCALE": ofm.register}, OperandToScale.NONE


def _output_scale(operation: Any) -> float | None:
    """The OFM scale the elementwise arithmetic targets: the function's input units before the
    NPU's TANH/SIGMOID."""
    return 1 / LUT_FUNCTION_UNITS if _lut_function(operation) is not None else _scale_of(operation.ofm)


def _mul(operation: Any) -> Scale:
    if operation.rescale:
        multiplier, shift = operation.rescale
        return Scale(int(multiplier), int(shift))
    a, b, out = _scale_of(operation.ifm), _scale_of(operation.ifm2), _output_scale(operation)
    if a is None or b is None or out is None:
        return UNITY
    return mul_scale(a, b, out)


def add_sub(operation: Any) -> AddSubScales:
    """The scale registers of an ADD/SUB: explicit (the OFM's only), none without quantization,
    else from the input and output scales."""
    if operation.rescale is not None:
        multiplier, shift = operation.rescale
        return AddSubScales(UNITY, UNITY, Scale(int(multiplier), int(shift)))
    a, b, out = _scale_of(operation.ifm), _scale_of(operation.ifm2), _output_scale(operation)
    if a is None or b is None or out is None:
        return UNSCALED_ADD
    return add_sub_scales(a, b, out, ifm_bits=element_type(operation.ifm).bits,
                          reversed_operands=bool(getattr(operation, "reversed_operands", False)))
