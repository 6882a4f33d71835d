"""One test group per graph pass, on tiny graphs."""

from __future__ import annotations

import numpy as np

from npuplan.hw.accelerator import accelerator
from npuplan.ir.lowered import Activation
from npuplan.ir.types import DataType
from npuplan.lowering.activations import fuse_activations
from npuplan.lowering.pads import fold_pads
from npuplan.lowering.reshapes import drop_noop_reshapes
from npuplan.lowering.shape_ops import fold_shape_ops
from npuplan.lowering._util import fused_activation

from ._build import conv, const, fm, graph, op

U55_128 = accelerator("ethos-u55-128")
U55_64 = accelerator("ethos-u55-64")


def _conv_then(act_type: str):
    x, y, z = fm("x", (1, 8, 8, 4)), fm("y", (1, 8, 8, 8)), fm("z", (1, 8, 8, 8))
    c = conv(x, y)
    return graph([c, op(act_type, [y], [z], 1)], [x], [z])


def test_relu_is_fused_into_conv() -> None:
    g, removed = fuse_activations(_conv_then("RELU"), U55_128)
    assert len(g.ops) == 1 and g.ops[0].type == "CONV_2D"
    assert fused_activation(g.ops[0].options) is Activation.RELU
    assert g.ops[0].outputs[0].name == "z" and g.ops[0].options["npu_name"] == "y"
    assert removed and removed[0][0] == "z"


def test_hard_swish_lut_fused_only_with_spare_shram_banks() -> None:
    g128, _ = fuse_activations(_conv_then("HARD_SWISH"), U55_128)
    g64, _ = fuse_activations(_conv_then("HARD_SWISH"), U55_64)
    assert len(g128.ops) == 1 and fused_activation(g128.ops[0].options) is Activation.LUT
    assert len(g64.ops) == 2


def test_activation_not_fused_when_producer_output_is_shared() -> None:
    x, y, z, w = fm("x", (1, 8, 8, 4)), fm("y", (1, 8, 8, 8)), fm("z", (1, 8, 8, 8)), fm("w", (1, 8, 8, 8))
    g = graph([conv(x, y), op("RELU", [y], [z]), op("ADD", [y, z], [w])], [x], [w])
    fused, removed = fuse_activations(g, U55_128)
    assert len(fused.ops) == 3 and removed == ()


def _pad_conv(pads, k: int = 7, stride: int = 2):
    x, p, y = fm("x", (1, 16, 16, 3)), fm("p", (1, 22, 22, 3)), fm("y", (1, 8, 8, 4))
    pad = op("PAD", [x, const("pads", pads, DataType.INT32, None)], [p], 0)
    return graph([pad, conv(p, y, k, padding="VALID", stride=stride, index=1)], [x], [y])


def test_pad_folded_into_conv_as_explicit_padding() -> None:
    g, removed = fold_pads(_pad_conv([[0, 0], [3, 3], [3, 3], [0, 0]]))
    assert [o.type for o in g.ops] == ["CONV_2D"]
    assert g.ops[0].options["explicit_padding"] == (3, 3, 3, 3)
    assert g.ops[0].inputs[0].name == "x" and removed[0][0] == "p"


def test_a_pad_folds_up_to_the_kernel_less_one_on_each_side() -> None:
    """As Vela's default core folds (2, 3) and (4, 4) before 5x5 and 7x7 kernels (its legacy core
    kept any pad above half the kernel)."""
    def pad_conv(pads):
        (top, bottom), (left, right) = pads
        x, y = fm("x", (1, 16, 16, 3)), fm("y", (1, 10 + top + bottom, 10 + left + right, 4))
        p = fm("p", (1, 16 + top + bottom, 16 + left + right, 3))
        pad = op("PAD", [x, const("pads", [[0, 0], *pads, [0, 0]], DataType.INT32, None)], [p], 0)
        return graph([pad, conv(p, y, 7, padding="VALID", index=1)], [x], [y])

    g, _ = fold_pads(pad_conv([[4, 4], [6, 2]]))
    assert [o.type for o in g.ops] == ["CONV_2D"] and g.ops[0].options["explicit_padding"] == (4, 6, 4, 2)
    g, removed = fold_pads(pad_conv([[7, 1], [1, 1]]))
    assert [o.type for o in g.ops] == ["PAD", "CONV_2D"] and removed == ()


def test_a_causal_pad_folds_up_to_the_kernel_less_one() -> None:
    x, p, y = fm("x", (1, 1, 64, 8)), fm("p", (1, 1, 68, 8)), fm("y", (1, 1, 64, 8))
    pad = op("PAD", [x, const("pads", [[0, 0], [0, 0], [4, 0], [0, 0]], DataType.INT32, None)], [p], 0)
    dilated = conv(p, y, 3, padding="VALID", index=1)
    dilated = op("CONV_2D", dilated.inputs, [y], 1, padding="VALID", stride_h=1, stride_w=1,
                 dilation_h_factor=1, dilation_w_factor=2, fused_activation_function="NONE")
    g, _ = fold_pads(graph([pad, dilated], [x], [y]))
    assert [o.type for o in g.ops] == ["CONV_2D"] and g.ops[0].options["explicit_padding"] == (0, 4, 0, 0)
    wider = op("PAD", [x, const("pads", [[0, 0], [0, 0], [5, 0], [0, 0]], DataType.INT32, None)], [p], 0)
    assert len(fold_pads(graph([wider, dilated], [x], [y]))[0].ops) == 2


