"""Datapath cycles and element counts of one NPU op (the compute half of the cost model).

Mirrors the structure of Vela 5.2.0's estimate: the OFM is processed in blocks; each block costs
the slower of its DPU (MAC array) cycles and its output-stage cycles, both floored by a command
overhead derived from the block's memory transfers.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from npuplan.cost.query import CostQuery, Operand
from npuplan.cost.tables import ActivationKind, OutputKind, OutputTiming
from npuplan.cost.transfer import block_transfer_cycles
from npuplan.hw.accelerator import Block
from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.lowered import Activation, BlockType, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.units import div_round_up

CONV_LIKE = (  # block types that slide a kernel over the IFM
    BlockType.CONV, BlockType.DEPTHWISE, BlockType.VECTOR_PRODUCT, BlockType.POOLING, BlockType.REDUCE_SUM
)
_DEPTH_REDUCING = (BlockType.CONV, BlockType.VECTOR_PRODUCT, BlockType.REDUCE_SUM)
PER_CHANNEL = (BlockType.DEPTHWISE, BlockType.POOLING)  # each OFM channel reads its own IFM channel
SCALE_BIAS_LATENCY_DIVISOR = 256


def clip_block(shape: Shape4D, block: Block) -> Block:
    """``block`` clipped to ``shape`` (h, w, depth)."""
    return Block(min(shape.h, block.height), min(shape.w, block.width), min(shape.c, block.depth))


def sub_kernel_limit(block_type: BlockType) -> tuple[int, int]:
    """The largest sub-kernel (height, width) the datapath handles in one pass."""
    return (1, 1) if block_type in (BlockType.VECTOR_PRODUCT, BlockType.ELEMENTWISE) else (8, 8)


def sub_kernel_sizes(block_type: BlockType, kernel_h: int, kernel_w: int) -> list[int]:
    """Element counts of the sub-kernels a kernel is decomposed into."""
    lim_h, lim_w = sub_kernel_limit(block_type)
    ys = [min(kernel_h - i * lim_h, lim_h) for i in range(div_round_up(kernel_h, lim_h))]
    xs = [min(kernel_w - i * lim_w, lim_w) for i in range(div_round_up(kernel_w, lim_w))]
    return [x * y for y in ys for x in xs]


def nn_macs(query: CostQuery) -> int:
    """Network MACs as Vela counts them: kernel x (IFM depth unless per-channel) x OFM elements."""
    op = query.op
    if op.block_type not in CONV_LIKE:
        return 0
    depth = 1 if op.block_type in PER_CHANNEL else query.ifm.shape.c
    return op.kernel.elements * depth * query.ofm.shape.elements


def hw_macs(query: CostQuery, ofm_ublock: Block, ifm_ublock_depth: int) -> int:
    """MACs the array performs: OFM rounded to micro-blocks, IFM depth to the IFM micro-block."""
    op = query.op
    if op.block_type not in CONV_LIKE:
        return 0
    o = query.ofm.shape
    rounded = (
        o.n * div_round_up(o.h, ofm_ublock.height) * ofm_ublock.height * div_round_up(o.w, ofm_ublock.width)
        * ofm_ublock.width * div_round_up(o.c, ofm_ublock.depth) * ofm_ublock.depth
    )
    depth = 1 if op.block_type in PER_CHANNEL else div_round_up(query.ifm.shape.c, ifm_ublock_depth) * ifm_ublock_depth
    return op.kernel.elements * depth * rounded


def output_kind(query: CostQuery) -> OutputKind:
    op = query.op
    if op.block_type is BlockType.ELEMENTWISE and query.ifm.bits == 32:
        return OutputKind.ELEMENTWISE_32BIT_BINARY if query.ifm2 is not None else OutputKind.ELEMENTWISE_32BIT_UNARY
    if op.elementwise == "MUL" and query.ofm.bits == 32:
        return OutputKind.MUL_32BIT
    if op.elementwise == "MUL" or (op.block_type in CONV_LIKE and query.block.acc40):
        return OutputKind.ACC40_OR_MUL
    if op.elementwise in ("ADD", "SUB"):
        return OutputKind.ADD_SUB
    if op.pool is PoolKind.MAX:
        return OutputKind.MAX_POOL
    return OutputKind.DEFAULT


def activation_kind(activation: Activation) -> ActivationKind:
    if activation in (Activation.SIGMOID, Activation.TANH, Activation.LUT):
        return ActivationKind.TABLE
    if activation in (Activation.RELU, Activation.RELU6, Activation.RELU_N1_TO_1):
        return ActivationKind.RELU
    return ActivationKind.NONE


def _operand_block_cycles(arch: Architecture, operand: Operand, block: Block, *, is_read: bool) -> float:
    return block_transfer_cycles(
        arch, operand.area, is_read=is_read, fmt=operand.format, element_bits=operand.bits,
        block=block, shape=operand.shape,
    )


def fill_cycles(query: CostQuery, arch: Architecture) -> float:
    """Cycles to bring in one IFM block (the slower IFM of a binary op): the op's pipeline fill."""
    cycles = _operand_block_cycles(arch, query.ifm, query.block.ifm_block, is_read=True)
    if query.ifm2 is not None:
        ifm2 = Operand(query.ifm2.shape, query.ifm2.area, query.ifm2.format, query.ifm.bits)
        cycles = max(cycles, _operand_block_cycles(arch, ifm2, query.block.ifm_block, is_read=True))
    return cycles


