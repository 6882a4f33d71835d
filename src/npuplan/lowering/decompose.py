"""Operators the NPU runs as a few elementwise operations, decomposed the way Vela 5.2.0 does.

- PRELU: with one alpha value for every channel, a LEAKY_RELU (a lookup table for 8-bit types) or
  a clamp at zero; with every alpha below 1, ``max(x * alpha, x)``; otherwise
  ``min(x, 0) * alpha + relu(x)``.
- SQUARED_DIFFERENCE: both inputs widened to 32 bits (a 1x1 depthwise convolution each) and
  rescaled (a multiplication each), subtracted, squared, and rescaled to the output.

Intermediate tensors are named ``<op>_<role>`` and take the output's quantization (32-bit ones
scale 1, or none where Vela's have none), so the plan allocates and costs each step.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import Activation, BlockType, Kernel, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering._util import fused_activation
from npuplan.lowering.fixedpoint import quantise_scale
from npuplan.lowering.lut_tables import activation_table


def _name(op: Op) -> str:
    return str(op.options.get("npu_name", op.name))


def _elementwise(op: Op, name: str, kind: str, a: Tensor, b: Tensor | None, out: Tensor,
                 activation: Activation = Activation.NONE) -> NpuOp:
    return NpuOp(
        name=name, tflite_type=op.type, op_type=kind.capitalize(),
        block_type=BlockType.ELEMENTWISE, ifm=a, ifm_shape=a.shape4d, ifm2=b,
        ifm2_shape=None if b is None else b.shape4d, ofm=out, ofm_shape=out.shape4d, activation=activation,
        elementwise=kind, source_index=op.index,
    )


def _like(tensor: Tensor, name: str, dtype: DataType | None = None) -> Tensor:
    if dtype is not None and dtype != tensor.dtype:
        return Tensor(name, tensor.shape, dtype, None)
    return Tensor(name, tensor.shape, tensor.dtype, tensor.quant)


def _scalar(name: str, like: Tensor, value: int, scale: float | None = None) -> Tensor:
    """A constant of ``like``'s type; with ``scale`` quantized (scale, zero point 0) so that it is
    the real ``value * scale`` (Vela's zero and one constants), else with ``like``'s quantization."""
    data = np.full((), value, dtype=np.int8 if like.dtype.bits == 8 else np.int32)
    data.flags.writeable = False
    quant = like.quant if scale is None else Quantization((scale,), (0,))
    return Tensor(name, (), like.dtype, quant, data)


def _real_zero(name: str, like: Tensor) -> Tensor:
    """A real 0 in ``like``'s scale (zero point 0): the hardware subtracts each operand's zero point."""
    return _scalar(name, like, 0, like.quant.scale[0] if like.quant is not None and like.quant.scale else 1.0)


def _single_alpha_table(ifm: Tensor, alpha: Tensor, ofm: Tensor) -> np.ndarray | None:
    """The lookup table of a PRELU whose alphas are all one value (``lut_tables``)."""
    if ifm.quant is None or ofm.quant is None or alpha.quant is None or alpha.data is None or ifm.dtype != ofm.dtype:
        return None
    alpha_q = int(alpha.data.reshape(-1)[0]) - int((alpha.quant.zero_point or (0,))[0])
    return activation_table("PRELU", ifm.dtype, ifm.quant, ofm.quant,
                            {"alpha_q": alpha_q, "alpha_scale": float(np.float32(alpha.quant.scale[0]))})


def _real_alphas(alpha: Tensor) -> np.ndarray | None:
    if alpha.data is None or alpha.quant is None or not alpha.quant.scale:
        return None
    zero = np.asarray(alpha.quant.zero_point or (0,), dtype=np.int64)
    scale = np.asarray(alpha.quant.scale, dtype=np.float64)
    values = alpha.data.astype(np.int64)
    if scale.size > 1 and values.shape and values.shape[-1] == scale.size:
        return (values - zero.reshape(-1)[: scale.size]) * scale
    return (values - int(zero.reshape(-1)[0])) * float(scale[0])


def convert_prelu(op: Op) -> tuple[NpuOp, ...]:
    """PRELU -> a LUT, a clamp, ``max(x * alpha, x)`` or ``min(x, 0) * alpha + relu(x)``."""
    ifm, alpha, ofm = op.inputs[0], op.inputs[1], op.outputs[0]
    assert ifm is not None and alpha is not None
    name = _name(op)
    reals = _real_alphas(alpha)
    if reals is not None and reals.size and float(reals.min()) == float(reals.max()):
        if float(reals.min()) == 0.0:
            return (NpuOp(name=name, tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING,
                          ifm=ifm, ifm_shape=ifm.shape4d, ofm=ofm, ofm_shape=ofm.shape4d,
                          activation=Activation.RELU, pool=PoolKind.AVERAGE, source_index=op.index),)
        if ifm.dtype.bits == 8:
            zero = _real_zero(ifm.name + "_scalar0", ifm)
            return (NpuOp(name=f"{name}_lut_lrelu", tflite_type=op.type, op_type="Add",
                          block_type=BlockType.ELEMENTWISE, ifm=ifm, ifm_shape=ifm.shape4d, ifm2=zero,
                          ifm2_shape=Shape4D(), ofm=ofm, ofm_shape=ofm.shape4d, activation=Activation.LUT,
                          elementwise="ADD", source_index=op.index, lut=_single_alpha_table(ifm, alpha, ofm)),)
    if reals is not None and reals.size and float(reals.max()) < 1.0:
        scaled = _like(ofm, f"{name}_alpha")
        ops = [_elementwise(op, f"{name}_mul_alpha", "MUL", ifm, alpha, scaled)]
        identity = ifm
        if ifm.quant != ofm.quant:
            identity = _like(ofm, f"{name}_id")
            ops.append(_elementwise(op, f"{name}_mul_identity", "MUL", ifm, _scalar(f"{name}_one", ifm, 1, 1.0),
                                    identity))
        ops.append(_elementwise(op, f"{name}_max", "MAXIMUM", scaled, identity, ofm, fused_activation(op.options)))
        return tuple(ops)
    negative = _like(ifm, f"{name}_negative")
    scaled = _like(ofm, f"{name}_negative_alpha")
    positive = _like(ofm, f"{name}_positive_scaled")
    return (
        _elementwise(op, f"{name}_min", "MINIMUM", ifm, _real_zero(f"{name}_zero", ifm), negative),
        _elementwise(op, f"{name}_mul_alpha", "MUL", negative, alpha, scaled),
        NpuOp(name=f"{name}_relu", tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING, ifm=ifm,
              ifm_shape=ifm.shape4d, ofm=positive, ofm_shape=positive.shape4d, activation=Activation.RELU,
              pool=PoolKind.AVERAGE, source_index=op.index),
        _elementwise(op, f"{name}_add", "ADD", scaled, positive, ofm, fused_activation(op.options)),
    )


def is_decomposed_leaky_relu(op: Op) -> bool:
    """A 16-bit LEAKY_RELU: Vela runs it as elementwise ops, not as a lookup table."""
    ifm = op.inputs[0] if op.inputs else None
    return op.type == "LEAKY_RELU" and ifm is not None and ifm.dtype == DataType.INT16


def convert_leaky_relu_16(op: Op) -> tuple[NpuOp, ...]:
    """16-bit LEAKY_RELU as PRELU with one alpha: ``max(x * alpha, x)`` for 0 < alpha < 1, else
    ``min(x, 0) * alpha + relu(x)`` (Vela's MUL/MAXIMUM lowering)."""
    ifm = op.inputs[0]
    assert ifm is not None
    alpha = float(op.options.get("alpha", 0.2))
    q = Quantization((max(abs(alpha), 1e-9) / 16384,), (0,))
    data = np.full((), 16384 if alpha >= 0 else -16384, dtype=np.int16)
    data.flags.writeable = False
    as_prelu = Op("PRELU", (ifm, Tensor(f"{op.name}_alpha", (), DataType.INT16, q, data)), op.outputs,
                  op.options, op.index)
    return convert_prelu(as_prelu)


_IDENTITY = Quantization((1.0,), (0,))


def _widen(op: Op, name: str, source: Tensor, left_shift: int) -> tuple[NpuOp, Tensor]:
    """A 1x1 depthwise convolution with unit weights copying ``source`` less its zero point into 32
    bits, shifted left by ``left_shift`` (its explicit channel scale): Vela's cast."""
    out = Tensor(name, source.shape, DataType.INT32, _IDENTITY)
    channels = source.shape4d.c
    weights = np.ones((1, 1, 1, channels), dtype=np.uint8)
    weights.flags.writeable = False
    bias = np.zeros(channels, dtype=np.int64 if source.dtype == DataType.INT16 else np.int32)
    cast = NpuOp(name=name, tflite_type=op.type, op_type="DepthwiseConv2DBias", block_type=BlockType.DEPTHWISE,
                 ifm=source, ifm_shape=source.shape4d, ofm=out, ofm_shape=out.shape4d, weights=weights,
                 weight_tensor=Tensor(f"{name}_weights", weights.shape, DataType.UINT8, _IDENTITY, weights),
                 bias=bias, kernel=Kernel(), source_index=op.index, rescale=(1 << left_shift, 0))
    return cast, out


def _multiplier(name: str, value: int) -> Tensor:
    data = np.full((1,), value, dtype=np.int32)
    data.flags.writeable = False
    return Tensor(name, (1,), DataType.INT32, _IDENTITY, data)


def squared_difference_scaling(a: Quantization, b: Quantization, out: Quantization,
                               dtype: DataType) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int], int]:
    """TFLite's reference scaling of SQUARED_DIFFERENCE (as Vela computes it): each input's
    ``(multiplier, shift)`` to twice the larger input scale, the output's, and the left shift."""
    twice_max = np.double(2.0 * max(np.float32(a.scale[0]), np.float32(b.scale[0])))
    left_shift = 0 if dtype == DataType.INT16 else 7
    output = (twice_max * twice_max) / np.double((1 << (left_shift * 2)) * np.float32(out.scale[0]))
    return (quantise_scale(float(np.double(np.float32(a.scale[0])) / twice_max)),
            quantise_scale(float(np.double(np.float32(b.scale[0])) / twice_max)),
            quantise_scale(float(output)), left_shift)


