"""Recognise Keras' UpSampling2D (nearest) exported as a chain of reshapes and tiles through 5-D
tensors (RESHAPE/EXPAND_DIMS, TILE or BROADCAST_TO, ... back to 4-D) and replace it with one
RESIZE_NEAREST_NEIGHBOR, which the NPU runs as nearest x2 upscaling steps.

Vela's legacy core leaves such a chain on the CPU (its tensors are 5-D); its default core runs it
as memory copies. The resize it becomes runs as x2 resampling steps for factors 2, 4 or 8 equal in
height and width, else as copies (``tile_copies``); whether the chain really is a nearest upscale is checked by
running it on an index tensor, not by matching the exporter's exact pattern.
"""

from __future__ import annotations

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
from npuplan.ir.types import DataType
from npuplan.lowering.resize import resize_reason

Removed = tuple[tuple[str, str], ...]
_CHAIN_TYPES = frozenset({"RESHAPE", "EXPAND_DIMS", "TILE", "BROADCAST_TO"})
_MAX_CHAIN_OPS = 8
_MAX_SIMULATED_ELEMENTS = 1 << 22


def _step(op: Op, values: np.ndarray) -> np.ndarray | None:
    """``op`` applied to ``values`` (None when its operands are not constant as needed)."""
    out_shape = tuple(op.outputs[0].shape)
    if op.type in ("RESHAPE", "EXPAND_DIMS"):
        return values.reshape(out_shape) if values.size == int(np.prod(out_shape)) else None
    arg = op.inputs[1] if len(op.inputs) > 1 else None
    if arg is None or arg.data is None:
        return None
    if op.type == "TILE":
        tiled = np.tile(values, [int(m) for m in arg.data.reshape(-1)])
        return tiled if tiled.shape == out_shape else None
    try:
        return np.broadcast_to(values, out_shape)
    except ValueError:
        return None


def _chain_from(graph: Graph, first: Op) -> list[Op] | None:
    """The longest chain of reshape/tile ops from ``first`` that ends on a 4-D tensor and passes
    through a 5-D one, every inner tensor read by the next op alone."""
    consumers, chain = graph.consumers(), [first]
    while len(chain) <= _MAX_CHAIN_OPS:
        out = chain[-1].outputs[0]
        if len(out.shape) == 4 and any(len(o.outputs[0].shape) == 5 for o in chain):
            return chain
        following = consumers.get(out, [])
        if out in graph.outputs or len(following) != 1 or following[0].type not in _CHAIN_TYPES:
            return None
        if following[0].inputs[0] is not out:
            return None
        chain.append(following[0])
    return None


def nearest_factors(chain: list[Op]) -> tuple[int, int] | None:
    """(height, width) factors when ``chain`` maps a 4-D tensor to its nearest-neighbour upscale."""
    src, dst = chain[0].inputs[0], chain[-1].outputs[0]
    if src is None or len(src.shape) != 4 or src.shape[0] != 1 or dst.shape[0] != 1 or src.shape[3] != dst.shape[3]:
        return None
    (_, h, w, c), (_, oh, ow, _) = src.shape, dst.shape
    if oh % h or ow % w or dst.elements > _MAX_SIMULATED_ELEMENTS:
        return None
    index = np.arange(h * w * c, dtype=np.int64).reshape(1, h, w, c)
    values = index
    for op in chain:
        stepped = _step(op, values)
        if stepped is None:
            return None
        values = stepped
    fh, fw = oh // h, ow // w
    expected = np.repeat(np.repeat(index, fh, axis=1), fw, axis=2)
    return (fh, fw) if np.array_equal(values, expected) else None


def _resize_op(chain: list[Op], factors: tuple[int, int]) -> Op:
    src, dst = chain[0].inputs[0], chain[-1].outputs[0]
    assert src is not None
    size_data = np.array(dst.shape[1:3], dtype=np.int32)
    size_data.flags.writeable = False
    size = Tensor(f"{dst.name}_size", (2,), DataType.INT32, None, size_data)
    options = frozen_options({"align_corners": False, "half_pixel_centers": False,
                              "upsampling_factors": factors})
    return Op("RESIZE_NEAREST_NEIGHBOR", (src, size), (dst,), options, chain[0].index)


def fold_upsampling_chains(graph: Graph) -> tuple[Graph, Removed]:
    """Replace each nearest-upscale reshape/tile chain with one RESIZE_NEAREST_NEIGHBOR that the
    NPU supports; return the graph and the ops removed (all but the last, which becomes the resize)."""
    removed: list[tuple[str, str]] = []
    for first in [o for o in graph.ops if o.type in ("RESHAPE", "EXPAND_DIMS")]:
        if first not in graph.ops or first.inputs[0] is None or len(first.inputs[0].shape) != 4:
            continue
        chain = _chain_from(graph, first)
        factors = None if chain is None else nearest_factors(chain)
        if chain is None or factors is None:
            continue
        resize = _resize_op(chain, factors)
        if resize_reason(resize) is not None:
            continue
        gone = set(map(id, chain))
        position = next(k for k, o in enumerate(graph.ops) if o is chain[-1])
        ops = [o for o in graph.ops[:position] if id(o) not in gone] + [resize]
        ops += [o for o in graph.ops[position + 1:] if id(o) not in gone]
        graph = Graph(graph.name, tuple(ops), graph.inputs, graph.outputs)
        removed += [(o.name, f"{o.type} of an UpSampling2D chain, run as a nearest-neighbour resize "
                     f"x{factors[0]}") for o in chain[:-1]]
    return graph, tuple(removed)
