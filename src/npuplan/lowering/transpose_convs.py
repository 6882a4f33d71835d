"""The convolution forms of a TRANSPOSE's steps (``lowering.transposes``), for 8-bit maps: where the
1x1 pool moves one element a pixel, a convolution with unit weights moves a pixel's worth.

- A matrix ``X x Y`` (a step one channel deep, moving the innermost axis) by a tile convolution
  (``tile_conv``): a ``t x 1`` kernel of stride ``t`` down the rows puts each tile's column in
  ``t`` channels, written with the height and width strides swapped as the pool's OFM. The pool
  computes one channel of each 8-deep OFM micro-block, this ``t``.
- A permutation inside each pixel (the first merged axis stays first: a channel shuffle
  ``(A, g, C/g) -> (A, C/g, g)``) by one 1x1 convolution whose weights are the permutation matrix
  of the pixel's ``D`` values (``channel_permutation``), written plainly: ``D`` MACs an element
  where the two steps (a swap and a matrix) walk the map twice.

Both are exact: weight 1 at the source of each output channel, zero bias, scale 1 (the TRANSPOSE's
input and output share their quantization).
"""

from __future__ import annotations

import math

import numpy as np

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import BlockType, Kernel, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization

TILE_ROWS = (3, 2)  # the tile heights tried, largest first (a kernel stride above 3 is not run)
MAX_PERMUTED_DEPTH = 128  # the widest pixel permuted by one convolution (its D x D weights)
_UNIT = Quantization((1.0,), (0,))
_BYTES = (DataType.INT8, DataType.UINT8)


def tile_rows(view: Shape4D, dtype: DataType) -> int | None:
    """The rows per tile of the convolution transposing the matrix ``view`` (``X x Y x 1``), or None
    when it is no such matrix, its rows group in no tile, or its elements are wider than 8 bits."""
    if view.c != 1 or view.n != 1 or dtype not in _BYTES:
        return None
    return next((t for t in TILE_ROWS if view.h % t == 0), None)


def _conv(op: Op, name: str, src: Tensor, view: Shape4D, out: Tensor, ofm_view: Shape4D, weights: np.ndarray,
          kernel: Kernel, *, transposed: bool) -> NpuOp:
    """A convolution of a TRANSPOSE with the unit ``weights`` (OHWI) and zero bias."""
    weights.flags.writeable = False
    bias = np.zeros(weights.shape[0], dtype=np.int32)
    bias.flags.writeable = False
    return NpuOp(name=name, tflite_type=op.type, op_type="Conv2DBias", block_type=BlockType.CONV, ifm=src,
                 ifm_shape=view, ofm=out, ofm_shape=ofm_view, weights=weights,
                 weight_tensor=Tensor(f"{name}_weights", weights.shape, DataType.INT8, _UNIT, weights), bias=bias,
                 kernel=kernel, source_index=op.index, transposed_write=transposed)


def tile_conv(op: Op, name: str, src: Tensor, view: Shape4D, out: Tensor, tile: int) -> NpuOp:
    """The matrix ``X x Y`` (``view``, one channel deep) transposed by a ``tile x 1`` convolution of
    stride ``tile`` down its rows: OFM pixel ``(i1, j)`` holds ``M[tile*i1 + i0][j]`` in channel
    ``i0``, and written with the height and width strides swapped it lands at ``j*X + tile*i1 + i0``,
    the transposed matrix."""
    weights = np.eye(tile, dtype=np.int8).reshape(tile, tile, 1, 1)  # output i0 reads kernel row i0
    return _conv(op, name, src, view, out, Shape4D(1, view.h // tile, view.w, tile), weights,
                 Kernel(tile, 1, tile, 1), transposed=True)


def permutes_channels(dims: tuple[int, ...], perm: tuple[int, ...], dtype: DataType) -> bool:
    """Whether the merged permutation ``perm`` of ``dims`` is one inside each pixel that one
    convolution runs (``channel_permutation``)."""
    return (len(dims) >= 3 and perm[0] == 0 and math.prod(dims[1:]) <= MAX_PERMUTED_DEPTH and dtype in _BYTES)


def _map(pixels: int) -> tuple[int, int]:
    """``pixels`` as a map of about square height and width (height the largest divisor up to the root)."""
    height = max(d for d in range(1, math.isqrt(pixels) + 1) if pixels % d == 0)
    return height, pixels // height


def channel_permutation(op: Op, name: str, src: Tensor, out: Tensor, dims: tuple[int, ...],
                        perm: tuple[int, ...]) -> NpuOp:
    """The merged permutation ``perm`` of ``dims`` keeping the first axis (``permutes_channels``) as
    a 1x1 convolution over the map of ``dims[0]`` pixels of ``D = prod(dims[1:])`` values: output
    channel ``o`` reads input channel ``source[o]``, the inner axes' permutation."""
    depth = math.prod(dims[1:])
    source = np.arange(depth).reshape(dims[1:]).transpose([p - 1 for p in perm[1:]]).reshape(-1)
    weights = np.zeros((depth, 1, 1, depth), dtype=np.int8)
    weights[np.arange(depth), 0, 0, source] = 1
    view = Shape4D(1, *_map(dims[0]), depth)
    return _conv(op, name, src, view, out, view, weights, Kernel(), transposed=False)
