"""The 256-entry lookup table of an 8-bit activation, computed as TensorFlow Lite Micro's reference
kernel computes the operator, input value by input value (so the NPU's table lookup gives what
the CPU would).

- TANH, LOGISTIC (uint8): LiteRT's float table (``LUTPopulate`` of ``tanh`` and ``1 / (1 + exp(-x))``).
- TANH, LOGISTIC (int8): ``reference_integer_ops::Tanh``/``Logistic``: the input rescaled to a
  Q4.27 fixed-point value by the multiplier and shift of the kernel's Prepare, gemmlowp's
  fixed-point ``tanh``/``logistic``, then a rounding shift to the fixed output quantization
  (tanh 1/128 and zero point 0, logistic 1/256 and -128: the kernel assumes them). A TANH whose
  output has another quantization (a hand-written model; converters fix it) gets LiteRT's float
  table, as LiteRT computes it (LOGISTIC's other quantizations LiteRT refuses).
- LEAKY_RELU (int8/uint8): ``reference_ops::QuantizeLeakyRelu``: identity or alpha multiplier by
  the sign of the input, each a ``MultiplyByQuantizedMultiplier``.
- LEAKY_RELU recognised in a MUL by a constant and a MAXIMUM (``lowering.mul_max``): the MUL's
  ``reference_integer_ops::Mul`` then the larger raw value, as the two kernels compute.
- PRELU with one alpha (int8/uint8): ``reference_ops::BroadcastPrelu4DSlow``: the identity or the
  alpha product by the sign of the input, each a ``MultiplyByQuantizedMultiplier``.
- HARD_SWISH (int8/uint8): ``reference_ops::HardSwish``'s 16-bit fixed-point evaluation.

Scales are float32 in TFLite and the kernels mix float and double arithmetic; each step below
keeps the precision the kernel uses (``np.float32`` where it computes in float). Entry ``i``
holds the output for input ``i - 128`` (int8) or ``i`` (uint8), the order the NPU indexes.
Other activations return None (they stay on the CPU).
"""

from __future__ import annotations

import functools

import math
from collections.abc import Callable, Mapping

import numpy as np

from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.fixedpoint import (
    INT16_MAX,
    INT16_MIN,
    c_div,
    downscale_multiplier_to_int16,
    fixed_logistic,
    fixed_tanh,
    inv_sqrt_multiplier_exp,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    rounding_divide_by_pot,
    rounding_divide_by_pot16,
    rounding_doubling_high_mul,
    tflite_round,
    wrap16,
)

Table = Callable[[int], int]  # input value -> unclamped output value


def _inputs(dtype: DataType) -> range:
    return range(0, 256) if dtype == DataType.UINT8 else range(-128, 128)


def _scale(q: Quantization) -> np.float32:
    return np.float32(q.scale[0])


def _zero(q: Quantization) -> int:
    return int(q.zero_point[0])


def _input_radius(integer_bits: int, left_shift: int) -> int:
    """TFLite's ``CalculateInputRadius`` over 31 signed bits."""
    return math.floor(((1 << integer_bits) - 1) * (1 << (31 - integer_bits)) / (1 << left_shift))


def _q4_input(ifm: Quantization) -> tuple[int, int, int]:
    """The Prepare of TFLM's int8 TANH and LOGISTIC: multiplier, left shift and input radius."""
    real = float(_scale(ifm)) * float(1 << 27)
    q, left_shift = math.frexp(real)
    return int(tflite_round(q * (1 << 31))), left_shift, _input_radius(4, left_shift)


_EVERY_INPUT = np.arange(-128, 256, dtype=np.int64)  # int8's and uint8's input values


def _q4_kernel(ifm: Quantization, function: Callable[[np.ndarray], np.ndarray]) -> Table:
    """TFLM's int8 TANH/LOGISTIC: saturated outside the input radius, else ``function`` of the
    input difference as a Q4.27 value (``function`` gives the int8 outputs of an int64 array of
    them; evaluated over every input at once)."""
    multiplier, shift, radius = _q4_input(ifm)
    d = _EVERY_INPUT - _zero(ifm)
    inside = function(multiply_by_quantized_multiplier(d, multiplier, shift))
    outputs = np.where(d <= -radius, -128, np.where(d >= radius, 127, inside)).tolist()

    def value(x: int) -> int:
        return outputs[x + 128]
    return value


