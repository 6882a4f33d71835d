"""Slices, splits and packs as copies at offsets; PRELU, SQUARED_DIFFERENCE and ABS on the NPU."""

from __future__ import annotations

import numpy as np

from npuplan.hw.accelerator import accelerator
from npuplan.ir.lowered import Activation, BlockType, CpuOp
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering import lower
from npuplan.lowering.lower import Form
from npuplan.lowering.memory_ops import convert_mirror_pad, mirror_pad_reason

from ._build import Q, const, fm, graph, model, op

U55_128 = accelerator("ethos-u55-128")
CONVOLUTIONS_0 = frozenset({(0, Form("convolutions"))})


def _i32(name: str, values: object):
    return const(name, values, DataType.INT32, None)


def _lower(ops, inputs, outputs, **options):
    return lower(model(graph(ops, inputs, outputs)), U55_128, **options)


def test_strided_slice_is_one_strided_copy_at_its_offset() -> None:
    x, y = fm("x", (1, 16, 16, 8)), fm("y", (1, 8, 16, 4))
    sl = op("STRIDED_SLICE", [x, _i32("b", [0, 0, 0, 2]), _i32("e", [1, 16, 16, 6]), _i32("s", [1, 2, 1, 1])], [y], 0)
    (npu,) = _lower([sl], [x], [y]).npu_ops
    assert (npu.op_type, npu.name, npu.kernel.stride_y) == ("AvgPool", "y_avgpool", 2)
    assert npu.ifm_read_offset == Shape4D(0, 0, 0, 2) and npu.ifm_shape == Shape4D(1, 15, 16, 4)
    assert npu.ofm_shape == Shape4D(1, 8, 16, 4)


