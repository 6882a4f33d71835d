"""SOFTMAX -> Vela's fixed-point decomposition into NPU operations, with every number it runs with.

8 bits (int8 and uint8; an int8 input may write int16, TFLite's last shift then keeping 16
bits), 28 operations, TFLite's reference kernel in integer steps: a max pooling
over each row's channels, a Sub of the row's maximum whose output goes through the exp table
(``lowering.softmax_tables``) into int32, the exponentials shifted right by 12 and summed, CLZ of
the sum, a Newton-Raphson reciprocal of the normalised sum (three iterations of Mul/Sub/Mul/Mul/Add
in Q2.29), and the exponentials multiplied by it and shifted right by the headroom into the
output. The steps are data (``_8BIT``): each names its operands, earlier results or int32 scalar
constants, its OFM view (``full``: the softmax's shape; ``row``: one value per row), and its
output stage (explicit multiplier and shift, rounding). Every step is a raw fixed-point operation
(``NpuOp.fixed_point``): operands unscaled, an int32 operand read with zero point 0, the exp
table's Sub writing with zero point 127 (the table's index offset), as Vela's decomposition runs
them (facts from Vela 5.2.0's output, checked register by register: bench/softmax_compare.py).
16 bits, 15 operations (``_16BIT``): the same shape of computation with Vela's two interpolating
int16 tables, exp and 1/(1+x).
"""

from __future__ import annotations

import math

import numpy as np

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import Activation, BlockType, Kernel, NpuOp, PoolKind, Rounding
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.softmax_tables import beta_multiplier_16bit, exp_table_16bit, exp_table_8bit, \
    reciprocal_table_16bit
from npuplan.records import record

Operand = str | int  # an earlier step's result ("ifm": the softmax's input), or an int32 scalar constant
_FULL, _ROW = "full", "row"
_ZEROS = "zeros"  # a full-shape int32 constant of zeros (Vela adds it before the last shift)
_BETA = "beta"  # 16 bits: the beta scaling's constant multiplier and output stage (``softmax_tables``)
_EXP8, _EXP16, _RECIPROCAL16 = "exp8", "exp16", "reciprocal16"  # the tables
_HALF = (1 << 30, 31)  # output stage x 0.5: a product of two Q2.29 values back in Q2.29 (Vela's 1 x 1 / 2)
_ONE = (1 << 30, 30)  # output stage x 1 (Vela's 1 x 1 / 1)


@record(eq=False)
class Step:
    """One NPU operation of the decomposition: Vela's op name, operands, OFM view and output stage
    (``rescale``: explicit multiplier and shift, None for 1; ``lut``: the table its output goes
    through; ``result``: the name later steps read it by)."""

    result: str
    op_type: str
    a: Operand
    b: Operand | None = None
    view: str = _ROW
    rescale: tuple[int, int] | str | None = None  # a str: computed per softmax (``_scaling``)
    rounding: Rounding = Rounding.TFL
    lut: str | None = None  # the table its output goes through (``_tables``)
    dtype: DataType = DataType.INT32  # its output's (the max: the IFM's; the last step: the OFM's)


def _newton_raphson() -> tuple[Step, ...]:
    """One iteration x += x * (1 - d * x) * 4 of the reciprocal of d = the half denominator, in Q2.29."""
    return (
        Step("d_x", "Mul", "x", "half_denominator", rescale=_HALF),
        Step("one_minus_d_x", "Sub", 1 << 29, "d_x"),
        Step("x_one_minus_d_x", "Mul", "x", "one_minus_d_x", rescale=_HALF),
        Step("to_add", "Mul", "x_one_minus_d_x", 4),
        Step("x", "Add", "x", "to_add"),
    )


def _8bit(output_bits: int) -> tuple[Step, ...]:
    """The 8-bit decomposition writing ``output_bits``-bit values: TFLite's last shift leaves that
    many bits of the reciprocal times the exponential (an int8 input's int16 output: 16)."""
    return _8BIT_STEPS[:5] + (Step("right_shift", "Sub", 12 + 31 - output_bits, "headroom_plus_one"),) + \
        _8BIT_STEPS[6:]


