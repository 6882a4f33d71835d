"""Cascades through upscaling ops (nearest and bilinear resizes, transpose convolutions), lowered from
random decoder chains and striped at any height: their streams validate, and dropping a stripe is caught.
The rolling buffers come from the scheduler's geometry, so this checks ``ifm_rows_for`` and
``producer_rows_for`` for upscaling ops against the command stream's ``input_rows``."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from npuplan.commands import NpuStripeCommand, build_command_stream, plan_addresses, validate
from npuplan.ir.lowered import NpuOp, Resampling
from npuplan.ir.types import DataType
from npuplan.lowering import lower

from tests.unit.commands.graphs import arch, hand_schedule
from tests.unit.lowering._build import const, conv, fm, graph, model, op

TARGET = arch()
LAYER = st.sampled_from(["conv1", "conv3", "conv3s2", "nearest", "bilinear", "tconv2", "tconv3", "tconv4"])


def _layer(kind: str, x, index: int):  # type: ignore[no-untyped-def]
    _, h, w, c = x.shape
    if kind.startswith("conv"):
        stride = 2 if kind.endswith("s2") else 1
        y = fm(f"t{index}", (1, -(-h // stride), -(-w // stride), c))
        return conv(x, y, int(kind[4]), stride=stride, index=index), y
    y = fm(f"t{index}", (1, 2 * h, 2 * w, c))
    if kind in ("nearest", "bilinear"):
        size = const(f"t{index}_size", [2 * h, 2 * w], DataType.INT32, None)
        kind_name = "RESIZE_NEAREST_NEIGHBOR" if kind == "nearest" else "RESIZE_BILINEAR"
        return op(kind_name, [x, size], [y], index, align_corners=False, half_pixel_centers=False), y
    k = int(kind[5])
    weights = const(f"t{index}_w", np.ones((c, k, k, c)))
    shape = const(f"t{index}_shape", [1, 2 * h, 2 * w, c], DataType.INT32, None)
    return op("TRANSPOSE_CONV", [shape, weights, x], [y], index, padding="SAME", stride_h=2, stride_w=2), y


@st.composite
def decoder_plans(draw):  # type: ignore[no-untyped-def]
    kinds = draw(st.lists(LAYER, min_size=2, max_size=5).filter(
        lambda ks: sum(k in ("nearest", "bilinear") or k.startswith("tconv") for k in ks) in (1, 2, 3)))
    x = fm("x", (1, draw(st.integers(2, 7)), draw(st.integers(1, 5)), draw(st.sampled_from([4, 8]))))
    ops, cur = [], x
    for index, kind in enumerate(kinds):
        layer, cur = _layer(kind, cur, index)
        ops.append(layer)
    lowered = lower(model(graph(ops, [x], [cur])), TARGET.accelerator)
    npu = [o for o in lowered.ops if isinstance(o, NpuOp)]
    assert len(npu) == len(kinds)
    first = draw(st.integers(0, len(npu) - 2))
    last = draw(st.integers(first + 1, len(npu) - 1))
    final = draw(st.integers(1, npu[last].ofm_shape.h))
    return lowered, hand_schedule(lowered, cascades=[(first, last, final)])


@seed(11)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(decoder_plans(), st.integers(0, 10_000))
def test_cascades_through_upscaling_validate_and_a_dropped_stripe_is_caught(plan, pick) -> None:  # type: ignore[no-untyped-def]
    lowered, schedule = plan
    assert any(o.resampling is not Resampling.NONE for o in lowered.npu_ops)
    addresses = plan_addresses(schedule, lowered, TARGET)
    commands = build_command_stream(schedule, lowered, TARGET, addresses)
    assert validate(commands, lowered, TARGET, addresses, sram_limit_bytes=1 << 30) == []
    stripes = [k for k, c in enumerate(commands) if isinstance(c, NpuStripeCommand)]
    k = stripes[pick % len(stripes)]
    assert validate(commands[:k] + commands[k + 1:], lowered, TARGET, addresses, sram_limit_bytes=1 << 30)
