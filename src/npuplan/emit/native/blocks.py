"""``find_block_configs``: the OFM block configs the hardware accepts for an operation, listed in
the order Vela's ``npu_find_block_configs`` lists them (width, then height, then depth)."""

from __future__ import annotations

from typing import Any

from npuplan.emit.native.hardware import arch_of
from npuplan.emit.native.shared_buffer import block_query, fitting_config, part_kernel_first

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
    ofm = operation.ofm.shape
    min_h, min_w = max(ub.height, _MIN_BLOCK), max(ub.width, _MIN_BLOCK)
    max_h, max_w = min(cap.height, int(ofm.height)), min(cap.width, int(ofm.width))
    max_d = min(cap.depth, int(ofm.depth))
    query = block_query(operation, ifm2=getattr(operation, "ifm2", None))
    part_kernel = part_kernel_first(operation)
    depths = [d for d in _steps(ub.depth, max_d) if d >= max_d or d % acc.ofm_split_depth == 0]
    out: list[Block] = []
    for w in _steps(min_w, max_w):
        for h in _steps(min_h, max_h):
            for d in depths:
                if fitting_config(query, acc, (h, w, d), part_kernel) is not None:
                    out.append((h, w, d))
    return out