def drain_cycles(query: CostQuery, arch: Architecture) -> float:
    """Cycles to write out one OFM block: the op's pipeline drain."""
    return _operand_block_cycles(arch, query.ofm, query.block.ofm_block, is_read=False)


def is_lookup_only(query: CostQuery) -> bool:
    """Whether the op only looks its input up in a table: a 1x1 average pool with a table activation
    (how a standalone sigmoid, tanh or LUT runs)."""
    op = query.op
    return (op.block_type is BlockType.POOLING and op.pool is PoolKind.AVERAGE and op.kernel.elements == 1
            and activation_kind(op.activation) is ActivationKind.TABLE)


def output_cycles_per_element(query: CostQuery, arch: Architecture, timing: OutputTiming) -> float:
    """Output-stage cycles per OFM element (elementwise ops floored by their block transfers)."""
    activation = (timing.lookup_only_cycles if is_lookup_only(query)
                  else timing.activation_cycles_per_element(activation_kind(query.op.activation)))
    per_element = max(timing.output_cycles_per_element(output_kind(query)), activation)
    if query.op.block_type is BlockType.ELEMENTWISE:
        # reading and writing overlap: the slower of the two floors each block's command
        block_elements = query.block.ofm_block.elements
        cmd_cycles = (max(fill_cycles(query, arch), drain_cycles(query, arch)) + per_element * block_elements) / 4
        per_element = max(per_element, cmd_cycles / block_elements)
    return per_element


class _Ublocks(NamedTuple):
    x: int
    y: int
    z: int

    @property
    def xy(self) -> int:
        return self.x * self.y


def _ofm_ublock(query: CostQuery, arch: Architecture) -> Block:
    """The OFM micro-block: single-row outputs of a convolution or vector product (even width,
    one-row kernel) are processed as 1x4 micro-blocks."""
    op, ublock = query.op, arch.accelerator.ofm_ublock
    if (
        ublock.height == 2
        and op.block_type in (BlockType.CONV, BlockType.VECTOR_PRODUCT)
        and query.ofm.shape.h == 1
        and query.ofm.shape.w % 2 == 0
        and op.kernel.height == 1
    ):
        return Block(1, 4, ublock.depth)
    return ublock


def _ublock_count(shape: Block, ublock: Block) -> _Ublocks:
    return _Ublocks(
        div_round_up(shape.width, ublock.width), div_round_up(shape.height, ublock.height), div_round_up(shape.depth, ublock.depth)
    )


def _ofm_ublocks(query: CostQuery, arch: Architecture) -> tuple[_Ublocks, Block, float]:
    """Micro-block counts per OFM block, the (clipped) OFM block, and how many such blocks the OFM
    holds (fractional: the OFM's micro-blocks over a block's)."""
    ublock = _ofm_ublock(query, arch)
    ofm_block = clip_block(query.ofm.shape, query.block.ofm_block)
    counts = _ublock_count(ofm_block, ublock)
    o = query.ofm.shape
    whole = _ublock_count(Block(o.h, o.w, o.c), ublock)
    n_blocks = o.n * whole.x * whole.y * whole.z / (counts.x * counts.y * counts.z)
    return counts, ofm_block, n_blocks


def _sub_kernel_cycles(
    query: CostQuery, n_elems: int, u: _Ublocks, wb_cycles: int, ifm_block_depth: int, is_u55_32: bool
) -> tuple[int, int]:
    """DPU cycles and kernel steps for one sub-kernel of ``n_elems`` elements."""
    op, ifm_bits = query.op, query.ifm.bits
    if op.block_type is BlockType.POOLING:
        cycles = max(4, n_elems) * u.xy * u.z
        if not is_u55_32:
            # Vela 5.2.0's default core: ifm_bits / 2 cycles a step (its legacy core: 1, 2 at 16 bits)
            cycles *= ifm_bits // 2
        return cycles, 1
    if op.block_type is BlockType.DEPTHWISE:
        per_step = 4 * u.xy * (2 if ifm_bits == 16 else 1)
        steps = div_round_up(n_elems, 4)
        return max(wb_cycles, per_step) * steps * u.z, steps
    if op.block_type is BlockType.CONV and query.block.part_kernel:
        steps = div_round_up(n_elems, 2 if ifm_bits == 16 else 4)
        return max(wb_cycles, 4 * u.xy) * steps * div_round_up(ifm_block_depth, 8) * u.z, steps
    return max(wb_cycles, 4 * u.xy) * n_elems * u.z, n_elems


