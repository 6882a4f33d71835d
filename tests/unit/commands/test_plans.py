"""Plans from the real pipeline validate end to end (scheduler + allocator + command stream)."""

from __future__ import annotations

from pathlib import Path

import pytest

import npuplan
from npuplan.commands import NpuStripeCommand, build_command_stream, plan_addresses, validate, validate_plan

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.mark.parametrize("model, options", [
    ("ds_cnn_kws.tflite", {}),
    ("resnet8_cifar.tflite", {"optimise": "Size"}),
    ("mobilenet_v1_025_96.tflite", {"arena_cache_size": 49152}),  # cascades with rolling buffers
])
def test_shipped_models_plan_and_validate(model, options) -> None:
    plan = npuplan.plan(DATA / model, **options)
    validate_plan(plan)


def test_cascaded_plan_broken_by_dropping_a_rolling_stripe_is_caught() -> None:
    # 64 KiB no longer needs cascades: the 8-channel maps packed (NHWC) fit it whole, and plan faster
    plan = npuplan.plan(DATA / "mobilenet_v1_025_96.tflite", arena_cache_size=49152)
    assert plan.schedule.cascades, "expected the tight budget to need cascades"
    addresses = plan_addresses(plan.schedule, plan.lowered, plan.arch)
    commands = build_command_stream(plan.schedule, plan.lowered, plan.arch, addresses)
    first = plan.schedule.cascades[0].op_names[0]
    k = [i for i, c in enumerate(commands) if isinstance(c, NpuStripeCommand) and c.op == first][1]
    assert validate(commands[:k] + commands[k + 1:], plan.lowered, plan.arch, addresses, sram_limit_bytes=49152)