def convert_squared_difference(op: Op) -> tuple[NpuOp, ...]:
    """SQUARED_DIFFERENCE -> widen, rescale (each input), subtract, square, rescale to the output,
    each 32-bit step with Vela's explicit scaling (the multiplier a constant operand, the shift the
    output stage's)."""
    a, b, ofm = op.inputs[0], op.inputs[1], op.outputs[0]
    assert a is not None and b is not None
    name = _name(op)
    scales = None
    if a.quant is not None and b.quant is not None and ofm.quant is not None:
        scales = squared_difference_scaling(a.quant, b.quant, ofm.quant, a.dtype)
    (m1, m2, m_out, left_shift) = scales if scales is not None else ((1, 0), (1, 0), (1, 0), 7)
    ops: list[NpuOp] = []
    scaled: list[Tensor] = []
    for i, (source, (mult, shift)) in enumerate(((a, m1), (b, m2)), start=1):
        suffix = "" if i == 1 else "2"
        cast, wide = _widen(op, f"{name}_ifm{suffix}_32bit_shifted", source, left_shift)
        out = Tensor(f"{name}_ifm{suffix}_scaled", source.shape, DataType.INT32, _IDENTITY)
        mul = _elementwise(op, f"{name}_scaled_input{i}", "MUL", wide, _multiplier(f"{name}_input{i}_multiplier", mult),
                           out)
        ops += [cast, replace(mul, rescale=(mult, shift))]
        scaled.append(out)
    raw = Tensor(f"{name}_raw_diff", ofm.shape, DataType.INT32, None)
    squared = Tensor(f"{name}_squared_raw", ofm.shape, DataType.INT32, None)
    final = _elementwise(op, name, "MUL", squared, _multiplier(f"{name}_output_multiplier", m_out[0]), ofm,
                         fused_activation(op.options))
    ops += [
        _elementwise(op, f"{name}_raw_diff", "SUB", scaled[0], scaled[1], raw),
        _elementwise(op, f"{name}_squared_raw", "MUL", raw, raw, squared),
        replace(final, rescale=m_out),
    ]
    return tuple(ops)


