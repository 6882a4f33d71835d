"""Random small networks for scheduler properties: conv chains, residual blocks and concats."""

from __future__ import annotations

from hypothesis import strategies as st

from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import BlockType, LoweredGraph, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D

from bench.command_graphs import add, conv, fm

CONV = st.tuples(st.just("conv"), st.sampled_from([8, 24, 48]), st.sampled_from([1, 3]), st.sampled_from([1, 1, 2]))
RESIDUAL = st.tuples(st.just("residual"), st.sampled_from([8, 16]), st.sampled_from([1, 3]), st.just(1))
CONCAT = st.tuples(st.just("concat"), st.sampled_from([8, 16]), st.sampled_from([8, 16]), st.just(1))
BLOCKS = st.lists(st.one_of(CONV, CONV, CONV, RESIDUAL, CONCAT), min_size=1, max_size=7)


def copy_into(name: str, ifm: Tensor, ofm: Tensor, depth_offset: int) -> NpuOp:
    """A concatenation input: a 1x1 average pool writing ``ifm`` at ``depth_offset`` of ``ofm``."""
    return NpuOp(
        name=name, tflite_type="CONCATENATION", op_type="AvgPool", block_type=BlockType.POOLING,
        ifm=ifm, ifm_shape=Shape4D.of(ifm.shape), ofm=ofm, ofm_shape=Shape4D.of(ifm.shape), pool=PoolKind.AVERAGE,
        ofm_write_offset=Shape4D(0, 0, 0, depth_offset),
    )


def network(blocks: list[tuple[str, int, int, int]], h: int, w: int, c: int = 4) -> LoweredGraph:
    """Blocks one after another. ``("conv", cout, k, stride)``; ``("residual", _, k, _)``: a conv
    of kernel ``k`` then a 1x1 conv, added to the block input; ``("concat", a, b, _)``: a 1x1 conv
    to ``a`` and a 3x3 conv to ``b`` channels, concatenated in depth."""
    x = fm("input", h, w, c)
    ops: list[NpuOp] = []
    cur = x
    for i, (kind, p, q, r) in enumerate(blocks):
        if kind == "conv":
            ops.append(conv(f"b{i}", cur, p, q, r, seed=i))
        elif kind == "residual":
            channels = cur.shape[3]
            inner = conv(f"b{i}_a", cur, p, q, 1, seed=i)
            back = conv(f"b{i}_b", inner.ofm, channels, 1, 1, seed=i + 100)
            ops += [inner, back, add(f"b{i}", cur, back.ofm)]
        else:
            left = conv(f"b{i}_l", cur, p, 1, 1, seed=i)
            right = conv(f"b{i}_r", cur, q, 3, 1, seed=i + 100)
            out = fm(f"b{i}", cur.shape[1], cur.shape[2], p + q)
            ops += [left, right, copy_into(f"b{i}_cl", left.ofm, out, 0), copy_into(f"b{i}_cr", right.ofm, out, p)]
        cur = ops[-1].ofm
    return LoweredGraph("random", tuple(ops), (x,), (cur,))


networks = st.builds(network, BLOCKS, st.integers(8, 40), st.integers(2, 16))