def _tanh(ifm: Quantization, ofm: Quantization, options: Mapping[str, object]) -> Table:
    if _scale(ofm) != np.float32(1.0 / 128) or _zero(ofm) != 0:
        # LiteRT checks no output quantization for TANH and computes its float table with the one
        # given (TFLM's fixed-point kernel would still write 1/128 and 0: the oracle is LiteRT's)
        return _float_lut(_tanh_real)(ifm, ofm, options)
    return _q4_kernel(ifm, lambda q4: rounding_divide_by_pot(fixed_tanh(q4, 4), 24))  # Q0.31 -> 1/128


def _tanh_real(x: float, options: Mapping[str, object]) -> float:
    return math.tanh(x)


def _logistic(ifm: Quantization, ofm: Quantization, options: Mapping[str, object]) -> Table:
    if _zero(ofm) != -128:
        # uint8 (output 1/256 and zero point 0, as LiteRT requires): LiteRT's float table
        return _float_lut(_logistic_real)(ifm, ofm, options)
    return _q4_kernel(ifm, lambda q4: rounding_divide_by_pot(fixed_logistic(q4, 4), 23) - 128)  # -> 1/256, -128


def _logistic_real(x: float, options: Mapping[str, object]) -> float:
    return float(np.float32(1.0) / (np.float32(1.0) + np.float32(math.exp(-x) if x > -88.0 else math.inf)))


def _leaky_relu(ifm: Quantization, ofm: Quantization, options: Mapping[str, object]) -> Table:
    if "mul_alpha_q" in options:
        return _mul_max(ifm, ofm, options)
    alpha = np.float32(float(options.get("alpha", 0.2)))  # type: ignore[arg-type]
    in_scale, out_scale = _scale(ifm), _scale(ofm)
    alpha_m, alpha_s = quantize_multiplier(float(np.float32(in_scale * alpha / out_scale)))
    identity_m, identity_s = quantize_multiplier(float(np.float32(in_scale / out_scale)))
    zp_in, zp_out = _zero(ifm), _zero(ofm)

    def value(x: int) -> int:
        d = x - zp_in
        m, s = (identity_m, identity_s) if d >= 0 else (alpha_m, alpha_s)
        return zp_out + multiply_by_quantized_multiplier(d, m, s)
    return value


def _mul_max(ifm: Quantization, ofm: Quantization, options: Mapping[str, object]) -> Table:
    """``max(x, x * c)`` as a MUL by a scalar constant then a MAXIMUM (``lowering.mul_max``; ``c``
    is ``mul_alpha_q`` less its zero point, scale ``mul_alpha_scale``; x, product and output share
    one quantization): ``reference_integer_ops::Mul`` (the integer product, one
    ``MultiplyByQuantizedMultiplier`` of the multiplier its Prepare computes in double, clamped),
    then the larger of the two raw values, as TFLite's MAXIMUM compares them."""
    alpha_q, alpha_scale = int(str(options["mul_alpha_q"])), float(str(options["mul_alpha_scale"]))
    m, s = quantize_multiplier(float(_scale(ifm)) * alpha_scale / float(_scale(ofm)))
    zp_in, zp_out = _zero(ifm), _zero(ofm)

    def value(x: int) -> int:
        # the MUL's clamp to the type's range changes no maximum with x (in range), and the
        # table clamps the result
        return max(x, zp_out + multiply_by_quantized_multiplier((x - zp_in) * alpha_q, m, s))
    return value


def _prelu(ifm: Quantization, ofm: Quantization, options: Mapping[str, object]) -> Table:
    """A PRELU with one alpha (``alpha_q``: its value less its zero point, scale ``alpha_scale``):
    ``reference_ops::BroadcastPrelu4DSlow``, its multipliers in double as the kernel's Prepare."""
    alpha_q, alpha_scale = int(str(options["alpha_q"])), float(str(options["alpha_scale"]))
    in_scale, out_scale = float(_scale(ifm)), float(_scale(ofm))
    identity_m, identity_s = quantize_multiplier(in_scale / out_scale)
    alpha_m, alpha_s = quantize_multiplier(in_scale * alpha_scale / out_scale)
    zp_in, zp_out = _zero(ifm), _zero(ofm)

    def value(x: int) -> int:
        d = x - zp_in
        if d >= 0:
            return zp_out + multiply_by_quantized_multiplier(d, identity_m, identity_s)
        return zp_out + multiply_by_quantized_multiplier(d * alpha_q, alpha_m, alpha_s)
    return value


