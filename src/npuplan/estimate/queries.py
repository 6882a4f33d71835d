"""One decoded NPU operation as the cost model's query: the registers say what the hardware does
(kind, shapes, block, kernel, precision, accumulator, activation, where each operand lives), and
the regions' memory areas come from the memory mode.

The cost model asks for an ``NpuOp``; the one built here holds only what it reads (block type,
kernel, activation, pooling or elementwise kind, and a stand-in weight array of the original
weight count, read only for its size).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from npuplan.cost import BlockChoice, CostQuery, Operand, WeightAccess
from npuplan.hw.accelerator import SCALE_BIAS_BYTES, Accelerator, Block
from npuplan.hw.block_config import KernelGeometry, ifm_block_depth, ifm_block_for
from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import Activation, BlockType, Kernel, NpuOp, PoolKind, Resampling
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType
from npuplan.regstream.events import INTERNAL_REGION, FeatureMapAccess, NpuEvent, Range

_POOLS = {0: (BlockType.POOLING, PoolKind.MAX), 1: (BlockType.POOLING, PoolKind.AVERAGE),
          2: (BlockType.REDUCE_SUM, PoolKind.NONE)}
_ELEMENTWISE = {0: "MUL", 1: "ADD", 2: "SUB", 3: "MINIMUM", 4: "MAXIMUM", 5: "LEAKY_RELU", 6: "ABS", 7: "CLZ",
                8: "SHR", 9: "SHL"}
_RESAMPLING = {0: Resampling.NONE, 1: Resampling.NEAREST, 2: Resampling.TRANSPOSE}
_DTYPES = {1: DataType.INT8, 2: DataType.INT16, 4: DataType.INT32}
_ACC40 = 1  # ACC_FORMAT: 40-bit accumulators
_TANH, _SIGMOID, _TABLE_FIRST = 3, 4, 16  # ACTIVATION's function field


def region_areas(arch: Architecture) -> dict[int, MemArea | None]:
    """The memory area of each region of a stream (the TensorFlow Lite Micro kernel's regions):
    0 the flash (constants), 1 the scratch (arena), 2 the fast scratch (the cache; the arena's
    bytes when the memory mode has no cache of its own), 3 and up the operator's inputs and
    outputs (in the arena); the NPU's internal memory (a LUT's destination) is ``None``."""
    areas: dict[int, MemArea | None] = {0: arch.const_area, 1: arch.arena_area, 2: arch.fast_area,
                                        INTERNAL_REGION: None}
    return areas | {region: arch.arena_area for region in range(3, 8)}


def _block_type(event: NpuEvent) -> tuple[BlockType, PoolKind, str | None]:
    if event.kind == "Conv2D":
        return BlockType.CONV, PoolKind.NONE, None
    if event.kind == "DepthWise":
        return BlockType.DEPTHWISE, PoolKind.NONE, None
    if event.kind == "Pooling":
        block_type, pool = _POOLS.get(event.mode, (BlockType.POOLING, PoolKind.AVERAGE))
        return block_type, pool, None
    return BlockType.ELEMENTWISE, PoolKind.NONE, _ELEMENTWISE.get(event.mode)


def _signed16(value: int) -> int:
    return value - 0x10000 if value & 0x8000 else value


def _activation(event: NpuEvent) -> Activation:
    """What the output stage's activation costs: a table, a clamp tighter than the OFM's type
    (a ReLU), or none (a ReLU whose clamp the type already makes is none to the hardware).
    ``output_stage`` holds ACTIVATION, _MIN, _MAX after the three scales of a pooling or
    elementwise operation, first for a convolution."""
    first = 3 if event.kind in ("Pooling", "ElementWise") else 0
    function, low, high = event.output_stage[first:first + 3]
    function &= 0x1F
    if function in (_TANH, _SIGMOID) or function >= _TABLE_FIRST:
        return Activation.LUT
    bits = 8 * event.ofm.element_bytes
    if bits >= 16:
        return Activation.NONE if _signed16(low) == -(1 << 15) and _signed16(high) == (1 << 15) - 1 else Activation.RELU
    if (_signed16(low), _signed16(high)) in ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1), (0, (1 << bits) - 1)):
        return Activation.NONE
    return Activation.RELU


def _tensor(name: str, fm: FeatureMapAccess) -> Tensor:
    return Tensor(name, (1, fm.height, fm.width, fm.depth), _DTYPES.get(fm.element_bytes, DataType.INT8))


def _weight_count(block_type: BlockType, kernel: Kernel, ifm_depth: int, ofm_depth: int) -> int:
    """The operation's original weights: kernel x IFM depth x OFM depth (depthwise: one per channel)."""
    if block_type is BlockType.DEPTHWISE:
        return kernel.elements * ofm_depth
    if block_type is BlockType.CONV:
        return kernel.elements * ifm_depth * ofm_depth
    return 0


