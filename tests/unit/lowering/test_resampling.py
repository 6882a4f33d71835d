"""Upscaling lowerings: resizes and transpose convolutions on the NPU's IFM resampling, and the
UpSampling2D export recognised as one resize."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.hw.accelerator import accelerator
from npuplan.ir.lowered import Activation, BlockType, CpuOp, Padding, Resampling
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering import lower
from npuplan.lowering.lower import Form, OtherForms
from npuplan.schedule.model.geometry import ifm_rows_for, producer_rows_for

from ._build import Q, WQ, const, fm, graph, model, op

U55_128 = accelerator("ethos-u55-128")


def _resize(kind: str, ifm_hw: tuple[int, int], ofm_hw: tuple[int, int], *, other_forms: OtherForms = frozenset(),
            vela_forms: bool = False, **options: object):
    x, y = fm("x", (1, *ifm_hw, 8)), fm("y", (1, *ofm_hw, 8))
    size = const("size", list(ofm_hw), DataType.INT32, None)
    return lower(model(graph([op(kind, [x, size], [y], 0, **options)], [x], [y])), U55_128,
                 other_forms=other_forms, vela_forms=vela_forms)


def test_nearest_x2_is_one_upscaling_pool() -> None:
    (npu,) = _resize("RESIZE_NEAREST_NEIGHBOR", (8, 8), (16, 16)).npu_ops
    assert (npu.op_type, npu.block_type, npu.resampling, npu.upscale) == ("AvgPool", BlockType.POOLING,
                                                                           Resampling.NEAREST, 2)
    assert npu.kernel.elements == 1 and npu.ofm_shape == Shape4D(1, 16, 16, 8)


def test_x4_is_a_chain_and_bilinear_averages_the_last_window() -> None:
    first, last = _resize("RESIZE_BILINEAR", (4, 4), (16, 16)).npu_ops
    assert first.ofm_shape == Shape4D(1, 8, 8, 8) and first.kernel.elements == 1 and first.ofm is last.ifm
    assert (last.kernel.height, last.kernel.width) == (4, 4) and last.kernel.padding == Padding(bottom=3, right=3)
    assert last.ofm_shape == Shape4D(1, 16, 16, 8) and last.resampling is Resampling.NEAREST


def test_the_depthwise_form_copies_by_convolutions_of_weights_one() -> None:
    """Each copying x2 step (a 1x1 kernel) is a 1x1 depthwise convolution by 1, scale 1, bias 0;
    a bilinear's averaging last step stays a pool."""
    depthwise = frozenset({(0, Form("depthwise"))})
    (npu,) = _resize("RESIZE_NEAREST_NEIGHBOR", (8, 8), (16, 16), other_forms=depthwise).npu_ops
    assert (npu.op_type, npu.block_type, npu.resampling) == ("DepthwiseConv2DBias", BlockType.DEPTHWISE,
                                                             Resampling.NEAREST)
    assert npu.kernel.elements == 1 and npu.ofm_shape == Shape4D(1, 16, 16, 8)
    assert npu.weights is not None and npu.weights.tolist() == [[[[1] * 8]]] and npu.bias is not None
    assert npu.weight_tensor is not None and npu.weight_tensor.quant == Quantization((1.0,), (0,))
    assert not np.asarray(npu.bias).any()
    first, last = _resize("RESIZE_BILINEAR", (4, 4), (16, 16), other_forms=depthwise).npu_ops
    assert first.block_type is BlockType.DEPTHWISE and last.block_type is BlockType.POOLING
    # a bilinear by 2 has no copying step: its depthwise form is its plain one
    (plain,) = _resize("RESIZE_BILINEAR", (8, 8), (16, 16), other_forms=depthwise).npu_ops
    assert plain.block_type is BlockType.POOLING


def test_resizes_the_npu_does_not_run_give_reasons() -> None:
    cases = [
        ((8, 8), (24, 24), {}, "2x, 4x or 8x"),
        ((8, 8), (16, 16), {"align_corners": True, "half_pixel_centers": True}, "can't be True"),
    ]
    for ifm_hw, ofm_hw, options, fragment in cases:
        (cpu,) = _resize("RESIZE_NEAREST_NEIGHBOR", ifm_hw, ofm_hw, **options).ops
        assert isinstance(cpu, CpuOp) and fragment in cpu.reason
    (cpu,) = _resize("RESIZE_BILINEAR", (4, 4), (16, 16), half_pixel_centers=True).ops
    assert isinstance(cpu, CpuOp) and "half_pixel_centers" in cpu.reason


