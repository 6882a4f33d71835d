"""Ops whose RESHAPE, SQUEEZE or EXPAND_DIMS neighbours were removed (they move no data) read and
write tensors of another rank or view: they stay on the NPU as in the file (Vela checks them before
removing its reshapes)."""

from __future__ import annotations

import numpy as np

from npuplan.hw.accelerator import accelerator
from npuplan.ir.lowered import Activation, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering import lower

from ._build import conv, const, fm, graph, i32, model, op


def _lower(ops, inputs, outputs):  # type: ignore[no-untyped-def]
    """Lowered for the 128-MAC Ethos-U55 (the reshape passes run as in a plan)."""
    return lower(model(graph(ops, inputs, outputs)), accelerator("ethos-u55-128"))


def test_a_softmax_over_pixels_seen_as_matrix_rows_stays_on_the_npu_in_the_file_s_shape() -> None:
    x, a, rows, soft, b, y = (fm("x", (1, 6, 1, 8)), fm("a", (1, 6, 1, 8)), fm("rows", (6, 8)),
                              fm("soft", (6, 8), quant=Quantization((1 / 256,), (-128,))),
                              fm("b", (1, 6, 1, 8), quant=Quantization((1 / 256,), (-128,))), fm("y", (1, 6, 1, 8)))
    lg = _lower([conv(x, a, 1, index=0), op("RESHAPE", [a, i32("s1", [6, 8])], [rows], 1),
                 op("SOFTMAX", [rows], [soft], 2, beta=1.0), op("RESHAPE", [soft, i32("s2", [1, 6, 1, 8])], [b], 3),
                 conv(b, y, 1, index=4)], [x], [y])
    assert not lg.cpu_ops
    steps = [o for o in lg.npu_ops if o.tflite_type == "SOFTMAX"]
    # run in the file's shape of the softmax (its OFM, 6 x 8), the IFM (1, 6, 1, 8) read as that
    reading_ifm = [o.ifm_shape for o in steps[1:] if o.ifm.shape == (1, 6, 1, 8)]
    assert reading_ifm and set(reading_ifm) == {Shape4D(1, 1, 6, 8)}
    assert steps[-1].ofm_shape == steps[-1].ofm.shape4d == Shape4D(1, 1, 6, 8)


def test_a_resize_and_a_transpose_conv_after_a_removed_expand_dims_stay_on_the_npu() -> None:
    x, a, flat, act, up = fm("x", (1, 1, 4, 8)), fm("a", (1, 1, 4, 8)), fm("flat", (1, 4, 8)), fm("act", (1, 4, 8)), \
        fm("up", (1, 1, 4, 8))
    big = fm("big", (1, 2, 8, 8))
    ops = [conv(x, a, 1, index=0), op("RESHAPE", [a, i32("s", [1, 4, 8])], [flat], 1),
           op("LOGISTIC", [flat], [act], 2), op("EXPAND_DIMS", [act, i32("axis", 0)], [up], 3),
           op("RESIZE_NEAREST_NEIGHBOR", [up, i32("size", [2, 8])], [big], 4, align_corners=False,
              half_pixel_centers=False)]
    lg = _lower(ops, [x], [big])
    assert not lg.cpu_ops and "RESIZE_NEAREST_NEIGHBOR" in {o.tflite_type for o in lg.npu_ops}
    w, b = const("w", np.ones((8, 3, 3, 8))), const("b", np.zeros(8), DataType.INT32, None)
    tconv = op("TRANSPOSE_CONV", [i32("shape", [1, 2, 8, 8]), w, up, b], [big], 4, padding="SAME", stride_h=2,
               stride_w=2)
    lg = _lower([*ops[:4], tconv], [x], [big])
    assert not lg.cpu_ops and "TRANSPOSE_CONV" in {o.tflite_type for o in lg.npu_ops}