def _copied(npu_ops, source: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray:
    """What the 1x1 pool copies write, stepping the IFM by their kernel strides."""
    out = np.zeros(out_shape, dtype=source.dtype)
    for npu in npu_ops:
        at, box = npu.ifm_read_offset.as_list(), npu.ifm_shape.as_list()
        steps = (1, npu.kernel.stride_y, npu.kernel.stride_x, 1)
        part = source[tuple(slice(a, a + b, s) for a, b, s in zip(at, box, steps))]
        to = npu.ofm_write_offset.as_list() if npu.ofm_write_offset else [0, 0, 0, 0]
        out[tuple(slice(t, t + n) for t, n in zip(to, part.shape))] = part
    return out


def test_a_slice_reading_width_backwards_is_one_copy_per_column() -> None:
    x, y = fm("x", (1, 9, 7, 4)), fm("y", (1, 3, 3, 4))
    masks = dict(begin_mask=0, end_mask=9, shrink_axis_mask=0)  # batch and depth run to their ends
    sl = op("STRIDED_SLICE", [x, _i32("b", [0, 2, -2, 0]), _i32("e", [0, 9, 0, 0]), _i32("s", [1, 3, -2, 1])], [y],
            0, **masks)
    lg = _lower([sl], [x], [y])
    assert not lg.cpu_ops and len(lg.npu_ops) == 3
    data = np.arange(9 * 7 * 4).reshape(1, 9, 7, 4)
    assert np.array_equal(_copied(lg.npu_ops, data, (1, 3, 3, 4)), data[:, 2:9:3, -2:0:-2, :])


def test_a_slice_reading_both_height_and_width_backwards_stays_on_the_cpu() -> None:
    x, y = fm("x", (1, 4, 4, 4)), fm("y", (1, 4, 4, 4))
    sl = op("STRIDED_SLICE", [x, _i32("b", [0, 0, 0, 0]), _i32("e", [0, 0, 0, 0]), _i32("s", [1, -1, -1, 1])], [y],
            0, begin_mask=15, end_mask=15)
    (cpu,) = _lower([sl], [x], [y]).ops
    assert isinstance(cpu, CpuOp) and "backwards" in cpu.reason


def test_a_slice_with_more_begin_values_than_axes_stays_on_the_cpu() -> None:
    x, y = fm("x", (1, 4, 4, 4)), fm("y", (1, 4, 4, 4))
    five = [0, 0, 0, 0, 0]
    sl = op("STRIDED_SLICE", [x, _i32("b", five), _i32("e", [1, 4, 4, 4, 1]), _i32("s", [1] * 5)], [y], 0)
    (cpu,) = _lower([sl], [x], [y]).ops
    assert isinstance(cpu, CpuOp) and "one value per input axis" in cpu.reason


def test_slice_with_channel_stride_stays_on_cpu() -> None:
    x, y = fm("x", (1, 16, 16, 8)), fm("y", (1, 16, 16, 4))
    sl = op("STRIDED_SLICE", [x, _i32("b", [0, 0, 0, 0]), _i32("e", [1, 16, 16, 8]), _i32("s", [1, 1, 1, 2])], [y], 0)
    (cpu,) = _lower([sl], [x], [y]).ops
    assert isinstance(cpu, CpuOp) and "Batch and channel stride" in cpu.reason


def test_split_halves_are_read_where_they_lie_without_copies() -> None:
    x, a, b, y = fm("x", (1, 4, 4, 8)), fm("a", (1, 4, 4, 4)), fm("b", (1, 4, 4, 4)), fm("y", (1, 4, 4, 4))
    ops = [op("SPLIT", [_i32("axis", 3), x], [a, b], 0, num_splits=2), op("ADD", [a, b], [y], 1)]
    (add,) = _lower(ops, [x], [y]).npu_ops
    assert add.ifm is x and add.ifm2 is x
    assert add.ifm_read_offset == Shape4D(0, 0, 0, 0) and add.ifm2_read_offset == Shape4D(0, 0, 0, 4)
    assert add.reads_at_offset and add.ifm_shape == add.ifm2_shape == Shape4D(1, 4, 4, 4)
    kept = _lower(ops, [x], [y, a]).npu_ops  # a network output keeps its copy
    assert [o.op_type for o in kept] == ["AvgPool", "Add"] and kept[1].ifm is a


def test_fully_connected_layers_read_unpacked_rows_where_they_lie() -> None:
    """A recurrent network's time steps: UNPACK of [5, 1, 6] rows, each read by a FULLY_CONNECTED
    (a vector product, as Vela reads it): no copies, each reads its row of the input at its offset."""
    x = fm("x", (5, 1, 6))
    rows = [fm(f"r{t}", (1, 6)) for t in range(5)]
    w = const("w", np.ones((4, 6)))
    outs = [fm(f"y{t}", (1, 4)) for t in range(5)]
    ops = [op("UNPACK", [x], rows, 0, axis=0, num=5)]
    ops += [op("FULLY_CONNECTED", [r, w, None], [y], 1 + t, fused_activation_function="NONE", keep_num_dims=False)
            for t, (r, y) in enumerate(zip(rows, outs))]
    fcs = _lower(ops, [x], outs).npu_ops
    assert [f.block_type for f in fcs] == [BlockType.VECTOR_PRODUCT] * 5
    assert [f.ifm.name for f in fcs] == ["x"] * 5
    assert sorted(f.ifm_read_offset for f in fcs) == [Shape4D(0, t, 0, 0) for t in range(5)]
    copied = lower(model(graph(ops, [x], outs)), U55_128, vector_slice_reads=False).npu_ops  # the planner's other form
    assert [o.op_type for o in copied].count("AvgPool") == 5 and all(o.ifm_read_offset is None for o in copied[5:])


def test_split_reads_consecutive_slices_and_pack_writes_slots() -> None:
    x, a, b = fm("x", (1, 4, 4, 8)), fm("a", (1, 4, 4, 2)), fm("b", (1, 4, 4, 6))
    split = op("SPLIT_V", [x, _i32("sizes", [2, 6]), _i32("axis", 3)], [a, b], 0, num_splits=2)
    first, second = _lower([split], [x], [a, b]).npu_ops
    assert first.ifm_read_offset == Shape4D(0, 0, 0, 0) and first.ifm_shape.c == 2
    assert second.ifm_read_offset == Shape4D(0, 0, 0, 2) and second.ifm_shape.c == 6
    p, q, out = fm("p", (1, 4, 8)), fm("q", (1, 4, 8)), fm("out", (1, 2, 4, 8))
    copies = _lower([op("PACK", [p, q], [out], 0, axis=1, values_count=2)], [p, q], [out]).npu_ops
    assert [c.ofm_write_offset for c in copies] == [Shape4D(0, 0, 0, 0), Shape4D(0, 1, 0, 0)]
    assert all(c.ofm_write_shape == Shape4D(1, 1, 4, 8) for c in copies)


def test_prelu_by_its_alphas() -> None:
    x, y = fm("x", (1, 4, 4, 8)), fm("y", (1, 4, 4, 8))
    aq = Quantization((0.01,), (0,))
    uniform = const("alpha", np.full((1, 1, 8), 20), DataType.INT8, aq)
    (lut,) = _lower([op("PRELU", [x, uniform], [y], 0)], [x], [y]).npu_ops
    assert lut.activation is Activation.LUT and lut.name == "y_lut_lrelu"
    below_one = const("alpha", np.arange(8).reshape(1, 1, 8), DataType.INT8, aq)
    ops = _lower([op("PRELU", [x, below_one], [y], 0)], [x], [y]).npu_ops
    assert [o.op_type for o in ops] == ["Mul", "Maximum"] and ops[-1].ofm is y
    large = const("alpha", np.arange(8).reshape(1, 1, 8) * 30, DataType.INT8, Quantization((0.1,), (0,)))
    ops = _lower([op("PRELU", [x, large], [y], 0)], [x], [y]).npu_ops
    assert [o.op_type for o in ops] == ["Minimum", "Mul", "AvgPool", "Add"]


def test_squared_difference_widens_rescales_subtracts_and_squares() -> None:
    a, b, y = fm("a", (1, 4, 4, 8)), fm("b", (1, 1, 1, 8)), fm("y", (1, 4, 4, 8))
    ops = _lower([op("SQUARED_DIFFERENCE", [a, b], [y], 0)], [a, b], [y]).npu_ops
    assert [o.op_type for o in ops] == ["DepthwiseConv2DBias", "Mul", "DepthwiseConv2DBias", "Mul", "Sub", "Mul", "Mul"]
    assert ops[0].ofm.dtype == DataType.INT32 and ops[-1].ofm is y and ops[-1].name == "y"


def test_abs_is_a_unary_elementwise_op() -> None:
    x, y = fm("x", (1, 4, 4, 8)), fm("y", (1, 4, 4, 8))
    (npu,) = _lower([op("ABS", [x], [y], 0)], [x], [y]).npu_ops
    assert (npu.op_type, npu.block_type, npu.ifm2, npu.elementwise) == ("Abs", BlockType.ELEMENTWISE, None, "ABS")
    assert Q is not None


def test_transpose_of_height_and_width_is_a_pool_over_the_ifm_view() -> None:
    x, y = fm("x", (1, 4, 6, 8)), fm("y", (1, 6, 4, 8))
    (npu,) = _lower([op("TRANSPOSE", [x, _i32("perm", [0, 2, 1, 3])], [y], 0)], [x], [y]).npu_ops
    assert (npu.op_type, npu.name) == ("AvgPool", "y_avgpool")
    assert npu.ifm_shape == npu.ofm_shape == Shape4D(1, 4, 6, 8)
    z = fm("z", (1, 8, 4, 6))  # (H*W) x C -> C x (H*W): one matrix transpose, a pool
    ops = [op("TRANSPOSE", [x, _i32("perm", [0, 3, 1, 2])], [z], 0)]
    (npu,) = _lower(ops, [x], [z]).npu_ops
    assert npu.block_type is BlockType.POOLING and npu.ifm_shape == npu.ofm_shape == Shape4D(1, 24, 8, 1)
    (npu,) = _lower(ops, [x], [z], other_forms=CONVOLUTIONS_0).npu_ops  # its other form: a tile convolution
    assert (npu.block_type, npu.ifm_shape, npu.ofm_shape, npu.ofm) == (
        BlockType.CONV, Shape4D(1, 24, 8, 1), Shape4D(1, 8, 8, 3), z)  # tiles of 3 rows in 3 channels
    assert (npu.kernel.height, npu.kernel.width, npu.kernel.stride_y, npu.kernel.stride_x) == (3, 1, 3, 1)
    assert npu.weights is not None and npu.weights.shape == (3, 3, 1, 1)
    assert [int(npu.weights[o, k, 0, 0]) for o in range(3) for k in range(3)] == [1, 0, 0, 0, 1, 0, 0, 0, 1]
    odd = fm("odd", (1, 7, 5, 1))  # 7 rows group in no tile: the pool
    t = fm("t", (1, 5, 7, 1))
    (npu,) = _lower([op("TRANSPOSE", [odd, _i32("perm", [0, 2, 1, 3])], [t], 0)], [odd], [t],
                    other_forms=CONVOLUTIONS_0).npu_ops
    assert npu.block_type is BlockType.POOLING and npu.ifm_shape == npu.ofm_shape == Shape4D(1, 7, 5, 1)


def test_transposes_of_three_axes_run_in_two_steps_and_a_channel_shuffle_in_place_of_its_reshapes() -> None:
    x, y = fm("x", (1, 8, 12, 16)), fm("y", (1, 16, 12, 8))  # H <-> C: the matrix 8 x 192, then swap 12, 16
    first, second = _lower([op("TRANSPOSE", [x, _i32("perm", [0, 3, 2, 1])], [y], 0)], [x], [y]).npu_ops
    assert (first.ifm, first.ifm_shape, first.ofm.shape) == (x, Shape4D(1, 8, 192, 1), (192, 8))
    assert (second.ifm, second.ifm_shape, second.ofm) == (first.ofm, Shape4D(1, 12, 16, 8), y)
    # ShuffleNet: (1, 6, 6, 12) -> (1, 6, 6, 2, 6) -> swap the last two -> (1, 6, 6, 12)
    x, grouped, shuffled, y = fm("x", (1, 6, 6, 12)), fm("g", (1, 6, 6, 2, 6)), fm("s", (1, 6, 6, 6, 2)), \
        fm("y", (1, 6, 6, 12))
    lg = _lower([op("RESHAPE", [x, _i32("s1", [1, 6, 6, 2, 6])], [grouped], 0),
                 op("TRANSPOSE", [grouped, _i32("perm", [0, 1, 2, 4, 3])], [shuffled], 1),
                 op("RESHAPE", [shuffled, _i32("s2", [1, 6, 6, 12])], [y], 2)], [x], [y])
    assert not lg.cpu_ops and [o.ifm_shape for o in lg.npu_ops] == [Shape4D(1, 36, 2, 6), Shape4D(1, 2, 216, 1)]
    assert lg.npu_ops[-1].ofm_shape == Shape4D(1, 2, 216, 1)  # two pools; the other form, one 1x1 convolution
    (permute,) = _lower([op("RESHAPE", [x, _i32("s1", [1, 6, 6, 2, 6])], [grouped], 0),
                         op("TRANSPOSE", [grouped, _i32("perm", [0, 1, 2, 4, 3])], [shuffled], 1),
                         op("RESHAPE", [shuffled, _i32("s2", [1, 6, 6, 12])], [y], 2)], [x], [y],
                        other_forms=frozenset({(1, Form('convolutions'))})).npu_ops
    assert (permute.block_type, permute.ifm, permute.ofm, permute.ifm_shape, permute.writes_transposed) == (
        BlockType.CONV, x, y, Shape4D(1, 6, 6, 12), False)
    assert permute.weights is not None and permute.weights.shape == (12, 1, 1, 12)
    # output channel o = (c, g) of the 6 x 2 shuffled pixel reads input channel (g, c) = 6 * g + c
    assert [int(np.argmax(permute.weights[o, 0, 0])) for o in range(12)] == [0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11]
    assert lg.npu_ops[0].ifm is x and lg.npu_ops[-1].ofm is y
    four, out = fm("f", (2, 3, 4, 5)), fm("o", (5, 4, 3, 2))  # four axes that do not merge: three steps
    lg = _lower([op("TRANSPOSE", [four, _i32("perm", [3, 2, 1, 0])], [out], 0)], [four], [out])
    assert not lg.cpu_ops and len(lg.npu_ops) == 3 and lg.npu_ops[-1].ofm is out
    five, out = fm("f", (1, 2, 3, 4, 5)), fm("o", (1, 3, 5, 2, 4))  # a 5-D map read and written: the CPU
    (cpu,) = _lower([op("TRANSPOSE", [five, _i32("perm", [0, 2, 4, 1, 3])], [out], 0)], [five], [out]).ops
    assert isinstance(cpu, CpuOp) and "4D" in cpu.reason




def test_a_deployable_plan_runs_a_channel_shuffle_on_the_npu() -> None:
    """Deployably too the shuffle's reshapes fold into its TRANSPOSE (5-D), which runs in two
    steps: a swap of the outer axes (a pool), then the matrix of the groups by the rest
    transposed (in its other form, a matrix step is a tile convolution: the groups, 2, in one
    tile; but the shuffle is one 1x1 convolution permuting each pixel's channels)."""
    x, grouped, shuffled, y = fm("x", (1, 6, 6, 12)), fm("g", (1, 6, 6, 2, 6)), fm("s", (1, 6, 6, 6, 2)), \
        fm("y", (1, 6, 6, 12))
    ops = [op("RESHAPE", [x, _i32("s1", [1, 6, 6, 2, 6])], [grouped], 0),
           op("TRANSPOSE", [grouped, _i32("perm", [0, 1, 2, 4, 3])], [shuffled], 1),
           op("RESHAPE", [shuffled, _i32("s2", [1, 6, 6, 12])], [y], 2)]
    lg = lower(model(graph(ops, [x], [y])), U55_128, deployable=True)
    assert not lg.cpu_ops
    assert [(o.tflite_type, o.block_type) for o in lg.npu_ops] == [("TRANSPOSE", BlockType.POOLING)] * 2
    lg = lower(model(graph(ops, [x], [y])), U55_128, deployable=True, other_forms=frozenset({(1, Form('convolutions'))}))
    assert not lg.cpu_ops and [(o.block_type, o.ofm.name) for o in lg.npu_ops] == [(BlockType.CONV, "y")]
    # the emitter refused it (its index among the refused): left as declared, 5-D, for the CPU (its
    # reshapes to and from 5-D only move bytes: copies in their 4-D views, ``Shape4D.of``)
    lg = lower(model(graph(ops, [x], [y])), U55_128, deployable=True, cpu_ops=frozenset({1}))
    assert [o.tflite_type for o in lg.cpu_ops] == ["TRANSPOSE"]
    assert {o.tflite_type for o in lg.npu_ops} <= {"RESHAPE"}


def test_mirror_pad_copies_the_input_then_reflects_each_band_of_the_output_whole() -> None:
    x, y = fm("x", (1, 4, 5, 8)), fm("y", (1, 6, 9, 8))
    pads = _i32("pads", [[0, 0], [1, 1], [2, 2], [0, 0]])
    ops = _lower([op("MIRROR_PAD", [x, pads], [y], 0, mode=0)], [x], [y]).npu_ops
    main, top, bottom, left, right = ops
    assert main.name.endswith("init_pool") and main.ifm is x and main.ofm_write_offset == Shape4D(0, 1, 2, 0)
    assert all(o.ifm is y and o.ofm is y for o in ops[1:])  # the bands read the output itself
    # one row: a plain copy of the row inside the edge (REFLECT leaves the edge row out)
    assert top.ifm_read_offset == Shape4D(0, 2, 2, 0) and top.ofm_write_offset == Shape4D(0, 0, 2, 0)
    assert top.ofm_step is None and bottom.ifm_read_offset == Shape4D(0, 3, 2, 0)
    # two columns over every row (the corners too), written backwards from the column next to the input
    assert left.ifm_shape == Shape4D(1, 6, 2, 8) and left.ifm_read_offset == Shape4D(0, 0, 3, 0)
    assert left.ofm_write_offset == Shape4D(0, 0, 1, 0) and left.ofm_step == (1, -1)
    assert right.ifm_read_offset == Shape4D(0, 0, 4, 0) and right.ofm_write_offset == Shape4D(0, 0, 8, 0)
    (cpu,) = _lower([op("MIRROR_PAD", [x, _i32("p", [[0, 0], [4, 0], [0, 0], [0, 0]])], [y], 0, mode=0)],
                    [x], [y]).ops
    assert isinstance(cpu, CpuOp) and "must not be larger" in cpu.reason


def test_mirror_pad_through_rows_touches_the_output_with_three_copies() -> None:
    x, y = fm("x", (1, 4, 5, 8)), fm("y", (1, 7, 8, 8))
    mirror = op("MIRROR_PAD", [x, _i32("pads", [[0, 0], [3, 0], [1, 2], [0, 0]])], [y], 0, mode=1)
    main, top, left, right, copy = convert_mirror_pad(mirror, through_rows=True)
    rows = main.ofm
    assert rows is not y and rows.shape == (1, 7, 5, 8) and main.ofm_write_offset == Shape4D(0, 3, 0, 0)
    assert top.ofm is rows and top.ifm_read_offset == Shape4D(0, 3, 0, 0)  # SYMMETRIC: from the edge row
    assert top.ofm_write_offset == Shape4D(0, 2, 0, 0) and top.ofm_step == (-1, 1)
    assert left.ifm is rows and left.ofm is y and left.ofm_step is None  # one column
    assert right.ifm_read_offset == Shape4D(0, 0, 3, 0) and right.ofm_write_offset == Shape4D(0, 0, 7, 0)
    assert copy.ifm is rows and copy.ofm is y and copy.ofm_write_offset == Shape4D(0, 0, 1, 0)
    z = fm("z", (1, 7, 5, 8))
    plain = convert_mirror_pad(op("MIRROR_PAD", [x, _i32("p", [[0, 0], [3, 0], [0, 0], [0, 0]])], [z], 0, mode=1),
                               through_rows=True)
    assert len(plain) == 2 and all(o.ofm is z for o in plain)  # nothing to pad sideways: no intermediate


def test_mirror_pad_of_a_2d_tensor_pads_its_width_and_depth() -> None:
    x, y = fm("x", (5, 8)), fm("y", (9, 8))
    ops = _lower([op("MIRROR_PAD", [x, _i32("pads", [[3, 1], [0, 0]])], [y], 0, mode=1)], [x], [y]).npu_ops
    left = next(o for o in ops if o.name.endswith("pad_left"))  # SYMMETRIC: from the edge column
    assert left.ifm is y and left.ifm_read_offset == Shape4D(0, 0, 3, 0) and left.ofm_write_offset == Shape4D(0, 0, 2, 0)
    assert left.ofm_step == (1, -1) and len(ops) == 3
    z = fm("z", (5, 11))  # its depth too: one copy per reflected channel
    main, *near, far = _lower([op("MIRROR_PAD", [x, _i32("p", [[0, 0], [2, 1]])], [z], 0, mode=0)], [x], [z]).npu_ops
    assert main.ofm_write_offset == Shape4D(0, 0, 0, 2) and len(near) == 2
    assert [(o.ifm_read_offset.c, o.ofm_write_offset.c) for o in near + [far]] == [(3, 1), (4, 0), (8, 10)]
    b, c = fm("b", (2, 3, 5, 8)), fm("c", (4, 3, 5, 8))
    (cpu,) = _lower([op("MIRROR_PAD", [b, _i32("p", [[1, 1], [0, 0], [0, 0], [0, 0]])], [c], 0)], [b], [c]).ops
    assert isinstance(cpu, CpuOp) and "only pad height, width and depth" in cpu.reason
    assert mirror_pad_reason(op("MIRROR_PAD", [x, _i32("n", [[1, -1], [0, 0]])], [x], 0)) == (
        "Padding values must not be negative")


def test_argmax_over_depth_is_shift_maxpool_and_widen() -> None:
    x, y = fm("x", (1, 4, 6, 8)), fm("y", (1, 4, 6), DataType.INT64, None)
    ops = _lower([op("ARG_MAX", [x, _i32("axis", 3)], [y], 0, output_type=4)], [x], [y]).npu_ops
    assert [o.op_type for o in ops] == ["DepthwiseConv2DBias", "MaxPool", "Conv2DBias"]
    shift, pool, halves = ops
    assert shift.weights is not None and int(shift.weights.max()) == 128  # 2**7: a shift by 7 bits
    assert shift.bias is not None and list(shift.bias) == [7, 6, 5, 4, 3, 2, 1, 0]  # the reversed index
    assert pool.ifm_shape == Shape4D(1, 24, 8, 1) and (pool.kernel.height, pool.kernel.width) == (1, 8)
    assert pool.lut is not None and pool.lut.size == 512 and int(pool.lut[0]) & 0xFFFF == 7  # base: depth - 1
    # the int64 indices written as two 32-bit halves: the index and a zero
    assert halves.ofm is y and halves.ofm_shape == Shape4D(1, 4, 6, 2)
    assert halves.weights is not None and halves.weights.reshape(-1).tolist() == [1, 0]
    deep = fm("deep", (1, 4, 6, 200))
    (cpu,) = _lower([op("ARG_MAX", [deep, _i32("axis", 3)], [y], 0)], [deep], [y]).ops
    assert isinstance(cpu, CpuOp) and "no greater than 127" in cpu.reason


def test_argmax_over_more_than_65536_pixels_runs_in_bands_of_whole_rows() -> None:
    x, y = fm("x", (1, 300, 300, 3)), fm("y", (1, 300, 300), DataType.INT32, None)
    ops = _lower([op("ARG_MAX", [x, _i32("axis", 3)], [y], 0, output_type=2)], [x], [y]).npu_ops
    pools = [o for o in ops if o.op_type == "MaxPool"]
    # 65536 // 300 = 218 rows a band: 218 and 82 rows, each read as one column of at most 65536 pixels
    assert [p.ifm_shape for p in pools] == [Shape4D(1, 218 * 300, 3, 1), Shape4D(1, 82 * 300, 3, 1)]
    shifts = [o for o in ops if o.name.endswith(("SHL_7_band0", "SHL_7_band1"))]
    assert [s.ifm_read_offset for s in shifts] == [Shape4D(0, 0, 0, 0), Shape4D(0, 218, 0, 0)]
    widen = [o for o in ops if "cast_to_32bit" in o.name]
    assert [(w.ofm_write_offset, w.ofm_write_shape) for w in widen] == [
        (Shape4D(0, 0, 0, 0), Shape4D(1, 218, 300, 1)), (Shape4D(0, 218, 0, 0), Shape4D(1, 82, 300, 1))]
    copy = ops[-1]  # the bands' int32 map copied into the 3-D OFM, a row of words at a time
    assert copy.op_type == "AvgPool" and copy.ofm is y and copy.ofm_shape == Shape4D(1, 300, 1, 300)


def test_pack_to_5d_flattened_by_a_reshape_is_a_concatenation() -> None:
    """``tf.reshape(tf.stack([a, b], axis=3), (1, 8, 8, 16))``: the 5-D PACK and its RESHAPE merging
    the new axis with the depth are one concatenation along the depth; merging it with the axis
    before (an interleave) is not: the PACK writes its 5-D map in its 4-D view (1 x 64 x 2 x 8),
    each input a column."""
    a, b = fm("a", (1, 8, 8, 8)), fm("b", (1, 8, 8, 8))
    for merged, concat in (((1, 8, 8, 16), True), ((1, 8, 16, 8), False)):
        stacked, out = fm("stacked", (1, 8, 8, 2, 8)), fm("out", merged)
        ops = [op("PACK", [a, b], [stacked], 0, axis=3, values_count=2),
               op("RESHAPE", [stacked, const("shape", list(merged), DataType.INT32, None)], [out], 1)]
        lg = lower(model(graph(ops, [a, b], [out])), U55_128)
        if concat:
            assert not lg.cpu_ops and [o.tflite_type for o in lg.npu_ops] == ["CONCATENATION"] * 2
            assert [o.ofm_write_offset for o in lg.npu_ops] == [Shape4D(0, 0, 0, 0), Shape4D(0, 0, 0, 8)]
        else:
            assert not lg.cpu_ops and [o.tflite_type for o in lg.npu_ops] == ["PACK"] * 2
            assert [o.ofm_write_offset for o in lg.npu_ops] == [Shape4D(0, 0, 0, 0), Shape4D(0, 0, 1, 0)]


def test_a_deployable_transpose_moving_a_unit_batch_into_a_batch_stays_on_the_cpu() -> None:
    """(1, 3, 4, 5) -> (3, 1, 4, 5) moves no data: a RESHAPE in a plan; deployably its copy (the
    output is the network's) would have a batch of 3, which the emitter cannot write, and a
    rewritten operator cannot fall back to the CPU: it stays the TRANSPOSE, on the CPU."""
    x, y = fm("x", (1, 3, 4, 5)), fm("y", (3, 1, 4, 5))
    ops = [op("TRANSPOSE", [x, _i32("perm", [1, 0, 2, 3])], [y], 0)]
    (cpu,) = lower(model(graph(ops, [x], [y])), U55_128, deployable=True).ops
    assert isinstance(cpu, CpuOp) and cpu.tflite_type == "TRANSPOSE"
    assert all(o.tflite_type == "RESHAPE" for o in _lower(ops, [x], [y]).npu_ops)