def test_half_pixel_bilinear_x2_is_a_copy_and_four_phase_depthwise_convolutions() -> None:
    ops = _resize("RESIZE_BILINEAR", (8, 8), (16, 16), half_pixel_centers=True).npu_ops
    assert [o.op_type for o in ops] == ["AvgPool"] + ["DepthwiseConv2DBias"] * 4
    phases = ops[1:]
    assert all(o.ofm_shape == Shape4D(1, 8, 8, 8) and o.ofm.shape == (1, 16, 16, 8) for o in phases)
    assert all(o.weights is not None and int(o.weights.sum()) == 16 * 8 for o in phases)  # each sums to 1 (16ths)
    assert len({o.kernel.padding for o in phases}) == 4


STAGED = frozenset({(0, Form(staged=True))})


def test_half_pixel_bilinear_staged_writes_its_phases_to_an_intermediate_then_copies_it() -> None:
    """The staged form (``staged_writes``): the phases' short strided runs go to an intermediate
    map, one copy writes the output in whole rows."""
    lowered = _resize("RESIZE_BILINEAR", (8, 8), (16, 16), half_pixel_centers=True, other_forms=STAGED)
    ops = lowered.npu_ops
    assert [o.op_type for o in ops] == ["AvgPool"] + ["DepthwiseConv2DBias"] * 4 + ["AvgPool"]
    phases, copy = ops[1:5], ops[5]
    staged = {o.ofm.name for o in phases}
    assert len(staged) == 1 and copy.ifm.name in staged and copy.ifm.shape == copy.ofm.shape == (1, 16, 16, 8)
    assert copy.ofm is lowered.outputs[0] and all(o.ofm_step == (2, 2) for o in phases)
    assert copy.activation is Activation.NONE and copy.kernel.elements == 1 and copy.name == "y_staged_avgpool"


def test_only_a_resize_writing_in_short_runs_has_a_staged_form() -> None:
    """A form the op does not have is its plain one: a resize by nearest-upscaling pools writes
    whole rows, so staging it changes nothing."""
    staged = _resize("RESIZE_NEAREST_NEIGHBOR", (8, 8), (16, 16), other_forms=STAGED).npu_ops
    assert [o.name for o in staged] == [o.name for o in _resize("RESIZE_NEAREST_NEIGHBOR", (8, 8), (16, 16)).npu_ops]
    assert len(_resize("RESIZE_BILINEAR", (8, 8), (16, 16), half_pixel_centers=True, other_forms=STAGED).npu_ops) == 6


def test_the_copy_an_edge_padded_ifm_is_written_by_keeps_its_shape_in_vela_forms() -> None:
    """The IFM of the phases must be bricks (edge padding re-reads aligned tiles): its copy is not
    run over a 16-deep view of the same bytes, as other copying pools of an 8-deep map are."""
    ops = _resize("RESIZE_BILINEAR", (8, 8), (16, 16), half_pixel_centers=True, other_forms=STAGED,
                  vela_forms=True).npu_ops
    assert ops[0].ifm_shape == ops[0].ofm_shape == Shape4D(1, 8, 8, 8)
    assert ops[-1].ifm_shape == Shape4D(1, 8, 16, 16)  # the staged copy to the output does run flat


def _tconv(stride: int, padding: str, ofm_hw: tuple[int, int], k: int = 3):
    x, y = fm("x", (1, 6, 6, 4)), fm("y", (1, *ofm_hw, 8))
    w = const("w", np.ones((8, k, k, 4)), DataType.INT8, WQ)
    shape = const("shape", [1, *ofm_hw, 8], DataType.INT32, None)
    b = const("b", np.zeros(8), DataType.INT32, None)
    tconv = op("TRANSPOSE_CONV", [shape, w, x, b], [y], 0, padding=padding, stride_h=stride, stride_w=stride)
    return lower(model(graph([tconv], [x], [y])), U55_128)


def test_transpose_conv_is_a_stride_1_conv_over_the_upscaled_ifm() -> None:
    (npu,) = _tconv(2, "SAME", (12, 12)).npu_ops
    assert (npu.op_type, npu.block_type, npu.resampling) == ("Conv2DBackpropInputSwitchedBias", BlockType.CONV,
                                                              Resampling.TRANSPOSE)
    assert npu.kernel.stride_y == 1 and npu.ifm_shape == Shape4D(1, 6, 6, 4) and npu.ofm_shape.h == 12
    p = npu.kernel.padding
    assert p.top + p.bottom == 2 and p.left + p.right == 2  # 12 + 3 - 1 - 12 rows of padding
    assert npu.weights is not None and npu.weights.shape == (8, 3, 3, 4)
    (valid,) = _tconv(2, "VALID", (13, 13)).npu_ops
    assert valid.kernel.padding.top + valid.kernel.padding.bottom == 3


