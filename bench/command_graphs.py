"""Tiny graphs and hand-built schedules for command-stream tests (no scheduler involved)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from npuplan.api import make_options
from npuplan.hw import build_architecture
from npuplan.hw.memory import Architecture
from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import BlockType, Kernel, LoweredGraph, NpuOp, Padding
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType
from npuplan.schedule.model.geometry import ifm_rows_for, producer_rows_for, rolling_buffer_rows, storage_bytes
from npuplan.schedule.model.types import (
    BufferMode,
    Cascade,
    Schedule,
    ScheduledOp,
    TensorPlacement,
    WeightBuffering,
)


def arch() -> Architecture:
    """The default target (ethos-u55-128, Shared_Sram: weights in flash, arena in SRAM)."""
    return build_architecture(make_options())


def fm(name: str, h: int, w: int, c: int) -> Tensor:
    return Tensor(name, (1, h, w, c), DataType.INT8)


def conv(name: str, ifm: Tensor, cout: int, k: int = 3, stride: int = 1, seed: int = 0) -> NpuOp:
    """A SAME-padded convolution of ``ifm`` to ``cout`` channels."""
    _, h, w, cin = ifm.shape
    oh, ow = -(-h // stride), -(-w // stride)
    pad_h = max((oh - 1) * stride + k - h, 0)
    pad_w = max((ow - 1) * stride + k - w, 0)
    ofm = fm(name, oh, ow, cout)
    rng = np.random.default_rng(seed)
    return NpuOp(
        name=name, tflite_type="CONV_2D", op_type="Conv2DBias", block_type=BlockType.CONV,
        ifm=ifm, ifm_shape=Shape4D.of(ifm.shape), ofm=ofm, ofm_shape=Shape4D.of(ofm.shape),
        weights=rng.integers(-127, 127, size=(cout, k, k, cin), dtype=np.int8),
        bias=np.zeros(cout, dtype=np.int32),
        kernel=Kernel(k, k, stride, stride, padding=Padding(pad_h // 2, pad_w // 2, pad_h - pad_h // 2, pad_w - pad_w // 2)),
    )


def add(name: str, a: Tensor, b: Tensor) -> NpuOp:
    ofm = fm(name, *a.shape[1:])
    return NpuOp(
        name=name, tflite_type="ADD", op_type="Add", block_type=BlockType.ELEMENTWISE,
        ifm=a, ifm_shape=Shape4D.of(a.shape), ofm=ofm, ofm_shape=Shape4D.of(ofm.shape),
        ifm2=b, ifm2_shape=Shape4D.of(b.shape), elementwise="ADD",
    )


def chain(layers: Sequence[tuple[int, int, int]], h: int = 16, w: int = 8, c: int = 8) -> LoweredGraph:
    """Convolutions one after another; ``layers`` holds (out channels, kernel, stride) per conv."""
    x = fm("input", h, w, c)
    ops: list[NpuOp] = []
    cur = x
    for i, (cout, k, stride) in enumerate(layers):
        op = conv(f"conv{i}", cur, cout, k, stride, seed=i)
        ops.append(op)
        cur = op.ofm
    return LoweredGraph("chain", tuple(ops), (x,), (cur,))


def diamond(h: int = 12, w: int = 6, c: int = 8, k_left: int = 3, k_right: int = 1) -> LoweredGraph:
    """input -> stem -> (left, right) -> add -> tail."""
    x = fm("input", h, w, c)
    stem = conv("stem", x, c, 3, 1, seed=1)
    left = conv("left", stem.ofm, c, k_left, 1, seed=2)
    right = conv("right", stem.ofm, c, k_right, 1, seed=3)
    out = add("sum", left.ofm, right.ofm)
    tail = conv("tail", out.ofm, c, 3, 1, seed=4)
    return LoweredGraph("diamond", (stem, left, right, out, tail), (x,), (tail.ofm,))


@dataclass(frozen=True)
class OpChoice:
    """Hand-made decisions for one op."""

    buffering: WeightBuffering = WeightBuffering.NONE
    depth_slice: int = 0
    prebuffer: bool = False


def hand_schedule(
    lowered: LoweredGraph, *, cascades: Sequence[tuple[int, int, int]] = (),
    weights: Mapping[str, OpChoice] | None = None, rolling_rows_delta: int = 0,
) -> Schedule:
    """A schedule with whole feature maps except the given cascades ``(first, last, final rows)``.

    Rolling buffers get the scheduler geometry's rows plus ``rolling_rows_delta``.
    """
    ops = [op for op in lowered.ops if isinstance(op, NpuOp)]
    rows = [op.ofm_shape.h for op in ops]
    cascade_of = [-1] * len(ops)
    placements: dict[str, TensorPlacement] = {}
    for op in ops:
        for t in (op.ifm, op.ifm2, op.ofm):
            if t is not None and not t.is_constant:
                placements[t.name] = TensorPlacement(t.name, arch().fast_area,
                                                     storage_bytes(t.shape4d, 1, "NHWC"))
    found: list[Cascade] = []
    for cid, (first, last, final_rows) in enumerate(cascades):
        rows[last] = final_rows
        for k in range(last, first, -1):
            rows[k - 1] = producer_rows_for(ops[k], rows[k])
        rolling = []
        for k in range(first, last):
            n = rolling_buffer_rows(rows[k], ifm_rows_for(ops[k + 1], rows[k + 1])) + rolling_rows_delta
            t = ops[k].ofm
            size = n * t.shape4d.w * (-(-t.shape4d.c // 16) * 16)
            rolling.append(TensorPlacement(t.name, arch().fast_area, size, "NHCWB16", BufferMode.ROLLING, n))
        for p in rolling:
            placements[p.tensor_name] = p
        for k in range(first, last + 1):
            cascade_of[k] = cid
        found.append(Cascade(cid, tuple(ops[k].name for k in range(first, last + 1)), tuple(rolling)))
    choices = weights or {}
    scheduled = []
    for i, op in enumerate(ops):
        choice = choices.get(op.name, OpChoice())
        stripe = op.ofm_shape.with_h(rows[i])
        scheduled.append(ScheduledOp(
            op=op, block_config=None, ofm_stripe=stripe, ifm_stripe=op.ifm_shape, cascade_id=cascade_of[i],
            weight_buffering=choice.buffering, weight_buffer_bytes=1 if choice.buffering is not WeightBuffering.NONE else 0,
            weight_depth_slice=choice.depth_slice, prebuffered_weight_bytes=1 if choice.prebuffer else 0,
        ))
    return Schedule(tuple(scheduled), MappingProxyType(placements), tuple(found))
