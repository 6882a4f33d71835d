"""Per-slice weight-stream sizes for arbitrary OFM depth cuts (what the scheduler's buffers hold)."""

from __future__ import annotations

import numpy as np

from npuplan.cost import encoded_weight_size, weight_slice_sizes
from npuplan.hw import build_architecture
from npuplan.options import PlanOptions

from tests.unit.schedule.chains import conv, fm

ACCEL = build_architecture(PlanOptions(accelerator_config="ethos-u55-128",
                                       system_config="Ethos_U55_High_End_Embedded",
                                       memory_mode="Shared_Sram")).accelerator


def test_slices_match_the_even_encoding_and_the_whole_stream() -> None:
    op = conv("c", fm("x", 8, 8, 16), fm("y", 8, 8, 64))
    whole = encoded_weight_size(op, ACCEL)
    assert weight_slice_sizes(op, ACCEL, None, (0, 64)) == (whole.stream_bytes,)
    even = encoded_weight_size(op, ACCEL, depth_step=16)
    per_slice = [sum(s.total_bytes for s in even.slices if s.depth_offset == d) for d in (0, 16, 32, 48)]
    assert weight_slice_sizes(op, ACCEL, None, (0, 16, 32, 48, 64)) == tuple(per_slice)
    uneven = weight_slice_sizes(op, ACCEL, None, (0, 16, 64))
    assert len(uneven) == 2 and all(size % 16 == 0 for size in uneven)


def test_constant_weights_compress_below_their_raw_size() -> None:
    op = conv("c", fm("x", 4, 4, 64), fm("y", 4, 4, 64), k=1)
    flat = type(op)(**{**{f: getattr(op, f) for f in op.__dataclass_fields__},
                       "weights": np.zeros_like(op.weights)})
    (size,) = weight_slice_sizes(flat, ACCEL, None, (0, 64))
    scales = 10 * 64  # 10 bytes of scale and bias per OFM channel (16-aligned per core here)
    assert size - scales < flat.weights.size // 4  # a run of zeros codes at about a bit each


def test_a_plan_s_encodings_histogram_each_op_once_and_size_as_the_encoder() -> None:
    from npuplan.cost.weights import WeightEncodings

    op = conv("c", fm("x", 8, 8, 16), fm("y", 8, 8, 64))
    encodings = WeightEncodings(ACCEL)
    assert encodings.histograms(op) is encodings.histograms(op)
    for step in (None, 16, 24):
        assert encodings.stream_size(op, depth_step=step) == encoded_weight_size(op, ACCEL, depth_step=step)
    assert encodings.slice_bytes(op, 16, 64) == weight_slice_sizes(op, ACCEL, None, (0, 16, 64))[1]


def test_the_block_config_orders_the_stream_and_so_its_padding() -> None:
    """A 3-channel 3x3 convolution: depth-first pads each kernel element's 3 IFM channels to 32
    (~10x the weights, mostly zero runs); part-kernel-first to 8 with the elements padded to 12:
    the part-kernel stream is the smaller, and both exceed the unpadded weights' ~1 byte a value."""
    from types import SimpleNamespace

    from npuplan.hw.accelerator import Block

    op = conv("c", fm("x", 8, 8, 3), fm("y", 8, 8, 16))
    depth_first = SimpleNamespace(ofm_block=Block(8, 8, 16), is_partkernel=False)
    part_kernel = SimpleNamespace(ofm_block=Block(8, 8, 16), is_partkernel=True)
    (df,) = weight_slice_sizes(op, ACCEL, depth_first, (0, 16))
    (pk,) = weight_slice_sizes(op, ACCEL, part_kernel, (0, 16))
    assert 16 * 9 * 3 < pk < df


def test_equal_ops_of_two_lowerings_share_their_encodings() -> None:
    # each lowering of a model builds its own ops (and may copy their weights): equal ones encode
    # once; an op whose weights differ, or are read in another order (depthwise), does not share
    from npuplan.cost.weights import WeightEncodings

    op = conv("c", fm("x", 8, 8, 16), fm("y", 8, 8, 64))
    fields = {f: getattr(op, f) for f in op.__dataclass_fields__}
    twin = type(op)(**{**fields, "weights": op.weights.copy()})
    other = type(op)(**{**fields, "weights": np.flip(op.weights, axis=0).copy()})
    encodings = WeightEncodings(ACCEL)
    first = encodings.slice_parts(op, 0, 64)
    assert encodings.slice_parts(twin, 0, 64) is first
    assert encodings.histograms(twin) is encodings.histograms(op)
    assert encodings.histograms(other) is not encodings.histograms(op)
    assert encodings.slice_parts(other, 0, 64) is not first
