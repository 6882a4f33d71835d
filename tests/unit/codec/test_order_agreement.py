"""The two views of the encoder's order agree: ``codec.brick_order`` builds it (gather indices, what
the encoder and the simulator use) and ``codec.weight_order`` counts its padding without building it
(what the cost model asks, for speed). Any geometry where the counts and the built order part is a
stream the planner prices at one size and the emitter writes at another."""

from __future__ import annotations

import collections

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from npuplan.codec.brick_order import BrickGeometry, brick_indices
from npuplan.codec.weight_order import EncodingOrder, VolumeGeometry, stream_padding


def _zero_runs(zero: np.ndarray) -> collections.Counter[int]:
    edges = np.diff(np.concatenate(([0], zero.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return collections.Counter((ends - starts).tolist())


@st.composite
def geometries(draw: st.DrawFn) -> tuple[VolumeGeometry, int, EncodingOrder]:
    depthwise = draw(st.booleans())
    ifm_bits = draw(st.sampled_from([8, 16]))
    dilation_x, dilation_y = draw(st.sampled_from([1, 2])), draw(st.sampled_from([1, 2]))
    ofm_ublock = draw(st.sampled_from([4, 8]))
    geom = VolumeGeometry(
        kernel_height=draw(st.integers(1, 10)), kernel_width=draw(st.integers(1, 10)),
        ifm_depth=1 if depthwise else draw(st.integers(1, 70)), depthwise=depthwise, ifm_bits=ifm_bits,
        dilation_x=dilation_x, dilation_y=dilation_y, ofm_ublock_depth=ofm_ublock, ifm_ublock_depth=8)
    order = EncodingOrder(draw(st.integers(1, 48)), part_kernel=draw(st.booleans()))
    return geom, draw(st.integers(1, 40)), order


@settings(max_examples=150, deadline=None)
@given(geometries())
def test_counted_padding_matches_the_built_order(case: tuple[VolumeGeometry, int, EncodingOrder]) -> None:
    geom, ofm_depth, order = case
    part_kernel = order.part_kernel and not geom.depthwise
    shape = (ofm_depth, geom.kernel_height, geom.kernel_width, 1 if geom.depthwise else geom.ifm_depth)
    built = brick_indices(BrickGeometry(
        shape, geom.ofm_ublock_depth, geom.ifm_ublock_depth, order.block_depth, ifm_bits=geom.ifm_bits,
        dilation_xy=(geom.dilation_x, geom.dilation_y), depthwise=geom.depthwise, part_kernel_first=part_kernel))
    zero = built == int(np.prod(shape))
    counted = stream_padding(geom, ofm_depth, order)
    assert (counted.values, counted.real_values) == (built.size, int((~zero).sum()))
    runs = _zero_runs(zero)
    assert dict(zip(counted.run_lengths, counted.run_counts)) == dict(runs)
    trailing = int(np.argmin(zero[::-1])) if (~zero).any() else int(zero.size)
    assert counted.final_run == trailing
