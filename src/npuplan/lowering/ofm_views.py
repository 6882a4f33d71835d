"""Kernel ops write their OFM in the shape their kernel makes, whatever shape the tensor declares;
elementwise ops may run over a 16-deep view of their maps (``flat_elementwise_views``).

When lowering drops a SQUEEZE or RESHAPE after a convolution or pool, the op writes the reshaped
tensor itself (same bytes). Its OFM view must stay the shape its kernel walks: a 1x1 convolution
over 16x1 rows writes 16x1, not the 1x16 the squeezed tensor's 4D shape reads as. Costing blocks,
stripes and the emitted feature maps all go by that view (Vela keeps the op's own OFM shape too).
"""

from __future__ import annotations

import math
from dataclasses import replace

from npuplan.ir.lowered import BlockType, LoweredOp, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.units import BRICK_DEPTH

_KERNEL_BLOCKS = frozenset({BlockType.CONV, BlockType.DEPTHWISE, BlockType.POOLING})


def kernel_output(op: NpuOp) -> Shape4D:
    """The OFM shape ``op``'s kernel makes from its IFM view (padding, stride, dilation, upscaling)."""
    k, pad = op.kernel, op.kernel.padding
    h = (op.ifm_shape.h * op.upscale + pad.top + pad.bottom - k.dilated_height) // k.stride_y + 1
    w = (op.ifm_shape.w * op.upscale + pad.left + pad.right - k.dilated_width) // k.stride_x + 1
    return Shape4D(op.ofm_shape.n, h, w, op.ofm_shape.c)


def kernel_ofm_views(ops: tuple[LoweredOp, ...]) -> tuple[LoweredOp, ...]:
    """``ops`` with each kernel op writing whole rows of its own OFM whose declared 4D shape holds
    the same elements in other rows and columns given its kernel's output shape as OFM view."""
    return tuple(_own_view(op) if isinstance(op, NpuOp) else op for op in ops)


def _own_view(op: NpuOp) -> NpuOp:
    if op.block_type not in _KERNEL_BLOCKS or op.ofm_write_offset is not None or op.ofm_write_shape is not None:
        return op
    if op.ofm_shape != op.ofm.shape4d:
        return op  # already a view of its own
    made = kernel_output(op)
    if made == op.ofm_shape or made.h < 1 or made.w < 1 or made.elements != op.ofm_shape.elements:
        return op
    return replace(op, ofm_shape=made)


_FLAT_TYPES = frozenset({"ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM"})


def flat_elementwise_views(ops: tuple[LoweredOp, ...], *, pools: bool = True) -> tuple[LoweredOp, ...]:
    """``ops`` with each elementwise op over same-shaped maps of a depth that fills no whole brick,
    and each pool copying element for element (a QUANTIZE's rescale, a standalone table lookup run
    as a pool: ``NpuOp.pointwise``), run over a view of the same bytes 16 deep (as Vela's default
    core runs them): every element meets its partners at the same byte whatever the shape, and a
    16-deep view fills the hardware's blocks. The maps are then seen in another shape, so they stay
    linear NHWC (``formats``) and the op is not cascaded (``is_cascadable``). Without ``pools``
    only the elementwise ops. A map that must be bricks (an edge-padded IFM,
    ``formats.brick_format_tensors``) is not seen in another shape: its writer stays as it is."""
    bricked = {op.ifm.name for op in ops if isinstance(op, NpuOp) and op.edge_padding}
    return tuple(_flat(op) if isinstance(op, NpuOp) and flattens(op) and (pools or op.ifm2 is not None)
                 and op.ofm.name not in bricked else op for op in ops)


def flattens(op: NpuOp) -> bool:
    """Whether ``flat_elementwise_views`` runs ``op`` over a 16-deep view."""
    shape = op.ofm_shape
    if not (_flat_elementwise(op) or _copying_pool(op)):
        return False
    if op.ofm_write_offset is not None or op.ofm_write_shape is not None or op.ofm_frame is not None or op.reads_at_offset:
        return False
    views = ((op.ifm, op.ifm_shape), (op.ifm2, op.ifm2_shape), (op.ofm, op.ofm_shape)) if op.ifm2 is not None \
        else ((op.ifm, op.ifm_shape), (op.ofm, op.ofm_shape))
    if any(view != shape or tensor.shape4d != shape for tensor, view in views):
        return False
    return shape.n == 1 and shape.c % BRICK_DEPTH != 0 and flat_depth(shape) is not None


# Maps whose elements hold no whole brick run flat only when their own depth fills at most this
# share of a brick (a 3-deep image: 19%), and then at most this deep: deeper views fill the blocks
# no better and read fewer, longer rows. Flattening a map 7 or 8 deep gains little and can cost
# more than it saves (zoo6 yolo_heads_uint8_64's 252x7 output tables: 58 cycles more).
MAX_FILL_TO_FLATTEN = 0.25
MAX_FLAT_DEPTH = 64


def _brick_fill(depth: int) -> float:
    """The share of the bricks a depth of ``depth`` fills."""
    return depth / (-(-depth // BRICK_DEPTH) * BRICK_DEPTH)


def flat_depth(shape: Shape4D) -> int | None:
    """The depth of the view ``flat_elementwise_views`` runs a map of ``shape`` over: 16 when the
    elements fill whole bricks; otherwise, for a map filling at most a quarter of its bricks, the
    divisor of the elements up to ``MAX_FLAT_DEPTH`` that fills the bricks best (the smaller on a
    tie) when it fills them better; else None (a 45x51x3 image, 6885 = 3^4 * 5 * 17 elements:
    15 deep, 94% of each brick, not 19%)."""
    if shape.elements % BRICK_DEPTH == 0:
        return BRICK_DEPTH
    if _brick_fill(shape.c) > MAX_FILL_TO_FLATTEN:
        return None
    divisors = [d for d in range(1, MAX_FLAT_DEPTH + 1) if shape.elements % d == 0]
    best = max(divisors, key=lambda d: (_brick_fill(d), -d))
    return best if _brick_fill(best) > _brick_fill(shape.c) else None


def _flat_elementwise(op: NpuOp) -> bool:
    """A quantized binary elementwise op of two feature maps, in their order."""
    return (op.block_type is BlockType.ELEMENTWISE and op.elementwise in _FLAT_TYPES and op.ifm2 is not None
            and not op.ifm2.is_constant and op.fixed_point is None and not op.reversed_operands)


def _copying_pool(op: NpuOp) -> bool:
    """A pool copying element for element whose output stage is the same for every channel."""
    scales = [q for q in (op.ifm.quant, op.ofm.quant) if q is not None]
    return (op.block_type is BlockType.POOLING and op.pointwise and op.ifm2 is None and op.fixed_point is None
            and all(len(q.scale) <= 1 and len(q.zero_point) <= 1 for q in scales))


def _flat(op: NpuOp) -> NpuOp:
    depth = flat_depth(op.ofm_shape)
    assert depth is not None
    cells = op.ofm_shape.elements // depth
    h = max(d for d in range(1, math.isqrt(cells) + 1) if cells % d == 0)
    view = Shape4D(1, h, cells // h, depth)
    return replace(op, ifm_shape=view, ifm2_shape=view if op.ifm2 is not None else None, ofm_shape=view)