def test_transpose_conv_shape_constraints() -> None:
    (cpu,) = _tconv(2, "SAME", (13, 13)).ops
    assert isinstance(cpu, CpuOp) and "SAME padding" in cpu.reason
    (cpu,) = _tconv(3, "SAME", (18, 18)).ops
    assert isinstance(cpu, CpuOp) and "Stride values" in cpu.reason


def test_upscaling_geometry_reads_half_the_rows() -> None:
    (npu,) = _resize("RESIZE_NEAREST_NEIGHBOR", (8, 8), (16, 16)).npu_ops
    assert ifm_rows_for(npu, 4) == 3  # 4 upscaled rows = 2 source rows, plus one when unaligned
    assert ifm_rows_for(npu, 16) == 8
    assert producer_rows_for(npu, 4) == 2


def _upsampling2d(fy: int, fx: int):
    """Keras' export of UpSampling2D((fy, fx)) on a 4x6x8 map: a repeat along H, then along W."""
    x, y = fm("x", (1, 4, 6, 8)), fm("y", (1, 4 * fy, 6 * fx, 8))
    e1, t1, r1 = fm("e1", (1, 4, 1, 6, 8)), fm("t1", (1, 4, fy, 6, 8)), fm("r1", (1, 4 * fy, 6, 8))
    e2, t2 = fm("e2", (1, 4 * fy, 6, 1, 8)), fm("t2", (1, 4 * fy, 6, fx, 8))

    def c(name: str, values: list[int]):
        return const(name, values, DataType.INT32, None)

    ops = [
        op("EXPAND_DIMS", [x, c("a1", 2)], [e1], 0), op("TILE", [e1, c("m1", [1, 1, fy, 1, 1])], [t1], 1),
        op("RESHAPE", [t1, c("s1", [1, 4 * fy, 6, 8])], [r1], 2), op("EXPAND_DIMS", [r1, c("a2", 3)], [e2], 3),
        op("TILE", [e2, c("m2", [1, 1, 1, fx, 1])], [t2], 4), op("RESHAPE", [t2, c("s2", [1, 4 * fy, 6 * fx, 8])], [y], 5),
    ]
    return lower(model(graph(ops, [x], [y])), U55_128), x, y


def test_upsampling2d_export_becomes_one_resize() -> None:
    lg, _, y = _upsampling2d(2, 2)
    (npu,) = lg.npu_ops
    assert not lg.cpu_ops and npu.resampling is Resampling.NEAREST and npu.ofm is y
    assert sum("UpSampling2D" in reason for _, reason in lg.removed) == 5