def test_a_transpose_moving_only_axes_of_size_one_is_a_reshape() -> None:
    x, a, t, y = fm("x", (1, 1, 1, 12)), fm("a", (1, 1, 1, 12)), fm("t", (1, 1, 12, 1)), fm("y", (1, 1, 12, 4))
    lg = _lower([conv(x, a, 1, index=0), op("TRANSPOSE", [a, i32("perm", [0, 2, 3, 1])], [t], 1),
                 conv(t, y, 3, index=2)], [x], [y])
    assert not lg.cpu_ops
    assert [o.tflite_type for o in lg.npu_ops if isinstance(o, NpuOp)] == ["CONV_2D", "CONV_2D"]


def test_an_activation_after_a_squeeze_of_a_conv_output_fuses_into_the_conv() -> None:
    """conv -> SQUEEZE -> HARD_SWISH -> RESHAPE -> conv: the table lookup is elementwise, so it fuses
    into the conv as Vela fuses it once its reshapes are gone (random_534 of the seed-500 set); on
    the 64-MAC Ethos-U55 (no spare SHRAM for a LUT) it stays an operation of its own."""
    x, a, wide, flat, act, back, y = (fm("x", (1, 6, 5, 8)), fm("a", (1, 6, 5, 8)), fm("wide", (1, 1, 30, 8)),
                                      fm("flat", (1, 30, 8)), fm("act", (1, 30, 8), quant=Quantization((0.04,), (1,))),
                                      fm("back", (1, 6, 5, 8), quant=Quantization((0.04,), (1,))), fm("y", (1, 6, 5, 8)))
    ops = [conv(x, a, 1, index=0), op("RESHAPE", [a, i32("s1", [1, 1, 30, 8])], [wide], 1),
           op("SQUEEZE", [wide], [flat], 2, squeeze_dims=(1,)), op("HARD_SWISH", [flat], [act], 3),
           op("RESHAPE", [act, i32("s2", [1, 6, 5, 8])], [back], 4), conv(back, y, 1, index=5)]
    lg = _lower(ops, [x], [y])
    assert not lg.cpu_ops and [o.tflite_type for o in lg.npu_ops] == ["CONV_2D", "CONV_2D"]
    assert lg.npu_ops[0].activation is Activation.LUT
    small = lower(model(graph(ops, [x], [y])), accelerator("ethos-u55-64"))
    assert "HARD_SWISH" in [o.tflite_type for o in small.npu_ops]


def test_a_reshape_changing_the_depth_a_softmax_reads_stays() -> None:
    """A softmax normalises along its last axis: a removed reshape before it must not change that
    axis (a 16 x 1 attention score reshaped to 1 x 16, as Keras's Dot layers write it; kept, the
    softmax would run over rows of one element and could not go back to the CPU when emitted)."""
    x, a, rows = fm("x", (1, 16, 1, 8)), fm("a", (1, 16, 1, 1)), fm("rows", (1, 16))
    soft = fm("soft", (1, 16), quant=Quantization((1 / 256,), (-128,)))
    b, y = fm("b", (1, 1, 1, 16), quant=Quantization((1 / 256,), (-128,))), fm("y", (1, 1, 1, 4))
    for deployable in (False, True):
        lg = lower(model(graph([conv(x, a, 1, index=0), op("RESHAPE", [a, i32("s1", [1, 16])], [rows], 1),
                                op("SOFTMAX", [rows], [soft], 2, beta=1.0),
                                op("RESHAPE", [soft, i32("s2", [1, 1, 1, 16])], [b], 3), conv(b, y, 1, index=4)],
                               [x], [y])), accelerator("ethos-u55-128"), deployable=deployable)
        assert not lg.cpu_ops
        # the softmax reads its rows 16 deep (the conv writes them), not the 16 x 1 map
        read = {o.ifm.name for o in lg.npu_ops if o.tflite_type == "SOFTMAX" and o.ifm.name in ("a", "rows")}
        assert read == {"rows"} and rows.shape4d.c == 16