def _sat16(x: int) -> int:
    return max(INT16_MIN, min(INT16_MAX, x))


def _hard_swish(ifm: Quantization, ofm: Quantization, options: Mapping[str, object]) -> Table:
    hires = np.float32(np.float32(1.0 / 128.0) * _scale(ifm))
    out_m, out_e = quantize_multiplier(float(np.float32(hires / _scale(ofm))))
    relu_m, relu_e = quantize_multiplier(float(np.float32(hires / np.float32(3.0 / 32768.0))))
    out16, relu16 = downscale_multiplier_to_int16(out_m), downscale_multiplier_to_int16(relu_m)
    if out_e > 0:
        raise ValueError("HARD_SWISH needs an output multiplier exponent <= 0 (TFLite's Prepare refuses it)")
    zp_in, zp_out = _zero(ifm), _zero(ofm)

    def value(x: int) -> int:
        hires_value = wrap16((x - zp_in) * 128)
        preshift = rounding_doubling_high_mul(hires_value, out16, bits=16)
        reluish = hires_value
        if relu_e > 0:
            reluish = _sat16(reluish * (1 << (relu_e - 1)))
        reluish = rounding_doubling_high_mul(reluish, relu16, bits=16)
        if relu_e > 0:
            reluish = _sat16(reluish * 2)
        if relu_e < 0:
            reluish = rounding_divide_by_pot16(reluish, -relu_e)
        reluish = (reluish + (1 << 15)) >> 1
        product = INT16_MAX if reluish == preshift == INT16_MIN else wrap16(c_div(reluish * preshift, 1 << 15))
        return wrap16(rounding_divide_by_pot16(product, -out_e) + zp_out)
    return value


def _rsqrt(ifm: Quantization, ofm: Quantization, options: Mapping[str, object]) -> Table:
    """TFLite's int8 RSQRT: 1/sqrt of the input difference by ``GetInvSqrtQuantizedMultiplierExp``
    (kept << 20), then the output multiplier of 1/(sqrt(input scale) * output scale), computed in
    float32 as its Prepare does. The kernel rejects inputs below the zero point; their entries, like
    the zero point's, are the largest value (as Vela's table has them)."""
    scale = 1.0 / float(np.float32(np.float32(math.sqrt(float(_scale(ifm)))) * _scale(ofm)))
    multiplier, shift = quantize_multiplier(scale)
    zp_in, zp_out = _zero(ifm), _zero(ofm)

    def value(x: int) -> int:
        d = x - zp_in
        if d <= 0:
            return 127
        inv, inv_shift = inv_sqrt_multiplier_exp(d)
        data = multiply_by_quantized_multiplier(1, inv, inv_shift + 20)
        return multiply_by_quantized_multiplier(data, multiplier, shift - 20) + zp_out
    return value


def _float_lut(function: Callable[[float, Mapping[str, object]], float]) -> Callable[
        [Quantization, Quantization, Mapping[str, object]], Table]:
    """TFLite's ``LUTPopulate``: dequantize in float32, apply the float function, scale by the
    float32 inverse of the output scale, round half away from zero, add the zero point. The
    function's float32 result is taken as the correctly rounded value of the real function (what
    the C library's ``expf``, ``logf``, ``erff`` give). A value beyond int32 saturates (as a
    float-to-int conversion does on Arm; C leaves it undefined)."""
    def make(ifm: Quantization, ofm: Quantization, options: Mapping[str, object]) -> Table:
        in_scale, zp_in, zp_out = _scale(ifm), _zero(ifm), _zero(ofm)
        inverse = np.float32(np.float32(1.0) / _scale(ofm))

        def value(x: int) -> int:
            real = float(np.float32(in_scale * np.float32(x - zp_in)))
            with np.errstate(over="ignore", invalid="ignore"):
                transformed = np.float32(function(real, options))
                rescaled = np.float32(tflite_round(float(np.float32(transformed * inverse))))
                total = float(np.float32(rescaled + np.float32(zp_out)))
            return int(max(-(1 << 31), min((1 << 31) - 1, total)))
        return value
    return make


