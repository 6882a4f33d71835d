"""BATCH_MATMUL of two int8 feature maps -> NPU operations, in the form Vela 5.2.0's default core
gives it on Ethos-U55/U65 (which have no matrix-multiply operation).

``C = A x B`` with ``A`` of ``P x M x K`` and ``B`` of ``P x K x N`` (``P`` the batch axes merged:
the heads of an attention). ``B`` is first transposed to ``P x N x K`` (``lowering.transposes``;
already so with ``adj_y``), and with ``adj_x`` ``A`` (``P x K x M``) to ``P x M x K``. Then, for each output column ``j``, a fixed-point Mul multiplies ``A``
(``P`` rows of ``M`` pixels of ``K`` channels) by row ``j`` of the transposed ``B`` (``P x 1 x K``,
broadcast along the width) into int32 products less both zero points, and a ReduceSum over the
depth writes their sums, scaled by TFLite's multiplier ``lhs_scale * rhs_scale / out_scale``
(rounded as TFLite's ``MultiplyByQuantizedMultiplier``) and offset by the output's zero point, into
channel ``j`` of ``C`` (``P x M x N``). 2N + the transpose's operations; Vela's file for
zoo/op_batch_matmul (16 columns) has the same 32 Mul/ReduceSum pairs and output scale
(``0x4a4d55f3``, shift 39).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from npuplan.ir.graph import Op, Tensor, frozen_options
from npuplan.ir.lowered import BlockType, NpuOp, Rounding
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.fixedpoint import quantize_multiplier
from npuplan.lowering.transpose_steps import transpose_steps
from npuplan.lowering.transposes import convert_transpose

_RAW = Quantization(scale=(1.0,), zero_point=(0,))
_MAX_DIM = 65535


def _operands(op: Op) -> tuple[Tensor, Tensor, Tensor]:
    a, b, c = op.inputs[0], op.inputs[1], op.outputs[0]
    assert a is not None and b is not None
    return a, b, c


def _batches(t: Tensor) -> int:
    return int(np.prod([max(int(d), 1) for d in t.shape[:-2]], dtype=np.int64))


def _per_tensor(t: Tensor) -> bool:
    return t.quant is not None and t.quant.is_valid and len(t.quant.scale) == 1


def batch_matmul_reason(op: Op) -> str | None:
    """Why a BATCH_MATMUL cannot run on the NPU in this form, or None."""
    a, b, c = _operands(op)
    if a.is_constant or b.is_constant:
        return "BATCH_MATMUL with a constant operand is not supported on the NPU (a FULLY_CONNECTED's form)"
    if any(t.dtype != DataType.INT8 for t in (a, b, c)):
        return "BATCH_MATMUL runs on the NPU for int8 operands and output only"
    if not all(_per_tensor(t) for t in (a, b, c)):
        return "BATCH_MATMUL operands must be quantized per tensor"
    if not 2 <= len(a.shape) <= 4 or len(b.shape) != len(a.shape) or len(c.shape) != len(a.shape):
        return "BATCH_MATMUL operands must have the same rank, 2 to 4"
    if tuple(a.shape[:-2]) != tuple(b.shape[:-2]) or tuple(c.shape[:-2]) != tuple(a.shape[:-2]):
        return "BATCH_MATMUL operands must have the same batch axes (no broadcast)"
    if a.shape4d.n != 1:
        return "BATCH_MATMUL batch axes must merge into one (a 4-D operand's first axis 1)"
    _, m, k = _problem(op)
    if max(_batches(a), m, k) > _MAX_DIM or k * 4 > _MAX_DIM:
        return f"BATCH_MATMUL dimensions too large for the NPU ({list(a.shape)})"
    if _transpose_steps_needed(op) and not transpose_steps(*_transpose_view(op)):
        return f"BATCH_MATMUL's right operand cannot be transposed on the NPU ({list(b.shape)})"
    if _adj_x(op) and not transpose_steps(*_lhs_transpose_view(op)):
        return f"BATCH_MATMUL's left operand (adj_x) cannot be transposed on the NPU ({list(a.shape)})"
    return None


def _adj_x(op: Op) -> bool:
    return bool(op.options.get("adj_x", False))


def _problem(op: Op) -> tuple[int, int, int]:
    """``(P, M, K)``: batches, rows of ``A`` and the summed axis (``A`` is ``P x K x M`` with ``adj_x``)."""
    a, _, _ = _operands(op)
    rows, depth = int(a.shape[-2]), int(a.shape[-1])
    return (_batches(a), depth, rows) if _adj_x(op) else (_batches(a), rows, depth)


def _columns(op: Op) -> int:
    """``N``, the output's columns."""
    _, b, _ = _operands(op)
    return int(b.shape[-2] if op.options.get("adj_y", False) else b.shape[-1])


def _transpose_steps_needed(op: Op) -> bool:
    return not op.options.get("adj_y", False)


