"""Deliberately broken plans are caught, each with the command, tensor and rows or bytes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from npuplan.commands import (
    Address,
    DmaCommand,
    NpuStripeCommand,
    ViolationKind,
    build_command_stream,
    plan_addresses,
    validate,
)
from npuplan.schedule.model.types import WeightBuffering

from bench.command_graphs import OpChoice, arch, chain, diamond, hand_schedule

CASCADED = chain([(8, 3, 1), (16, 3, 2), (8, 5, 1)], h=20)


def _check(graph, schedule, addresses=None, mutate=None):
    target = arch()
    addresses = addresses or plan_addresses(schedule, graph, target)
    commands = build_command_stream(schedule, graph, target, addresses)
    if mutate is not None:
        commands = mutate(commands)
    return validate(commands, graph, target, addresses)


def test_rolling_buffer_one_row_short_of_the_tightest_is_caught() -> None:
    schedule = hand_schedule(CASCADED, cascades=[(0, 2, 1)])
    given = schedule.placements["conv0"].rows
    tightest = next(d for d in range(-given + 1, 1)
                    if not _check(CASCADED, hand_schedule(CASCADED, cascades=[(0, 2, 1)], rolling_rows_delta=d)))
    assert given + tightest >= 3  # a 3x3 kernel needs at least 3 rows
    short = _check(CASCADED, hand_schedule(CASCADED, cascades=[(0, 2, 1)], rolling_rows_delta=tightest - 1))
    assert short and short[0].kind is ViolationKind.OVERWRITTEN
    assert short[0].tensor in ("conv0", "conv1") and "rows" in short[0].detail


def test_two_allocations_overlapping_by_16_bytes_are_caught() -> None:
    graph = chain([(8, 3, 1), (8, 3, 1)])
    schedule = hand_schedule(graph)
    addresses = dict(plan_addresses(schedule, graph, arch()))
    a, b = addresses["conv0"], addresses["conv1"]  # live together while conv1 runs
    addresses["conv1"] = Address(b.area, a.offset + a.size_bytes - 16, b.size_bytes)
    found = _check(graph, schedule, addresses)
    overlap = [v for v in found if v.kind is ViolationKind.OVERLAP]
    assert overlap and "bytes" in overlap[0].detail
    lo, hi = (int(x) for x in overlap[0].detail.split("bytes ")[1].split(" ")[0].split(".."))
    assert hi - lo + 1 == 16


def test_dma_moved_after_its_first_use_is_caught() -> None:
    graph = chain([(8, 3, 1), (32, 3, 1)])
    schedule = hand_schedule(graph, weights={"conv1": OpChoice(WeightBuffering.DOUBLE, 16)})

    def late(commands):
        k = next(i for i, c in enumerate(commands) if isinstance(c, DmaCommand))
        use = next(i for i, c in enumerate(commands) if isinstance(c, NpuStripeCommand) and c.op == "conv1")
        moved = list(commands)
        dma = moved.pop(k)
        moved.insert(use, dma)  # now right after its first reader
        return tuple(moved)

    found = _check(graph, schedule, mutate=late)
    assert found and found[0].kind in (ViolationKind.MISSING_DATA, ViolationKind.OVERWRITTEN)
    assert found[0].tensor == "conv1#weights" and "weight slice 0" in found[0].detail


@pytest.mark.parametrize("graph, cascades", [(CASCADED, [(0, 2, 1)]), (diamond(), [(3, 4, 2)])])
def test_every_dropped_stripe_is_caught(graph, cascades) -> None:
    schedule = hand_schedule(graph, cascades=cascades)
    target = arch()
    addresses = plan_addresses(schedule, graph, target)
    commands = build_command_stream(schedule, graph, target, addresses)
    assert validate(commands, graph, target, addresses) == []
    for k, command in enumerate(commands):
        if isinstance(command, NpuStripeCommand):
            found = validate(commands[:k] + commands[k + 1:], graph, target, addresses)
            assert found, f"dropping stripe {k} ({command.op} rows {command.ofm.box.rows}) went unnoticed"


def test_rolling_buffer_read_by_a_second_consumer_is_caught() -> None:
    graph = diamond()  # stem feeds left and right: it cannot roll inside a stem->left cascade
    found = _check(graph, hand_schedule(graph, cascades=[(0, 1, 1)]))
    assert found and found[0].kind is ViolationKind.OVERWRITTEN and found[0].tensor == "stem"


def test_sram_over_the_limit_is_caught() -> None:
    graph = chain([(8, 3, 1), (8, 3, 1)])
    schedule = hand_schedule(graph)
    target = arch()
    addresses = plan_addresses(schedule, graph, target)
    commands = build_command_stream(schedule, graph, target, addresses)
    peak = max(a.offset + a.size_bytes for a in addresses.values() if a.area == target.fast_area)
    found = validate(commands, graph, target, addresses, sram_limit_bytes=peak - 1)
    assert [v.kind for v in found][:1] == [ViolationKind.AREA_OVERFLOW]


def test_validate_plan_raises_a_validation_error_naming_the_command(monkeypatch) -> None:
    import importlib

    from npuplan import commands as pkg
    from npuplan.errors import ValidationError

    graph = chain([(8, 3, 1), (8, 3, 1)])
    schedule = hand_schedule(graph)
    module = importlib.import_module("npuplan.commands.replay")
    real = module.build_command_stream
    monkeypatch.setattr(module, "build_command_stream", lambda *a: real(*a)[1:])

    class Plan:
        pass

    plan = Plan()
    plan.schedule, plan.lowered, plan.arch = schedule, graph, arch()
    plan.options = replace(__import__("npuplan.api", fromlist=["make_options"]).make_options())
    with pytest.raises(ValidationError, match=r"command 0: .*'input'|command 0: .* 'conv0'") as info:
        pkg.validate_plan(plan)
    assert info.value.exit_status == 3
