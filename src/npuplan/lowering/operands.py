"""Make the feature map the primary input of binary elementwise ops (Vela's operand reversal).

When IFM is a constant (or a scalar) and IFM2 is a full-size feature map, the hardware runs with
the operands swapped (and a reversed-operands flag), so the feature map is read as the IFM.
"""

from __future__ import annotations

from dataclasses import replace

from npuplan.ir.lowered import BlockType, NpuOp


def swaps_operands(op: NpuOp) -> bool:
    """Whether only IFM2 can be ``op``'s primary (streamed) input: IFM is a constant or a scalar,
    IFM2 a feature map of the output's shape. A fixed-point decomposition's steps (a softmax's) keep
    their order: Vela reads their constants as given, the IFM a constant feature map if need be."""
    if op.block_type is not BlockType.ELEMENTWISE or op.ifm2 is None or op.ifm2_shape is None:
        return False
    if op.fixed_point is not None:
        return False
    ifm_can_swap = op.ifm.is_constant or not op.ifm.shape
    return not op.ifm2.is_constant and bool(op.ifm2.shape) and tuple(op.ifm2.shape) == tuple(op.ofm.shape) and (
        ifm_can_swap)


def primary_input_first(op: NpuOp) -> NpuOp:
    """``op`` with IFM and IFM2 swapped (and marked reversed) when only IFM2 can be the primary input."""
    if not swaps_operands(op):
        return op
    assert op.ifm2 is not None and op.ifm2_shape is not None
    return replace(op, ifm=op.ifm2, ifm_shape=op.ifm2_shape, ifm2=op.ifm, ifm2_shape=op.ifm_shape,
                   reversed_operands=not op.reversed_operands)
