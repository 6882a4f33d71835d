"""A REDUCE_MAX over depth alone as a tree of elementwise MAXIMUMs of channel halves.

``convert_reduce_max`` runs a depth reduction as one max pool over the map seen as
``(1, H*W, C, 1)`` with a ``1 x C`` kernel: an OFM one element deep and wide, so each micro-block
computes one useful element of its depth and width (a 20x20x6 map: 9,857 cycles on U55-128).
The same maximum is ``ceil(log2 C)`` elementwise MAXIMUMs, each reading two channel boxes of the
map before it where they lie (``ifm_read_offset``): with ``k = ceil(C / 2)`` channels,
``max(x[..., :k], x[..., C-k:])`` (the boxes overlap by one channel when ``C`` is odd, which a
maximum ignores). Bit-exact when the IFM and OFM share type and quantization (a MAXIMUM of one
quantization only selects). Which form is faster depends on the map and the accelerator: the
planner prices both lowerings (``api.PreparedModel.variants``).
"""

from __future__ import annotations

from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import Activation, BlockType, LoweredOp, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType

_TYPES = frozenset({DataType.INT8, DataType.UINT8, DataType.INT16})


def is_depth_reduction(op: LoweredOp) -> bool:
    """Whether ``op`` is a REDUCE_MAX's pool over depth alone that a MAXIMUM tree computes exactly."""
    if not isinstance(op, NpuOp) or op.tflite_type != "REDUCE_MAX" or op.pool is not PoolKind.MAX:
        return False
    ifm, ofm = op.ifm.shape4d, op.ofm.shape4d
    view = op.ifm_shape
    return (op.ifm_read_offset is None and op.ofm_write_offset is None and ifm.n == 1 and ifm.c > 1
            and view == Shape4D(1, ifm.h * ifm.w, ifm.c, 1) and op.kernel.height == 1 and op.kernel.width == ifm.c
            and ofm.elements == ifm.h * ifm.w and op.ifm.dtype == op.ofm.dtype and op.ifm.dtype in _TYPES
            and op.ifm.quant == op.ofm.quant and op.activation is Activation.NONE)


def maximum_tree(pool: NpuOp) -> tuple[NpuOp, ...]:
    """The MAXIMUMs computing ``pool`` (``is_depth_reduction``), the last writing its OFM."""
    source = pool.ifm
    h, w, depth = source.shape4d.h, source.shape4d.w, source.shape4d.c
    ops: list[NpuOp] = []
    current = source
    step = 0
    while depth > 1:
        half = (depth + 1) // 2
        last = half == 1
        out = pool.ofm if last else Tensor(f"{pool.name}_max{step}", (1, h, w, half), source.dtype, source.quant)
        box = Shape4D(1, h, w, half)
        ops.append(NpuOp(
            name=pool.name if last else out.name, tflite_type=pool.tflite_type, op_type="Maximum",
            block_type=BlockType.ELEMENTWISE, ifm=current, ifm_shape=box, ifm2=current, ifm2_shape=box,
            ofm=out, ofm_shape=box, elementwise="MAXIMUM", source_index=pool.source_index,
            ifm_read_offset=Shape4D(0, 0, 0, 0), ifm2_read_offset=Shape4D(0, 0, 0, depth - half),
        ))
        current, depth, step = out, half, step + 1
    return tuple(ops)


def reduce_max_trees(ops: tuple[LoweredOp, ...]) -> tuple[LoweredOp, ...]:
    """``ops`` with each depth-only REDUCE_MAX pool replaced by its MAXIMUM tree."""
    out: list[LoweredOp] = []
    for op in ops:
        out.extend(maximum_tree(op) if is_depth_reduction(op) else (op,))  # type: ignore[arg-type]
    return tuple(out)


def has_depth_reduction(ops: tuple[LoweredOp, ...]) -> bool:
    """Whether any op of ``ops`` is one ``reduce_max_trees`` rewrites."""
    return any(is_depth_reduction(op) for op in ops)

