"""Element access counts of one op: what the NPU reads and writes, before element sizes."""

from __future__ import annotations


from npuplan.cost.cycles import CONV_LIKE, PER_CHANNEL, clip_block, rounded_elements, rounded_shape_elements, sub_kernel_limit
from npuplan.cost.query import CostQuery
from npuplan.hw.accelerator import Block
from npuplan.ir.lowered import BlockType
from npuplan.ir.shape import Shape4D
from npuplan.records import record
from npuplan.units import div_round_up


@record(eq=False)
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
    blocks_hw = _blocks_hw(o, ofm_block)
    per_channel = op.block_type in PER_CHANNEL
    if per_channel:
        block_count, block_depth = blocks_hw, ifm.shape.c
    else:
        block_count, block_depth = blocks_hw * div_round_up(o.c, ofm_block.depth), ofm_block.depth
    lim_h, lim_w = sub_kernel_limit(op.block_type)
    sub_kernels = div_round_up(op.kernel.width, lim_h) * div_round_up(op.kernel.height, lim_w)
    block_hw = ifm_block.height * ifm_block.width
    ifm_fetch = block_hw * (rounded_shape_elements(ifm.shape.with_hw(1, 1), ifm.format) // ifm.shape.n)
    refetches, scale_entries = _weight_reads(op.block_type, o, blocks_hw)
    return ElementAccess(
        ifm_elements=ifm_fetch * sub_kernels * block_count,
        ofm_elements=rounded_elements(ofm),
        scale_entries=scale_entries,
        weight_refetches=refetches,
    )


def _blocks_hw(ofm: Shape4D, ofm_block: Block) -> int:
    """OFM block positions in height and width (``ofm_block`` clipped to ``ofm``)."""
    return ofm.n * div_round_up(ofm.h, ofm_block.height) * div_round_up(ofm.w, ofm_block.width)


def _weight_reads(block_type: BlockType, ofm: Shape4D, blocks_hw: int) -> tuple[int, int]:
    """(weight refetches, scale entries) of an op computing ``ofm`` in ``blocks_hw`` block positions."""
    if block_type not in CONV_LIKE or block_type in (BlockType.POOLING, BlockType.REDUCE_SUM):
        return 0, 0
    return blocks_hw, ofm.c


def weight_reads(block_type: BlockType, ofm: Shape4D, ofm_block: Block) -> tuple[int, int]:
    """How often an op computing the OFM box ``ofm`` with ``ofm_block`` reads its weights and
    scales: (weight stream refetches, scale entries read each time), as ``element_access`` counts
    them (``ElementAccess.weight_refetches``, ``scale_entries``) without the rest."""
    return _weight_reads(block_type, ofm, _blocks_hw(ofm, clip_block(ofm, ofm_block)))


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