def test_a_pad_adds_to_a_folded_dilations_own_padding() -> None:
    x, p, y = fm("x", (1, 1, 64, 8)), fm("p", (1, 1, 66, 8)), fm("y", (1, 1, 64, 8))
    pad = op("PAD", [x, const("pads", [[0, 0], [0, 0], [2, 0], [0, 0]], DataType.INT32, None)], [p], 0)
    dilated = conv(p, y, 3, padding="VALID", index=1)
    dilated = op("CONV_2D", dilated.inputs, [y], 1, padding="VALID", stride_h=1, stride_w=1, dilation_h_factor=1,
                 dilation_w_factor=2, fused_activation_function="NONE", explicit_padding=(0, 2, 0, 0))
    g, _ = fold_pads(graph([pad, dilated], [x], [y]))
    assert [o.type for o in g.ops] == ["CONV_2D"] and g.ops[0].options["explicit_padding"] == (0, 4, 0, 0)


def test_pad_of_channels_is_kept() -> None:
    g, _ = fold_pads(_pad_conv([[0, 0], [1, 1], [1, 1], [1, 1]]))
    assert len(g.ops) == 2


def test_reshape_dropped_and_consumer_reads_source() -> None:
    x, y, r, z = fm("x", (1, 1, 1, 16)), fm("y", (1, 1, 1, 16)), fm("r", (1, 16)), fm("z", (1, 4))
    shape = const("shape", [1, 16], DataType.INT32, None)
    fc = op("FULLY_CONNECTED", [r, const("w", np.ones((4, 16))), None], [z], 2)
    g = graph([conv(x, y, 1), op("RESHAPE", [y, shape], [r], 1), fc], [x], [z])
    out, removed = drop_noop_reshapes(g)
    assert [o.type for o in out.ops] == ["CONV_2D", "FULLY_CONNECTED"]
    assert out.ops[1].inputs[0] is y and removed[0][0] == "r"


def test_reshape_with_dynamic_shape_is_kept() -> None:
    x, s, r = fm("x", (1, 1, 1, 16)), fm("s", (2,), DataType.INT32), fm("r", (1, 16))
    g = graph([op("RESHAPE", [x, s], [r])], [x, s], [r])
    assert drop_noop_reshapes(g)[0].ops == g.ops


def test_a_rank_dropping_slice_before_gather_nd_is_kept() -> None:
    # GATHER_ND's indices address the leading axes as declared: rewired to the 4-D tensor it would
    # index batch and rows instead of rows and columns (zoo6 cpu_gather_nd_10)
    x, y, s, z = fm("x", (1, 10, 10, 8)), fm("y", (1, 10, 10, 8)), fm("s", (10, 10, 8)), fm("z", (4, 8))
    shape = const("shape", [10, 10, 8], DataType.INT32, None)
    idx = const("idx", np.array([[0, 1], [3, 4], [7, 2], [9, 9]], np.int32), DataType.INT32, None)
    g = graph([conv(x, y), op("RESHAPE", [y, shape], [s], 1), op("GATHER_ND", [s, idx], [z], 2)], [x], [z])
    out, _ = drop_noop_reshapes(g)
    gather = next(o for o in out.ops if o.type == "GATHER_ND")
    assert gather.inputs[0].shape == (10, 10, 8)


def test_reshape_producing_graph_output_keeps_output_tensor() -> None:
    x, y, r = fm("x", (1, 1, 1, 16)), fm("y", (1, 1, 1, 16)), fm("r", (1, 16))
    g = graph([conv(x, y, 1), op("RESHAPE", [y, const("s", [1, 16], DataType.INT32, None)], [r])], [x], [r])
    out, _ = drop_noop_reshapes(g)
    assert len(out.ops) == 1 and out.ops[0].outputs[0] is r and out.outputs == (r,)


def test_a_concatenation_does_not_write_a_reshaped_network_output_itself() -> None:
    # its copies would split the output's own axes: the reshape stays (the NPU runs it as a copy)
    a, b, c, r = fm("a", (1, 4, 4, 8)), fm("b", (1, 4, 4, 8)), fm("c", (1, 4, 4, 16)), fm("r", (1, 16, 16))
    shape = const("s", [1, 16, 16], DataType.INT32, None)
    g = graph([op("CONCATENATION", [a, b], [c], 0, axis=3), op("RESHAPE", [c, shape], [r], 1)], [a, b], [r])
    out, removed = drop_noop_reshapes(g)
    assert [o.type for o in out.ops] == ["CONCATENATION", "RESHAPE"] and not removed


def test_shape_op_becomes_constant() -> None:
    x, s = fm("x", (1, 4, 4, 2)), fm("s", (4,), DataType.INT32, None)
    out = fm("o", (), DataType.INT32, None)
    g = graph([op("SHAPE", [x], [s]), op("STRIDED_SLICE", [s], [out])], [x], [out])
    folded, removed = fold_shape_ops(g)
    assert [o.type for o in folded.ops] == ["STRIDED_SLICE"]
    data = folded.ops[0].inputs[0].data
    assert data is not None and data.tolist() == [1, 4, 4, 2] and removed[0][0] == "s"


def test_vela_order_runs_last_input_branch_first() -> None:
    from npuplan.lowering.order import vela_order

    x, a, b, s, y = (fm(n, (1, 4, 4, 4)) for n in ("x", "a", "b", "s", "y"))
    short = conv(x, s, 1)
    main1, main2 = conv(x, a, 1), conv(a, b, 1)
    add = op("ADD", [s, b], [y])
    ordered = vela_order(graph([short, main1, main2, add], [x], [y]))
    assert [o.outputs[0].name for o in ordered.ops] == ["a", "b", "s", "y"]