_8BIT_STEPS: tuple[Step, ...] = (
    Step("max", "MaxPool", "ifm"),
    Step("exp", "Sub", "ifm", "max", _FULL, lut=_EXP8),
    Step("rescaled_exp", "SHR", "exp", 12, _FULL, rounding=Rounding.NATURAL),
    Step("sum", "ReduceSum", "rescaled_exp", rounding=Rounding.NATURAL),
    Step("headroom_plus_one", "CLZ", "sum"),
    Step("right_shift", "Sub", 12 + 31 - 8, "headroom_plus_one"),
    Step("headroom", "Sub", "headroom_plus_one", 1),
    Step("half_denominator", "SHL", "sum", "headroom"),
    Step("rescaled", "Mul", "half_denominator", -((32 << 29) // 17), rescale=_HALF),  # -32/17 in Q2.29
    Step("x", "Add", "rescaled", (48 << 29) // 17),  # + 48/17: the reciprocal's first estimate
    *(_newton_raphson() * 3),
    Step("scaled_exp", "Mul", "exp", "x", _FULL, rescale=_ONE),
    Step("offset_exp", "Add", _ZEROS, "scaled_exp", _FULL),
    Step("ofm", "SHR", "offset_exp", "right_shift", _FULL, rounding=Rounding.NATURAL),
)
assert _8BIT_STEPS[5].result == "right_shift"
_8BIT = _8bit(8)
_8BIT_TO_16 = _8bit(16)

# 16 bits, 15 operations: the differences to the row maximum scaled by beta into the exp table's
# input steps (a Mul by a constant holding the scale's Q31 multiplier, whose output stage applies
# the same scale in float32 precision: Vela's), offset into the table's int16 input, the sum of
# the exponentials, and the reciprocal of the sum through the 1/(1+x) table on its top 16 bits.
_16BIT: tuple[Step, ...] = (
    Step("max", "MaxPool", "ifm", rounding=Rounding.NATURAL),
    Step("diff", "Sub", "ifm", "max", _FULL),
    Step("scaled_diff", "Mul", "diff", _BETA, _FULL, rescale=_BETA),
    Step("exp", "Add", "scaled_diff", 32767, _FULL, lut=_EXP16, dtype=DataType.INT16),
    Step("sum", "ReduceSum", "exp", rounding=Rounding.NATURAL),
    Step("headroom_plus_one", "CLZ", "sum"),
    Step("right_shift", "Sub", 31, "headroom_plus_one"),
    Step("one", "SHL", 1, "right_shift"),
    Step("sum_minus_one", "Sub", "sum", "one"),
    Step("shifted_sum_minus_one", "SHL", "sum_minus_one", "headroom_plus_one"),
    Step("shifted16", "SHR", "shifted_sum_minus_one", 15, rounding=Rounding.NATURAL),
    Step("reciprocal", "Sub", "shifted16", 32768, lut=_RECIPROCAL16, dtype=DataType.INT16),
    Step("scaled_exp", "Mul", "exp", "reciprocal", _FULL),
    Step("offset_exp", "Add", _ZEROS, "scaled_exp", _FULL),
    Step("ofm", "SHR", "offset_exp", "right_shift", _FULL, rounding=Rounding.NATURAL),
)

_ELEMENTWISE = {"Sub": "SUB", "Add": "ADD", "Mul": "MUL", "SHR": "SHR", "SHL": "SHL", "CLZ": "CLZ"}
_BLOCKS = {"MaxPool": BlockType.POOLING, "ReduceSum": BlockType.REDUCE_SUM}
_RAW = Quantization(scale=(1.0,), zero_point=(0,))
_EXP_ZERO_POINT = 127  # the exp table's Sub output: x - max + 127 indexes the table (x - max <= 0)


def softmax_steps(dtype: DataType, output: DataType | None = None) -> tuple[Step, ...]:
    """The decomposition used for a softmax on ``dtype`` writing ``output`` (default: ``dtype``)."""
    if dtype == DataType.INT16:
        return _16BIT
    return _8BIT_TO_16 if output == DataType.INT16 else _8BIT


def _prime_factors(n: int) -> list[int]:
    """``n``'s prime factors, smallest first, with repetition."""
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out + ([n] if n > 1 else [])


def elementwise_block(shape: Shape4D) -> Shape4D | None:
    """The shape Vela runs an elementwise step in whose operands all have ``shape`` (no broadcast),
    or None for ``shape`` itself: a map less than 8 deep of more than 16 values runs as one
    H x W x C block of them, C the product of the smallest prime factors until it reaches 16, H and
    W sharing the rest (dealt to H and W in turn, largest first). Facts from Vela 5.2.0's output
    (e.g. 20 x 4: 5 x 1 x 16; 42 x 7 x 4: 7 x 7 x 24; 32 x 7 x 4: 14 x 4 x 16; 7275 rows of one
    value: 97 x 1 x 75; 20 x 8 runs as it is)."""
    if shape.c >= 8 or shape.elements <= 16:
        return None
    factors = _prime_factors(shape.elements)
    depth = 1
    while depth < 16 and factors:
        depth *= factors.pop(0)
    rest = factors[::-1]  # largest first, dealt to H and W in turn
    return Shape4D(1, math.prod(rest[0::2]), math.prod(rest[1::2]), depth)


def _block(step: Step, view: Shape4D, a: tuple[Tensor, Shape4D],
           b: tuple[Tensor, Shape4D] | None) -> Shape4D | None:
    """The block an elementwise step runs on (``elementwise_block``) when no operand broadcasts."""
    if step.op_type in _BLOCKS or any(o is not None and o[1] not in (view, Shape4D()) for o in (a, b)):
        return None
    return elementwise_block(view)


def _constant(name: str, value: int, shape: Shape4D) -> Tensor:
    data = np.full(tuple(shape.as_list()), value, dtype=np.int32)
    data.flags.writeable = False
    return Tensor(name, tuple(shape.as_list()), DataType.INT32, _RAW, data)


def _result_tensor(op: Op, step: Step, name: str, view: Shape4D) -> Tensor:
    """The tensor a step writes: the softmax's OFM last, the max in the IFM's type, else int32."""
    ifm, ofm = op.inputs[0], op.outputs[0]
    assert ifm is not None
    if step.result == "ofm":
        return ofm
    if step.op_type == "MaxPool":  # the IFM's values and zero point, unscaled
        assert ifm.quant is not None
        quant = Quantization(scale=(1.0,), zero_point=ifm.quant.zero_point[:1])
        return Tensor(f"{name}_out", tuple(view.as_list()), ifm.dtype, quant)
    quant = Quantization(scale=(1.0,), zero_point=(_EXP_ZERO_POINT,)) if step.lut == _EXP8 else _RAW
    return Tensor(f"{name}_out", tuple(view.as_list()), step.dtype, quant)


def _numbers(op: Op) -> tuple[dict[str, np.ndarray], dict[str, int], dict[str, tuple[int, int]]]:
    """The softmax's tables, computed scalar constants and output stages, by name (none the
    quantization or beta does not allow: the ops then have no table and stay on the CPU)."""
    ifm = op.inputs[0]
    assert ifm is not None
    if ifm.quant is None or not ifm.quant.is_valid:
        return {}, {}, {}
    beta, scale = float(op.options.get("beta", 1.0)), float(ifm.quant.scale[0])
    if ifm.dtype == DataType.INT16:
        multiplier, rescale = beta_multiplier_16bit(scale, beta)
        return {_EXP16: exp_table_16bit(), _RECIPROCAL16: reciprocal_table_16bit()}, {_BETA: multiplier}, {
            _BETA: rescale}
    table = exp_table_8bit(beta, scale)
    return ({} if table is None else {_EXP8: table}), {}, {}


def convert_softmax(op: Op) -> tuple[NpuOp, ...]:
    """The NPU ops of one SOFTMAX (batches run as rows, as Vela runs them)."""
    ifm, ofm = op.inputs[0], op.outputs[0]
    assert ifm is not None
    # Everything runs in the OFM's view, the shape the file gives the softmax: a removed reshape
    # before it may have left the IFM another view of the same rows (the support check asks for the
    # same depth and element count), read as the OFM's; Vela runs it in the file's shape.
    shape = ofm.shape4d
    full = Shape4D(1, shape.n * shape.h, shape.w, shape.c)
    views = {_FULL: full, _ROW: Shape4D(1, full.h, full.w, 1)}
    pixels = full.h * full.w
    tables, scalars, rescales = _numbers(op)
    results: dict[str, tuple[Tensor, Shape4D]] = {"ifm": (ifm, full)}
    ops: list[NpuOp] = []
    for i, step in enumerate(softmax_steps(ifm.dtype, ofm.dtype)):
        name = f"{op.name}_{step.op_type.lower().replace('reducesum', 'reduce_sum')}{i}"

        def operand(value: Operand | None, position: int) -> tuple[Tensor, Shape4D] | None:
            if value is None:
                return None
            if isinstance(value, int) or value in scalars:
                scalar = value if isinstance(value, int) else scalars[value]
                return _constant(f"{name}_const{position}", scalar, Shape4D()), Shape4D()
            if value == _ZEROS:
                return _constant(f"{name}_zeros", 0, full), full
            return results[value]

        a, b = operand(step.a, 1), operand(step.b, 2)
        assert a is not None
        pool = step.op_type == "MaxPool"
        view = Shape4D(1, pixels, 1, 1) if pool else views[step.view]
        block = _block(step, view, a, b)
        if block is not None:  # an elementwise step without broadcast: on Vela's block of its values
            view = block
            a = a[0], a[1] if a[1] == Shape4D() else block
            b = None if b is None else (b[0], b[1] if b[1] == Shape4D() else block)
        out = _result_tensor(op, step, name, view if block is not None and step.result != "ofm" else views[step.view])
        ops.append(NpuOp(
            name=name, tflite_type=op.type, op_type=step.op_type,
            block_type=_BLOCKS.get(step.op_type, BlockType.ELEMENTWISE),
            ifm=a[0], ifm_shape=Shape4D(1, pixels, full.c, 1) if pool else a[1],
            ifm2=None if b is None else b[0], ifm2_shape=None if b is None else b[1],
            ofm=out, ofm_shape=view, kernel=Kernel(1, full.c) if pool else Kernel(),
            activation=Activation.LUT if step.lut else Activation.NONE,
            lut=tables.get(step.lut) if step.lut else None,
            pool=PoolKind.MAX if pool else PoolKind.NONE, elementwise=_ELEMENTWISE.get(step.op_type),
            source_index=op.index, rescale=rescales.get(step.rescale) if isinstance(step.rescale, str) else step.rescale,
            fixed_point=step.rounding,
        ))
        results[step.result] = (out, views[step.view])
    return tuple(ops)
