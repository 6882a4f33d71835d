"""Plans of networks that need the compile-time rewrites validate end to end: folded Keras shape
arithmetic, a SPACE_TO_BATCH_ND dilated-conv sandwich, a dilation-4 depthwise and a token FC."""

from __future__ import annotations

import numpy as np
import pytest

import npuplan
import npuplan.api
from npuplan.commands import validate_plan
from npuplan.ir.graph import Model
from npuplan.ir.types import DataType
from tests.unit.lowering._build import const, fm, graph, model, op


def _network() -> Model:
    i32 = DataType.INT32
    x, phases, conv_out = fm("x", (1, 20, 20, 8)), fm("phases", (4, 10, 10, 8)), fm("conv_out", (4, 10, 10, 8))
    dilated, dw = fm("dilated", (1, 20, 20, 8)), fm("dw", (1, 20, 20, 8))
    shape, first, packed = fm("shape", (4,), i32, None), fm("first", (), i32, None), fm("packed", (3,), i32, None)
    tokens, out = fm("tokens", (1, 400, 8)), fm("out", (1, 400, 16))
    one = const("one", [1], i32, None)
    bias = const("bias", np.zeros(8), i32, None)
    return model(graph([
        op("SPACE_TO_BATCH_ND", [x, const("blk", [2, 2], i32, None), const("pads", [[0, 0], [0, 0]], i32, None)],
           [phases], 0),
        op("CONV_2D", [phases, const("w", np.ones((8, 3, 3, 8))), bias], [conv_out], 1, padding="SAME", stride_h=1,
           stride_w=1, dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="RELU"),
        op("BATCH_TO_SPACE_ND", [conv_out, const("blk2", [2, 2], i32, None), const("crops", [[0, 0], [0, 0]], i32, None)],
           [dilated], 2),
        op("DEPTHWISE_CONV_2D", [dilated, const("dw_w", np.ones((1, 3, 3, 8))), bias], [dw], 3, padding="SAME",
           stride_h=1, stride_w=1, dilation_h_factor=4, dilation_w_factor=4, depth_multiplier=1,
           fused_activation_function="NONE"),
        op("SHAPE", [dw], [shape], 4),
        op("STRIDED_SLICE", [shape, const("z", [0], i32, None), one, one], [first], 5, shrink_axis_mask=1),
        op("PACK", [first, const("m1", -1, i32, None), const("c8", 8, i32, None)], [packed], 6, axis=0, values_count=3),
        op("RESHAPE", [dw, packed], [tokens], 7),
        op("FULLY_CONNECTED", [tokens, const("fc_w", np.ones((16, 8))), const("fc_b", np.zeros(16), i32, None)],
           [out], 8, fused_activation_function="NONE", keep_num_dims=True),
    ], [x], [out]))


@pytest.mark.parametrize("options", [{}, {"optimise": "Size"}, {"arena_cache_size": 16384}])
def test_rewritten_network_plans_on_the_npu_and_validates(monkeypatch: pytest.MonkeyPatch, options: dict) -> None:
    monkeypatch.setattr(npuplan.api, "read_tflite", lambda _path: _network())
    plan = npuplan.plan("rewritten.tflite", accelerator_config="ethos-u55-128",
                        system_config="Ethos_U55_High_End_Embedded", memory_mode="Shared_Sram", **options)
    assert plan.lowered.cpu_ops == ()
    assert [o.op_type for o in plan.lowered.npu_ops] == ["Conv2DBias", "DepthwiseConv2DBias", "Conv2DBias"]
    validate_plan(plan)