def _swap_view(p: int, rows: int, columns: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The merged ``(dims, perm)`` swapping the last two axes of ``P x rows x columns``."""
    return ((p, rows, columns), (0, 2, 1)) if p > 1 else ((rows, columns), (1, 0))


def _transpose_view(op: Op) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The merged ``(dims, perm)`` of ``B``'s transpose (``lowering.transposes``)."""
    p, _, k = _problem(op)
    return _swap_view(p, k, _columns(op))


def _lhs_transpose_view(op: Op) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The merged ``(dims, perm)`` of ``A``'s transpose with ``adj_x`` (``P x K x M`` to ``P x M x K``)."""
    p, m, k = _problem(op)
    return _swap_view(p, k, m)


def _swapped(op: Op, t: Tensor, role: str, shape: tuple[int, int, int],
             view: tuple[tuple[int, ...], tuple[int, ...]]) -> tuple[Tensor, tuple[NpuOp, ...]]:
    """``t`` with its last two axes swapped (``1 x shape``) and the operations transposing it."""
    out = Tensor(f"{op.name}_{role}_transposed", (1, *shape), t.dtype, t.quant)
    rank = len(t.shape)  # the batch axes kept, the last two swapped
    order = np.array([*range(rank - 2), rank - 1, rank - 2], dtype=np.int32)
    perm = Tensor(f"{op.name}_{role}_perm", (rank,), DataType.INT32, None, order)
    transpose = Op("TRANSPOSE", (t, perm), (out,), frozen_options({"transpose_view": view}), op.index)
    return out, tuple(replace(o, tflite_type=op.type) for o in convert_transpose(transpose))


def _transposed_rhs(op: Op) -> tuple[Tensor, tuple[NpuOp, ...]]:
    """``B`` as ``P x N x K`` and the operations transposing it (none with ``adj_y``)."""
    _, b, _ = _operands(op)
    if not _transpose_steps_needed(op):
        return b, ()
    p, _, k = _problem(op)
    return _swapped(op, b, "rhs", (p, _columns(op), k), _transpose_view(op))


def _transposed_lhs(op: Op) -> tuple[Tensor, tuple[NpuOp, ...]]:
    """``A`` as ``P x M x K`` and the operations transposing it (none without ``adj_x``)."""
    a, _, _ = _operands(op)
    if not _adj_x(op):
        return a, ()
    p, m, k = _problem(op)
    return _swapped(op, a, "lhs", (p, m, k), _lhs_transpose_view(op))


def output_scaling(op: Op) -> tuple[int, int]:
    """The ReduceSum's output stage ``(multiplier, right shift)``: TFLite's quantized multiplier of
    ``lhs_scale * rhs_scale / out_scale`` as its ``GetQuantizedConvolutionMultipler`` computes it (the
    product of the two scales in float32, divided in double; Vela's registers hold the same)."""
    a, b, c = _operands(op)
    assert a.quant is not None and b.quant is not None and c.quant is not None
    product = float(np.float32(a.quant.scale[0]) * np.float32(b.quant.scale[0]))
    multiplier, shift = quantize_multiplier(product / float(c.quant.scale[0]))
    return multiplier, 31 - shift


def convert_batch_matmul(op: Op) -> tuple[NpuOp, ...]:
    """The NPU operations of one BATCH_MATMUL (see the module's docstring)."""
    _, _, c = _operands(op)
    p, m, k = _problem(op)
    n = _columns(op)
    a, lhs_ops = _transposed_lhs(op)
    rhs, rhs_ops = _transposed_rhs(op)
    ops = lhs_ops + rhs_ops
    lhs_view, row_view, out_view = Shape4D(1, p, m, k), Shape4D(1, p, 1, k), Shape4D(1, p, m, 1)
    scaling = output_scaling(op)
    steps: list[NpuOp] = list(ops)
    for j in range(n):
        products = Tensor(f"{op.name}_products{j}", (1, p, m, k), DataType.INT32, _RAW)
        steps.append(NpuOp(
            name=f"{op.name}_mul{j}", tflite_type=op.type, op_type="Mul", block_type=BlockType.ELEMENTWISE,
            ifm=a, ifm_shape=lhs_view, ifm2=rhs, ifm2_shape=row_view, ifm2_read_offset=Shape4D(0, 0, j, 0),
            ofm=products, ofm_shape=lhs_view, elementwise="MUL", source_index=op.index, fixed_point=Rounding.TFL))
        steps.append(NpuOp(
            name=f"{op.name}_reduce_sum{j}", tflite_type=op.type, op_type="ReduceSum",
            block_type=BlockType.REDUCE_SUM, ifm=products, ifm_shape=lhs_view, ofm=c, ofm_shape=out_view,
            ofm_write_offset=Shape4D(0, 0, 0, j), ofm_write_shape=out_view, source_index=op.index,
            rescale=scaling, fixed_point=Rounding.TFL))
    return tuple(steps)