def prelu_reason(op: Op) -> str | None:
    ifm, alpha, ofm = op.inputs[0], op.inputs[1], op.outputs[0]
    assert ifm is not None and alpha is not None
    if ifm.dtype not in (DataType.INT8, DataType.UINT8, DataType.INT16) or ifm.dtype != ofm.dtype:
        return f"IFM and OFM must be int8, uint8 or int16 and match ({ifm.dtype} and {ofm.dtype})"
    if ifm.shape4d != ofm.shape4d:
        return "IFM and OFM shapes must match"
    if any(x != y and x != 1 for x, y in zip(alpha.shape4d.as_list(), ifm.shape4d.as_list())):
        return f"Alpha must broadcast to the IFM ({list(alpha.shape)} and {list(ifm.shape)})"
    return None


def squared_difference_reason(op: Op) -> str | None:
    a, b, ofm = op.inputs[0], op.inputs[1], op.outputs[0]
    assert a is not None and b is not None
    if a.dtype != b.dtype or a.dtype not in (DataType.INT8, DataType.UINT8, DataType.INT16):
        return f"Both inputs must be int8, uint8 or int16 and match ({a.dtype} and {b.dtype})"
    sa, sb, so = (t.shape4d.as_list() for t in (a, b, ofm))
    if any(x != y and 1 not in (x, y) for x, y in zip(sa, sb)) or (sa != so and sb != so):
        return f"Inputs must broadcast to the OFM ({sa}, {sb} and {so})"
    return None
