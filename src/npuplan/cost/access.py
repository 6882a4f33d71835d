"""Element access counts of one op: what the NPU reads and writes, before element sizes."""

from __future__ import annotations

from dataclasses import dataclass

from npuplan.cost.cycles import CONV_LIKE, PER_CHANNEL, clip_block, rounded_elements, rounded_shape_elements, sub_kernel_limit
from npuplan.cost.query import CostQuery
from npuplan.ir.lowered import BlockType
from npuplan.ir.shape import Shape4D
from npuplan.units import div_round_up


@dataclass(frozen=True, slots=True, eq=False)
class ElementAccess:
    """Elements read and written: IFM (refetches included), IFM2, OFM, scale/bias entries, and how
    often the weights and scales are read (once per OFM block position in height and width)."""

    ifm_elements: int = 0
    ifm2_elements: int = 0
    ofm_elements: int = 0
    scale_entries: int = 0
    weight_refetches: int = 0


def _conv_access(query: CostQuery) -> ElementAccess:
    op, ifm, ofm = query.op, query.ifm, query.ofm
    ifm_block = clip_block(ifm.shape, query.block.ifm_block)
    ofm_block = clip_block(ofm.shape, query.block.ofm_block)
    o = ofm.shape
    blocks_hw = o.n * div_round_up(o.h, ofm_block.height) * div_round_up(o.w, ofm_block.width)
    per_channel = op.block_type in PER_CHANNEL
    if per_channel:
        block_count, block_depth = blocks_hw, ifm.shape.c
    else:
        block_count, block_depth = blocks_hw * div_round_up(o.c, ofm_block.depth), ofm_block.depth
    lim_h, lim_w = sub_kernel_limit(op.block_type)
    sub_kernels = div_round_up(op.kernel.width, lim_h) * div_round_up(op.kernel.height, lim_w)
    block_hw = ifm_block.height * ifm_block.width
    ifm_fetch = block_hw * (rounded_shape_elements(ifm.shape.with_hw(1, 1), ifm.format) // ifm.shape.n)
    has_weights = op.block_type not in (BlockType.POOLING, BlockType.REDUCE_SUM)
    return ElementAccess(
        ifm_elements=ifm_fetch * sub_kernels * block_count,
        ofm_elements=rounded_elements(ofm),
        scale_entries=o.c if has_weights else 0,
        weight_refetches=blocks_hw if has_weights else 0,
    )


def _elementwise_access(query: CostQuery) -> ElementAccess:
    ifm, ifm2, ofm = query.ifm, query.ifm2, query.ofm
    ofm_as_ifm = rounded_shape_elements(ofm.shape, ifm.format)
    ifm_elements = ifm2_elements = 0
    if ifm.shape.elements == 1:
        # a scalar IFM is an immediate unless wider than 8 bits; Vela 5.2.0's default core counts
        # a wider scalar IFM's own read and then no IFM2 read (its legacy core counts both)
        if ifm.bits > 8:
            ifm_elements = rounded_shape_elements(ifm.shape, ifm.format)
        elif ifm2 is not None:
            ifm2_elements = ofm_as_ifm
    else:
        ifm_elements = ofm_as_ifm
        if ifm2 is not None:
            if ifm2.shape.elements > 1:
                ifm2_elements = ofm_as_ifm
            elif ifm2.bits > 8:
                ifm2_elements = rounded_shape_elements(ifm2.shape, ifm.format)
    return ElementAccess(ifm_elements, ifm2_elements, rounded_elements(ofm))


def element_access(query: CostQuery) -> ElementAccess:
    """Elements the op reads and writes (Vela's access counting, depth rounded per format)."""
    if query.op.block_type in CONV_LIKE:
        return _conv_access(query)
    if query.op.block_type is BlockType.ELEMENTWISE:
        return _elementwise_access(query)
    return ElementAccess(ofm_elements=rounded_elements(query.ofm))