def _exp(x: float, options: Mapping[str, object]) -> float:
    return math.exp(x) if x < 709.0 else math.inf


def _log(x: float, options: Mapping[str, object]) -> float:
    return math.log(x) if x > 0 else -math.inf  # non-positive inputs give the lowest value (as LiteRT's kernel)


def _gelu(x: float, options: Mapping[str, object]) -> float:
    if options.get("approximate"):  # TFLite's tanh form, in float32 as its kernel writes it
        x32 = np.float32(x)
        inner = np.float32(np.float32(math.sqrt(2.0 / math.pi)) * (x32 + np.float32(0.044715) * x32 * x32 * x32))
        return float(np.float32(0.5) * x32 * (np.float32(1.0) + np.float32(math.tanh(float(inner)))))
    x32 = np.float32(x)
    return float(np.float32(0.5) * x32 * (np.float32(1.0) + np.float32(math.erf(float(x32 * np.float32(math.sqrt(0.5)))))))


_TABLES: dict[str, Callable[[Quantization, Quantization, Mapping[str, object]], Table]] = {
    "TANH": _tanh, "LOGISTIC": _logistic, "LEAKY_RELU": _leaky_relu, "PRELU": _prelu, "HARD_SWISH": _hard_swish,
    "EXP": _float_lut(_exp), "LOG": _float_lut(_log), "GELU": _float_lut(_gelu), "RSQRT": _rsqrt,
}
_TYPES = {"TANH": (DataType.INT8, DataType.UINT8), "LOGISTIC": (DataType.INT8, DataType.UINT8), "EXP": (DataType.INT8,),
          "LOG": (DataType.INT8,), "RSQRT": (DataType.INT8,)}
LUT_ACTIVATIONS = frozenset(_TABLES)  # the TFLite activations a table is computed for


def lut_reason(kind: str, dtype: DataType) -> str | None:
    """Why an activation of TFLite type ``kind`` on ``dtype`` has no table here, or None."""
    if kind not in _TABLES:
        return f"{kind}'s lookup table is not computed by npuplan yet"
    if dtype not in _TYPES.get(kind, (DataType.INT8, DataType.UINT8)):
        return f"{kind}'s lookup table is computed for {' and '.join(str(t) for t in _TYPES.get(kind, ()))} only"
    return None


def activation_table(kind: str, dtype: DataType, ifm: Quantization, ofm: Quantization,
                     options: Mapping[str, object]) -> np.ndarray | None:
    """The 256 output values (``dtype``) of activation ``kind`` indexed by input value, or None
    when ``lut_reason`` gives a reason."""
    if lut_reason(kind, dtype) is not None:
        return None
    try:
        key = tuple(sorted(options.items()))
        hash(key)
    except TypeError:  # an option value that cannot key the memo: compute it afresh
        return _computed_table(kind, dtype, ifm, ofm, options)
    return _memo_table(kind, dtype, ifm, ofm, key)


@functools.lru_cache(maxsize=4096)
def _memo_table(kind: str, dtype: DataType, ifm: Quantization, ofm: Quantization,
                options: tuple[tuple[str, object], ...]) -> np.ndarray | None:
    """``_computed_table`` memoised by value: recurrent cells repeat one activation hundreds of
    times with the same quantization (the tables are read-only, so sharing one is safe)."""
    return _computed_table(kind, dtype, ifm, ofm, dict(options))


def _computed_table(kind: str, dtype: DataType, ifm: Quantization, ofm: Quantization,
                    options: Mapping[str, object]) -> np.ndarray | None:
    try:
        with np.errstate(all="raise"):  # a scale ratio out of range (a corrupt quantization): no table
            value = _TABLES[kind](ifm, ofm, options)
    except (ValueError, ArithmeticError):
        return None
    lo, hi = (0, 255) if dtype == DataType.UINT8 else (-128, 127)
    table = np.array([min(hi, max(lo, value(x))) for x in _inputs(dtype)],
                     dtype=np.uint8 if dtype == DataType.UINT8 else np.int8)
    table.flags.writeable = False
    return table