def _kernel(event: NpuEvent) -> Kernel:
    height, width, stride_y, stride_x = event.kernel
    dilation_y, dilation_x = event.dilation
    return Kernel((height - 1) // dilation_y + 1, (width - 1) // dilation_x + 1, stride_y, stride_x,
                  dilation_y, dilation_x)


def npu_op(event: NpuEvent, name: str) -> NpuOp:
    """The ``NpuOp`` the cost model reads for ``event`` (see the module's note)."""
    block_type, pool, elementwise = _block_type(event)
    kernel = _kernel(event)
    count = _weight_count(block_type, kernel, event.ifm.depth, event.ofm.depth)
    ifm, ofm = event.ifm, event.ofm
    return NpuOp(
        name=name, tflite_type=event.kind, op_type=event.kind, block_type=block_type,
        ifm=_tensor(f"{name}:ifm", ifm), ifm_shape=Shape4D(1, ifm.height, ifm.width, ifm.depth),
        ofm=_tensor(name, ofm), ofm_shape=Shape4D(1, ofm.height, ofm.width, ofm.depth),
        ifm2=None if event.ifm2 is None else _tensor(f"{name}:ifm2", event.ifm2),
        ifm2_shape=None if event.ifm2 is None else Shape4D(1, event.ifm2.height, event.ifm2.width, event.ifm2.depth),
        weights=np.broadcast_to(np.int8(0), (count,)) if count else None,
        kernel=kernel, activation=_activation(event), pool=pool, elementwise=elementwise,
        resampling=_RESAMPLING.get(event.upscale, Resampling.NONE),
    )


def _block(event: NpuEvent, op: NpuOp, accel: Accelerator) -> BlockChoice:
    """The OFM block the registers set and the IFM block that feeds it."""
    ofm_block = Block(*event.block)
    ifm_block = ifm_block_for(ofm_block, KernelGeometry.of(op.kernel), accel, op.resampling)
    part_kernel = event.part_kernel_first and op.block_type is BlockType.CONV
    if op.block_type in (BlockType.CONV, BlockType.VECTOR_PRODUCT, BlockType.REDUCE_SUM):
        depth = ifm_block_depth(accel, event.ifm.depth, 8 * event.ifm.element_bytes, part_kernel)
        ifm_block = Block(ifm_block.height, ifm_block.width, depth)
    return BlockChoice(ofm_block, ifm_block, acc40=event.acc_format == _ACC40, part_kernel=part_kernel)


def _operand(fm: FeatureMapAccess, areas: Mapping[int, MemArea | None], fallback: MemArea) -> Operand:
    area = areas.get(fm.region) or fallback
    return Operand(Shape4D(1, fm.height, fm.width, fm.depth), area, "NHCWB16" if fm.nhcwb16 else "NHWC",
                   8 * fm.element_bytes)


def _length(*ranges: Range | None) -> int:
    return sum(r.length for r in ranges if r is not None)


def _weights(event: NpuEvent, areas: Mapping[int, MemArea | None], fallback: MemArea) -> WeightAccess | None:
    """The weights and scales the NPU reads in place from their region's area (a DMA that brought
    them there is timed on its own)."""
    if event.weights is None or event.kind not in ("Conv2D", "DepthWise"):
        return None
    area = areas.get(event.weights.region) or fallback
    stream = _length(event.weights, event.weights1, event.scales, event.scales1)
    return WeightAccess(stream_bytes=stream, source_area=area, scale_bytes_per_channel=SCALE_BIAS_BYTES)


def cost_query(event: NpuEvent, name: str, arch: Architecture) -> CostQuery:
    """The cost model's query for one decoded NPU operation of a stream on ``arch``."""
    areas = region_areas(arch)
    op = npu_op(event, name)
    fallback = arch.arena_area
    return CostQuery(
        op=op,
        block=_block(event, op, arch.accelerator),
        ifm=_operand(event.ifm, areas, fallback),
        ofm=_operand(event.ofm, areas, fallback),
        ifm2=None if event.ifm2 is None else _operand(event.ifm2, areas, fallback),
        weights=_weights(event, areas, arch.const_area),
    )
