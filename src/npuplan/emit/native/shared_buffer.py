"""The shared buffer (SHRAM) of one operation: which block configs fit, and the registers that lay
it out (IFM_IB_END, AB_START, IFM2_IB_START, ACC_FORMAT).

The facts (IFM and accumulator blocks, bank granules, the Conv1D clamp on 2-high micro-blocks)
are the planner's own (``npuplan.hw.block_config``); this module only reads an API operation into
a ``BlockQuery`` and caches the answers on plain tuples.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, NamedTuple

from npuplan.emit.native.view import DTYPE_BITS, accumulator_of, kernel_of, scalar_of, uses_lut
from npuplan.hw.accelerator import Accelerator, Block
from npuplan.hw.block_config import BlockConfig, BlockQuery, KernelGeometry, try_block_config
from npuplan.hw.shram import AccType
from npuplan.ir.lowered import BlockType, Resampling
from npuplan.ir.shape import Shape4D

_BLOCK_TYPES = {"Conv2D": BlockType.CONV, "ConvDepthWise": BlockType.DEPTHWISE, "Pooling": BlockType.POOLING,
                "ElementWise": BlockType.ELEMENTWISE}
# ACC_FORMAT: 0 32-bit integers, 1 40-bit integers, 2 16-bit floats (s5.10)
_ACC_FORMAT = {AccType.ACC32: 0, AccType.ACC40: 1, AccType.ACC16: 2}
_ACC_FORMAT_FORCED = {"Int32": 0, "Int40": 1}  # an operation's accumulator_type other than Default


def block_type(op: Any) -> BlockType:
    """The datapath an operation runs on (``NpuOperationType`` name, REDUCE_SUM pooling apart)."""
    kind = op.op_type.name
    if kind == "Pooling" and op.sub_op_type.name == "REDUCE_SUM":
        return BlockType.REDUCE_SUM
    return _BLOCK_TYPES[kind]


def _shape(fm: Any) -> Shape4D:
    s = fm.shape
    return Shape4D(1, int(s.height), int(s.width), int(s.depth))


def _scaled(fms: list[Any]) -> bool:
    return all(fm.quantization is not None and fm.quantization.scale_f32 is not None for fm in fms)


def block_query(op: Any, *, ifm2: Any, ofm_shape: Shape4D | None = None) -> BlockQuery:
    """What the block checks read of ``op``; ``ifm2``: the second feature map they size (None for
    none or a scalar), ``ofm_shape`` the OFM to check against (default ``op.ofm``'s)."""
    k = kernel_of(op)
    fms = [f for f in (op.ifm, op.ofm, getattr(op, "ifm2", None)) if f is not None]
    act = op.activation
    return BlockQuery(
        block_type=block_type(op),
        ofm=ofm_shape or _shape(op.ofm),
        ifm=_shape(op.ifm),
        ifm2=None if ifm2 is None else _shape(ifm2),
        kernel=KernelGeometry(k[1], k[0], k[3], k[2], k[5], k[4]),
        ifm_bits=DTYPE_BITS[op.ifm.data_type.name],
        uses_scalar=scalar_of(op) is not None,
        lut_banks=2 if act is not None and uses_lut(op) else 0,
        scaled=_scaled(fms),
        resampling=Resampling[op.ifm_upscale.name],
    )


@lru_cache(maxsize=65536)
def fitting_config(query: BlockQuery, accel: Accelerator, block: tuple[int, int, int],
                   part_kernel_first: bool) -> BlockConfig | None:
    """The shared-buffer layout of ``block`` (height, width, depth) for ``query``, None if it does
    not fit or is not a micro-block multiple within the largest block."""
    return try_block_config(query, accel, Block(*block), is_partkernel=part_kernel_first)


class ShramRegisters(NamedTuple):
    """The shared-buffer registers of one operation (banks, and ACC_FORMAT's code)."""

    ib_end: int
    ab_start: int
    ib_start2: int
    acc_format: int


def part_kernel_first(op: Any) -> bool:
    """Whether a convolution traverses its kernel part-kernel first (other ops: depth first)."""
    return op.op_type.name == "Conv2D" and op.block_traversal.name == "PART_KERNEL_FIRST"


class OpFacts(NamedTuple):
    """What the caller has read of an operation already (its kind, traversal, LUT use, kernel)."""

    kind: str
    part_kernel_first: bool
    lut: bool
    kernel: tuple[int, int, int, int, int, int]


def _key(op: Any, ifm2: Any, facts: OpFacts) -> tuple[object, ...]:
    """Everything ``shram_registers`` reads of ``op``, as plain values."""
    i, o, b = op.ifm.shape, op.ofm.shape, op.block_config
    second = getattr(op, "ifm2", None)
    fms = (op.ifm, op.ofm) if second is None else (op.ifm, op.ofm, second)
    return (facts, op.sub_op_type.name if facts.kind == "Pooling" else None,
            i.height, i.width, i.depth, o.height, o.width, o.depth,
            None if ifm2 is None else (ifm2.shape.height, ifm2.shape.width, ifm2.shape.depth),
            op.ifm.data_type.name, b.height, b.width, b.depth, accumulator_of(op), _scaled(list(fms)),
            op.ifm_upscale.name, scalar_of(op) is not None)


_MEMO_SIZE = 1 << 16


def shram_registers(op: Any, accel: Accelerator, ifm2: Any, facts: OpFacts,
                    memo: dict[tuple[object, ...], ShramRegisters]) -> ShramRegisters:
    """The layout registers of ``op`` with its block config; ``AssertionError`` if it does not fit
    (the block config must be one ``find_block_configs`` lists). ``memo``: the answers so far
    (operations alike share them; cleared past ``_MEMO_SIZE``)."""
    key = _key(op, ifm2, facts) + (accel.name,)
    found = memo.get(key)
    if found is not None:
        return found
    b = op.block_config
    block = (int(b.height), int(b.width), int(b.depth))
    config = fitting_config(block_query(op, ifm2=ifm2), accel, block, facts.part_kernel_first)
    if config is None:
        raise AssertionError(f"block_config {block} does not fit the shared buffer")
    forced = accumulator_of(op)
    acc = _ACC_FORMAT_FORCED[forced] if forced in _ACC_FORMAT_FORCED else _ACC_FORMAT[config.acc_type]
    layout = config.layout
    if len(memo) >= _MEMO_SIZE:
        memo.clear()
    memo[key] = found = ShramRegisters(layout.ib_end, layout.ab_start, layout.ib_start2, acc)
    return found
