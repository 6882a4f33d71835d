"""A small decoder (nearest resize, transpose conv, bilinear resize between convs) plans and its
command stream validates, with cascades through the upscaling ops when the budget is tight."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.api import fit_addressed_stream
from npuplan.commands import NpuStripeCommand, validate
from npuplan.hw import build_architecture
from npuplan.ir.graph import Op, Tensor
from npuplan.ir.types import DataType
from npuplan.lowering import lower
from npuplan.options import Optimise, PlanOptions
from npuplan.schedule import plan_schedule
from tests.unit.lowering._build import const, conv, fm, graph, model, op


def _resize(kind: str, x: Tensor, y: Tensor, index: int) -> Op:
    size = const(f"{y.name}_size", list(y.shape[1:3]), DataType.INT32, None)
    return op(kind, [x, size], [y], index, align_corners=False, half_pixel_centers=False)


def _tconv(x: Tensor, y: Tensor, index: int) -> Op:
    cin, cout = x.shape[-1], y.shape[-1]
    weights = const(f"{y.name}_w", np.arange(cout * 9 * cin).reshape(cout, 3, 3, cin) % 5 - 2)
    shape = const(f"{y.name}_shape", list(y.shape), DataType.INT32, None)
    return op("TRANSPOSE_CONV", [shape, weights, x], [y], index, padding="SAME", stride_h=2, stride_w=2,
              fused_activation_function="NONE")


def decoder():  # type: ignore[no-untyped-def]
    x = fm("x", (1, 8, 8, 16))
    t = [fm(f"t{i}", shape) for i, shape in enumerate(
        [(1, 8, 8, 16), (1, 16, 16, 16), (1, 16, 16, 16), (1, 32, 32, 8), (1, 32, 32, 8), (1, 64, 64, 8),
         (1, 64, 64, 4)])]
    ops = [conv(x, t[0], index=0), _resize("RESIZE_NEAREST_NEIGHBOR", t[0], t[1], 1), conv(t[1], t[2], index=2),
           _tconv(t[2], t[3], 3), conv(t[3], t[4], index=4), _resize("RESIZE_BILINEAR", t[4], t[5], 5),
           conv(t[5], t[6], index=6)]
    return model(graph(ops, [x], [t[-1]]))


@pytest.mark.parametrize("options", [
    PlanOptions("ethos-u55-128", system_config="Ethos_U55_High_End_Embedded", memory_mode="Shared_Sram"),
    PlanOptions("ethos-u55-64", system_config="Ethos_U55_Deep_Embedded", memory_mode="Shared_Sram",
                optimise=Optimise.SIZE),
    PlanOptions("ethos-u55-128", system_config="Ethos_U55_High_End_Embedded", memory_mode="Shared_Sram",
                arena_cache_size_bytes=40 * 1024),
])
def test_decoder_plans_cascade_through_upscaling_and_validate(options: PlanOptions) -> None:
    arch = build_architecture(options)
    lowered = lower(decoder(), arch.accelerator)
    assert not lowered.cpu_ops
    schedule, allocation, commands = fit_addressed_stream(plan_schedule(lowered, arch, options), lowered, arch, options)
    assert validate(commands, lowered, arch, allocation.addresses) == []
    upscaling = {"t1", "t3", "t5"}
    if options.optimise is Optimise.SIZE or options.arena_cache_size_bytes:
        cascaded = {name for c in schedule.cascades for name in c.op_names}
        assert cascaded & upscaling, "expected a cascade through an upscaling op"


def test_dropping_a_stripe_of_a_cascaded_upscaling_op_is_caught() -> None:
    options = PlanOptions("ethos-u55-64", system_config="Ethos_U55_Deep_Embedded", memory_mode="Shared_Sram",
                          optimise=Optimise.SIZE)
    arch = build_architecture(options)
    lowered = lower(decoder(), arch.accelerator)
    schedule, allocation, commands = fit_addressed_stream(plan_schedule(lowered, arch, options), lowered, arch, options)
    cascaded = [name for c in schedule.cascades for name in c.op_names if name in ("t1", "t3")]
    assert cascaded
    k = [i for i, c in enumerate(commands) if isinstance(c, NpuStripeCommand) and c.op == cascaded[0]][1]
    assert validate(commands[:k] + commands[k + 1:], lowered, arch, allocation.addresses)