def _run_copies(lg, values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Replay ``lg``'s NPU copies (1x1 average pools) over flat NHWC buffers, as the NPU moves bytes."""
    for npu in lg.npu_ops:
        assert npu.op_type == "AvgPool" and npu.kernel.height == npu.kernel.width == 1
        src = values[npu.ifm.name].reshape(npu.ifm_shape.as_list())
        at = npu.ifm_read_offset.as_list() if npu.ifm_read_offset else [0, 0, 0, 0]
        box = (npu.ofm_write_shape or npu.ofm_shape).as_list()
        part = src[tuple(slice(a, a + b) for a, b in zip(at, box))]
        frame = (npu.ofm_frame or npu.ofm.shape4d) if npu.ofm_write_offset else npu.ofm_shape
        dst = values.setdefault(npu.ofm.name, np.full(npu.ofm.elements, -128)).reshape(frame.as_list())
        to = npu.ofm_write_offset.as_list() if npu.ofm_write_offset else [0, 0, 0, 0]
        dst[tuple(slice(a, a + b) for a, b in zip(to, box))] = part
    return values


def test_upsampling2d_with_two_factors_is_two_repeats_by_copies() -> None:
    lg, x, _ = _upsampling2d(3, 2)
    assert not lg.cpu_ops
    # 3 + 2 copies, the last two writing the network output through their own view of it
    assert len(lg.npu_ops) == 5 and {o.ofm.name for o in lg.npu_ops[3:]} == {"y"}
    data = np.arange(x.elements) % 251 - 125
    out = _run_copies(lg, {"x": data.copy()})["y"].reshape(1, 12, 12, 8)
    assert np.array_equal(out, np.repeat(np.repeat(data.reshape(1, 4, 6, 8), 3, axis=1), 2, axis=2))


def test_a_reshape_that_stays_is_read_through_by_the_copies_after_it() -> None:
    # the network input cannot be written in the concatenation's view: its copies read it in place
    x, v, y = fm("x", (1, 4, 4, 8)), fm("v", (1, 2, 8, 8)), fm("y", (1, 2, 8, 16))
    shape = const("s", [1, 2, 8, 8], DataType.INT32, None)
    ops = [op("RESHAPE", [x, shape], [v], 0), op("CONCATENATION", [v, v], [y], 1, axis=3)]
    lg = lower(model(graph(ops, [x], [y])), U55_128)
    assert not lg.cpu_ops and [o.ifm.name for o in lg.npu_ops] == ["x", "x"]
    assert all(o.ifm_shape == Shape4D(1, 2, 8, 8) for o in lg.npu_ops)
    data = np.arange(x.elements) % 251 - 125
    out = _run_copies(lg, {"x": data.copy()})["y"].reshape(1, 2, 8, 16)
    assert np.array_equal(out, np.concatenate([data.reshape(1, 2, 8, 8)] * 2, axis=3))


def test_an_upsampling_from_one_pixel_is_one_resize_in_deployable_plans_too() -> None:
    """Its resize is a broadcast ADD of zeros the emitter runs (``deployable._streamed_constant``);
    before, deployable plans left the whole chain on the CPU."""
    from npuplan.lowering.upsampling import fold_upsampling

    x, y = fm("x", (1, 1, 1, 8)), fm("y", (1, 4, 4, 8))
    e1, t1, r1 = fm("e1", (1, 1, 1, 1, 8)), fm("t1", (1, 1, 4, 1, 8)), fm("r1", (1, 4, 1, 8))
    e2, t2 = fm("e2", (1, 4, 1, 1, 8)), fm("t2", (1, 4, 1, 4, 8))

    def c(name: str, values: list[int]):
        return const(name, values, DataType.INT32, None)

    ops = [
        op("EXPAND_DIMS", [x, c("a1", 2)], [e1], 0), op("TILE", [e1, c("m1", [1, 1, 4, 1, 1])], [t1], 1),
        op("RESHAPE", [t1, c("s1", [1, 4, 1, 8])], [r1], 2), op("EXPAND_DIMS", [r1, c("a2", 3)], [e2], 3),
        op("TILE", [e2, c("m2", [1, 1, 1, 4, 1])], [t2], 4), op("RESHAPE", [t2, c("s2", [1, 4, 4, 8])], [y], 5),
    ]
    g = graph(ops, [x], [y])
    assert [o.type for o in fold_upsampling(g)[0].ops] == ["RESIZE_NEAREST_NEIGHBOR"]
    assert [o.type for o in fold_upsampling(g, repeats=False)[0].ops] == ["RESIZE_NEAREST_NEIGHBOR"]


def test_a_tile_that_is_not_a_repeat_is_left_alone() -> None:
    x, y = fm("x", (1, 4, 6, 8)), fm("y", (1, 8, 6, 8))
    e1, t1 = fm("e1", (1, 1, 4, 6, 8)), fm("t1", (1, 2, 4, 6, 8))
    a = const("a", 1, DataType.INT32, None)
    m = const("m", [1, 2, 1, 1, 1], DataType.INT32, None)
    s = const("s", [1, 8, 6, 8], DataType.INT32, None)
    ops = [op("EXPAND_DIMS", [x, a], [e1], 0), op("TILE", [e1, m], [t1], 1), op("RESHAPE", [t1, s], [y], 2)]
    lg = lower(model(graph(ops, [x], [y])), U55_128)
    # not a resize: the TILE's two copies of the map, one after the other (``lowering.tiles``)
    assert not lg.cpu_ops and [o.tflite_type for o in lg.npu_ops] == ["TILE", "TILE"]
    assert [o.ofm_write_offset for o in lg.npu_ops] == [Shape4D(0, 0, 0, 0), Shape4D(0, 4, 0, 0)]
    assert Q is not None


def test_a_1x1_ifm_resize_is_a_broadcast_add() -> None:
    (npu,) = _resize("RESIZE_NEAREST_NEIGHBOR", (1, 1), (8, 8)).npu_ops
    assert (npu.op_type, npu.elementwise) == ("Add", "ADD") and npu.ofm_shape == Shape4D(1, 8, 8, 8)
    shapes = {npu.ifm_shape, npu.ifm2_shape}
    assert shapes == {Shape4D(1, 1, 1, 8), Shape4D(1, 8, 8, 8)}



def test_a_1x1_ifm_resize_adds_real_zeros() -> None:
    """The broadcast ADD's zeros are the input's zero point (raw 0 would add -zero_point * scale)."""
    q = Quantization((0.05,), (-7,))
    x, y = fm("x", (1, 1, 1, 8), quant=q), fm("y", (1, 2, 2, 8), quant=q)
    size = const("size", [2, 2], DataType.INT32, None)
    (npu,) = lower(model(graph([op("RESIZE_BILINEAR", [x, size], [y], 0)], [x], [y])), U55_128).npu_ops
    zeros, other = (npu.ifm, npu.ifm2) if npu.ifm.is_constant else (npu.ifm2, npu.ifm)
    assert other is x and zeros.quant == q and zeros.data is not None
    assert np.unique(zeros.data).tolist() == [-7]


def test_align_corners_factor_is_on_the_sizes_less_one() -> None:
    # nearest: the x2 upscaled IFM, then a depthwise picking the window's centre (no padding)
    ops = _resize("RESIZE_NEAREST_NEIGHBOR", (4, 4), (13, 13), align_corners=True).npu_ops
    assert [o.op_type for o in ops] == ["AvgPool", "DepthwiseConv2DBias"] and ops[0].ofm_shape == Shape4D(1, 8, 8, 8)
    pick = ops[1]
    assert pick.resampling is Resampling.NEAREST and (pick.kernel.height, pick.kernel.width) == (4, 4)
    assert pick.kernel.padding == Padding() and pick.ofm_shape == Shape4D(1, 13, 13, 8)
    assert pick.weights is not None and int(pick.weights.sum()) == 8 and pick.weights[0, 2, 2, 0] == 1
    # output row y reads upscaled row y + 2 of 16, that is source row (y + 2) // 4 = round(y / 4)
    assert all((y + 4 // 2) // 4 == int(np.floor(y / 4 + 0.5)) for y in range(13))
    # bilinear: the last pool averages unpadded windows
    (last,) = _resize("RESIZE_BILINEAR", (8, 8), (15, 15), align_corners=True).npu_ops
    assert (last.kernel.height, last.kernel.padding, last.ofm_shape.h) == (2, Padding(), 15)


def test_align_corners_sizes_that_are_not_a_factor_stay_on_the_cpu() -> None:
    for kind in ("RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR"):
        (cpu,) = _resize(kind, (8, 8), (16, 16), align_corners=True).ops  # 15 / 7 is no factor
        assert isinstance(cpu, CpuOp) and "less one" in cpu.reason


def _tfl_transpose_conv(x: np.ndarray, w: np.ndarray, stride: int, out: int, same: bool) -> np.ndarray:
    """TFLite's reference transpose convolution in one dimension: input i, tap t -> output
    ``i * stride + t - pad`` (``pad`` half the SAME total, rounded down)."""
    k = len(w)
    pad = max((-(-out // stride) - 1) * stride + k - out, 0) // 2 if same else 0
    y = np.zeros(out, dtype=np.int64)
    for i, v in enumerate(x):
        for t in range(k):
            o = i * stride + t - pad
            if 0 <= o < out:
                y[o] += v * w[t]
    return y


def _lowered_transpose_conv(x: np.ndarray, w: np.ndarray, stride: int, before: int, after: int, out: int) -> np.ndarray:
    """What the NPU computes: the IFM with ``stride - 1`` zeros after each value (transpose
    resampling), padded, correlated at stride 1 with the lowering's (flipped) kernel."""
    z = np.zeros(len(x) * stride, dtype=np.int64)
    z[::stride] = x
    z = np.concatenate([np.zeros(before, np.int64), z, np.zeros(after, np.int64)])
    k = len(w)
    return np.array([int(np.dot(z[o:o + k], w)) for o in range(out)])


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_transpose_conv_padding_computes_tflites_reference(k: int, padding: str) -> None:
    size = 6
    out = size * 2 if padding == "SAME" else size * 2 + max(k - 2, 0)
    (npu,) = _tconv(2, padding, (out, out), k=k).npu_ops
    rng = np.random.default_rng(k)
    x, w = rng.integers(-5, 6, size), rng.integers(-5, 6, k)
    flipped = w[::-1]  # the lowering's weights are the TFLite kernel flipped
    p = npu.kernel.padding
    assert p.top == p.left and p.bottom == p.right
    got = _lowered_transpose_conv(x, flipped, 2, p.top, p.bottom, out)
    assert np.array_equal(got, _tfl_transpose_conv(x, w, 2, out, padding == "SAME"))
