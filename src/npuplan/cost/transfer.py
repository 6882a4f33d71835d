"""Memory-transfer timing: burst efficiency of feature-map accesses and DMA copies."""

from __future__ import annotations

from npuplan.hw.accelerator import Block
from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.shape import Shape4D
from npuplan.cost.query import TensorFormat


def _burst_bits(
    *, is_read: bool, fmt: TensorFormat, element_bits: int, block: Block, shape: Shape4D, cores: int,
    step_x: int = 1,
) -> int:
    """Length in bits of the bursts the NPU issues for one block of ``shape`` (every ``step_x``-th
    column of the map: a strided view's block rows are never one run)."""
    if fmt == "NHCWB16":
        # Vela compares the brick-column stride (bytes) with the block depth
        if element_bits * 16 * shape.w == block.depth * 8:
            return element_bits * block.depth * block.width
        if is_read:
            return 16 * element_bits * block.width
        return 16 * element_bits * block.width * cores
    # a block's rows are one run when the tensor's x stride (bytes) equals the block depth (Vela 5.2.0's
    # default core; its legacy core compared the element size instead, so never saw a run)
    depth_contiguous = shape.c * element_bits // 8 == block.depth and step_x == 1
    if is_read:
        return element_bits * block.depth * (block.width if depth_contiguous else 1)
    if block.depth <= 16 and depth_contiguous:
        return element_bits * block.depth * block.width
    return min(64 * 8, 16 * element_bits * cores, block.depth * element_bits)


def burst_scaled_bytes(
    arch: Architecture,
    area: MemArea,
    *,
    is_read: bool,
    fmt: TensorFormat,
    element_bits: int,
    block: Block,
    shape: Shape4D,
    raw_bytes: float,
    step_x: int = 1,
) -> float:
    """``raw_bytes`` inflated by how far the NPU's bursts fall short of ``area``'s burst length
    (``step_x``: see ``_burst_bits``)."""
    bits = _burst_bits(
        is_read=is_read, fmt=fmt, element_bits=element_bits, block=block, shape=shape,
        cores=arch.accelerator.cores, step_x=step_x,
    )
    mem_burst_bytes = arch.timing(area).burst_length_bytes
    burst_bytes = min(mem_burst_bytes, bits // 8)
    if burst_bytes <= 0:
        return raw_bytes * mem_burst_bytes
    return raw_bytes * (mem_burst_bytes / burst_bytes)


def block_transfer_cycles(
    arch: Architecture,
    area: MemArea,
    *,
    is_read: bool,
    fmt: TensorFormat,
    element_bits: int,
    block: Block,
    shape: Shape4D,
) -> float:
    """Cycles to move one block (clipped to ``shape``) of ``element_bits`` elements: latency plus its
    burst-scaled bytes over the bandwidth (whole cycles, as Vela's default core counts them)."""
    elements = min(shape.h, block.height) * min(shape.w, block.width) * min(shape.c, block.depth)
    timing = arch.timing(area)
    latency = timing.read_latency_cycles if is_read else timing.write_latency_cycles
    scaled = burst_scaled_bytes(
        arch, area, is_read=is_read, fmt=fmt, element_bits=element_bits, block=block, shape=shape,
        raw_bytes=elements * element_bits // 8,
    )
    return float(latency + int(scaled / arch.bytes_per_cycle(area)))


def dma_cycles(arch: Architecture, src: MemArea, dst: MemArea | None, size_bytes: int) -> float:
    """Cycles of a DMA copy of ``size_bytes``: the slower of reading and writing, each with its
    memory's latency.

    ``dst`` of ``None`` is the NPU's internal shared buffer (bandwidth of one AXI port, no latency).
    """
    src_bw = arch.bytes_per_cycle(src)
    read_cycles = (size_bytes // src_bw) + arch.timing(src).read_latency_cycles
    dst_bw = arch.bytes_per_cycle(dst) if dst is not None else float(arch.accelerator.axi_port_bytes)
    write_cycles = size_bytes // dst_bw + (arch.timing(dst).write_latency_cycles if dst is not None else 0)
    return float(max(read_cycles, write_cycles))
