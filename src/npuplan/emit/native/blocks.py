"""``find_block_configs``: the OFM block configs the hardware accepts for an operation, listed in
the order Vela's ``npu_find_block_configs`` lists them (width, then height, then depth).

One shared-buffer budget per operation (``npuplan.hw.shram.ShramBudget``), the IFM rows of each
block height and columns of each width computed once, then one fit test per block: no per-block
objects.
"""

from __future__ import annotations

from typing import Any

from npuplan.emit.native.hardware import arch_of
from npuplan.emit.native.shared_buffer import block_query, part_kernel_first
from npuplan.hw.accelerator import Block as HwBlock
from npuplan.hw.block_config import acc_type_for, ifm_block_depth, ifm_block_for
from npuplan.hw.shram import ElementwiseUse, ShramBudget
from npuplan.ir.lowered import BlockType

Block = tuple[int, int, int]  # OFM block height, width, depth
_MIN_BLOCK = 2  # the least height and width listed


def _steps(first: int, last: int) -> range:
    """``first``, ``2 * first``... up to the first multiple at or past ``last``."""
    return range(first, last + first, first)


def find_block_configs(operation: Any, accelerator: Any) -> list[Block]:
    """Every (height, width, depth) block that is a micro-block multiple no larger than the OFM
    (rounded up to the micro-block) and the largest block, whose depth is a multiple of the
    16-channel split depth unless it covers the OFM's, and whose IFM and accumulator buffers fit
    the shared buffer. Blocks are at least 2 x 2, as the reference lists them (its test for an
    upscaling IFM compares enums of two kinds, so it always holds)."""
    acc = arch_of(accelerator).accelerator
    ub, cap = acc.ofm_ublock, acc.ofm_block_max
    q = block_query(operation, ifm2=getattr(operation, "ifm2", None))
    ofm = q.ofm
    heights = _steps(max(ub.height, _MIN_BLOCK), min(cap.height, ofm.h))
    widths = _steps(max(ub.width, _MIN_BLOCK), min(cap.width, ofm.w))
    max_d = min(cap.depth, ofm.c)
    # (the steps divide the largest block's sides, so every step is a valid micro-block multiple)
    depths = [d for d in _steps(ub.depth, max_d) if d >= max_d or d % acc.ofm_split_depth == 0]
    ew = ElementwiseUse.NONE
    if q.block_type is BlockType.ELEMENTWISE:
        ew = ElementwiseUse.SCALAR if q.uses_scalar else ElementwiseUse.FULL
    budget = ShramBudget.of(acc, ew, q.ifm_bits, acc_type_for(q.block_type, q.ifm_bits, q.scaled), q.lut_banks)
    ifm = q.ifm2 if q.ifm2 is not None and q.ifm2.elements > q.ifm.elements else q.ifm
    equal_depth = ew is not ElementwiseUse.NONE or q.block_type in (BlockType.POOLING, BlockType.DEPTHWISE)
    ifm_depth = ifm_block_depth(acc, ifm.c, q.ifm_bits, part_kernel_first(operation))
    ifm_pixel = {d: budget.ifm_pixel_bytes(d if equal_depth else ifm_depth) for d in depths}
    acc_pixel = {d: budget.acc_pixel_bytes(d) for d in depths}
    rows = {h: ifm_block_for(HwBlock(h, 1, 1), q.kernel, acc, q.resampling).height for h in heights}
    cols = {w: ifm_block_for(HwBlock(1, w, 1), q.kernel, acc, q.resampling).width for w in widths}
    conv1d = ofm.h == 1 and q.kernel.height == 1 and ub.height == 2  # a 1-high block's accumulators
    fits = budget.fits
    return [(h, w, d) for w in widths for h in heights for d in depths
            if fits(rows[h] * cols[w] * ifm_pixel[d], (min(h, ofm.h) if conv1d else h) * w * acc_pixel[d])]