def _delay_cycles(u: _Ublocks, steps: int, acc40: bool, timing: OutputTiming) -> int:
    """Accumulator stalls when an OFM block holds a single micro-block in x and y."""
    delay = timing.acc40_delay_cycles if acc40 else timing.delay_cycles
    cycles = 0
    if u.x == 1 and u.y == 1:
        if u.z == 1:
            cycles = delay * steps
        elif steps > 1:
            cycles = delay * (steps - 1) * u.z
    if timing.single_ublock_z_delay_only and (u.x == 1 or u.y == 1) and u.z > 1 and acc40:
        cycles += delay * u.z
    return cycles


def conv_cycles(query: CostQuery, arch: Architecture, timing: OutputTiming, *, const_area: MemArea | None) -> int:
    """Datapath cycles of a convolution-like op (conv, depthwise, vector product, pooling, reduce)."""
    op, accel = query.op, arch.accelerator
    ifm_block = clip_block(query.ifm.shape, query.block.ifm_block)
    u, ofm_block, n_blocks = _ofm_ublocks(query, arch)
    wb_cycles = 32 * accel.ofm_ublock.depth // 8
    is_u55_32 = timing.single_ublock_z_delay_only
    dpu_cycles: float = 0
    for n_elems in sub_kernel_sizes(op.block_type, op.kernel.height, op.kernel.width):
        cycles, steps = _sub_kernel_cycles(query, n_elems, u, wb_cycles, ifm_block.depth, is_u55_32)
        delay = _delay_cycles(u, steps, query.block.acc40, timing)
        if op.block_type is BlockType.CONV and query.block.part_kernel:
            delay *= div_round_up(ifm_block.depth, 8)
        dpu_cycles += cycles + delay
    if op.block_type in _DEPTH_REDUCING:
        dpu_cycles *= div_round_up(query.ifm.shape.c, ifm_block.depth)
    dpu_cycles /= accel.cores

    out_cycles: float = math.ceil(output_cycles_per_element(query, arch, timing) * ofm_block.elements)
    if const_area is not None:
        latency = arch.timing(const_area).read_latency_cycles
        out_cycles = max(out_cycles, 10 * ofm_block.depth * latency / SCALE_BIAS_LATENCY_DIVISOR)
    return _pipelined_cycles(query, arch, dpu_cycles, out_cycles, n_blocks)


def _pipelined_cycles(query: CostQuery, arch: Architecture, dpu_cycles: float, out_cycles: float,
                      n_blocks: float) -> int:
    """An op's cycles from one block's MAC and output-stage cycles: the slower stage runs
    ``n_blocks`` times, each floored by the command issue (a quarter of both stages and of the
    imbalance between a block's input and output transfers), plus the pipeline's fill (the first
    IFM block) and drain (the last OFM block)."""
    fill, drain = int(fill_cycles(query, arch)), int(drain_cycles(query, arch))
    imbalance = abs(drain - fill) if n_blocks > 1 else 0
    cmd_cycles = (imbalance + out_cycles + dpu_cycles) / 4
    dpu_cycles = max(dpu_cycles, cmd_cycles)
    out_cycles = max(out_cycles, cmd_cycles)
    if dpu_cycles > out_cycles:
        body = int(dpu_cycles * n_blocks) + out_cycles
    else:
        body = out_cycles * n_blocks + dpu_cycles
    return int(int(body) + fill + drain)


def rounded_shape_elements(shape: Shape4D, fmt: str) -> int:
    """Elements of ``shape`` with depth rounded to the storage quantum of ``fmt`` (16 for NHCWB16)."""
    depth = div_round_up(shape.c, 16) * 16 if fmt == "NHCWB16" else shape.c
    return shape.n * shape.h * shape.w * depth


def rounded_elements(operand: Operand) -> int:
    """Elements of ``operand.shape`` with depth rounded to the format's storage quantum."""
    return rounded_shape_elements(operand.shape, operand.format)


def elementwise_cycles(query: CostQuery, arch: Architecture, timing: OutputTiming) -> int:
    return math.ceil(output_cycles_per_element(query, arch, timing) * rounded_elements(query.ofm))


def op_cycles(query: CostQuery, arch: Architecture, timing: OutputTiming, *, const_area: MemArea | None) -> int:
    """Datapath cycles of ``query`` (0 for anything that is not an NPU compute op)."""
    if query.op.block_type in CONV_LIKE:
        return conv_cycles(query, arch, timing, const_area=const_area)
    if query.op.block_type is BlockType.ELEMENTWISE:
        return elementwise_cycles(query, arch, timing)
    return 0
