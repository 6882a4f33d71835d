"""Every stream generated from a valid hand-built schedule validates; dropping a stripe never does."""

from __future__ import annotations

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from npuplan.commands import NpuStripeCommand, build_command_stream, plan_addresses, validate
from npuplan.schedule.model.types import WeightBuffering

from bench.command_graphs import OpChoice, arch, chain, diamond, hand_schedule

TARGET = arch()
LAYER = st.tuples(st.sampled_from([8, 16, 24, 40]), st.sampled_from([1, 3, 5]), st.sampled_from([1, 1, 2]))
CHOICE = st.sampled_from([
    OpChoice(), OpChoice(WeightBuffering.FULL), OpChoice(WeightBuffering.SINGLE, 16),
    OpChoice(WeightBuffering.DOUBLE, 16), OpChoice(WeightBuffering.DOUBLE, 16, prebuffer=True),
    OpChoice(WeightBuffering.SINGLE, 8, prebuffer=True),
])


@st.composite
def chain_plans(draw):
    layers = draw(st.lists(LAYER, min_size=1, max_size=5))
    graph = chain(layers, h=draw(st.integers(4, 24)), w=draw(st.integers(1, 8)), c=draw(st.sampled_from([3, 8, 16])))
    n = len(layers)
    cascades = []
    if n >= 2 and draw(st.booleans()):
        first = draw(st.integers(0, n - 2))
        last = draw(st.integers(first + 1, n - 1))
        final = draw(st.integers(1, graph.ops[last].ofm_shape.h))
        cascades.append((first, last, final))
    in_cascade = {k for a, b, _ in cascades for k in range(a, b + 1)}
    weights = {}
    for k, op in enumerate(graph.ops):
        choice = draw(CHOICE)
        if k in in_cascade:  # inside a cascade weights are kept whole
            choice = OpChoice(WeightBuffering.FULL) if choice.buffering is not WeightBuffering.NONE else OpChoice()
        weights[op.name] = choice
    return graph, hand_schedule(graph, cascades=cascades, weights=weights)


@st.composite
def diamond_plans(draw):
    graph = diamond(h=draw(st.integers(3, 16)), w=draw(st.integers(1, 6)), k_left=draw(st.sampled_from([1, 3, 5])),
                    k_right=draw(st.sampled_from([1, 3])))
    cascades = [(3, 4, draw(st.integers(1, graph.ops[4].ofm_shape.h)))] if draw(st.booleans()) else []
    weights = {graph.ops[k].name: draw(CHOICE) for k in (0, 1, 2)}
    return graph, hand_schedule(graph, cascades=cascades, weights=weights)


def _stream(graph, schedule):
    addresses = plan_addresses(schedule, graph, TARGET)
    return build_command_stream(schedule, graph, TARGET, addresses), addresses


@seed(4)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(chain_plans(), diamond_plans()))
def test_streams_of_valid_schedules_validate(plan) -> None:
    graph, schedule = plan
    commands, addresses = _stream(graph, schedule)
    assert validate(commands, graph, TARGET, addresses, sram_limit_bytes=1 << 30) == []


@seed(5)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(chain_plans(), diamond_plans()), st.integers(0, 10_000))
def test_a_dropped_stripe_is_always_caught(plan, pick) -> None:
    graph, schedule = plan
    commands, addresses = _stream(graph, schedule)
    stripes = [k for k, c in enumerate(commands) if isinstance(c, NpuStripeCommand)]
    k = stripes[pick % len(stripes)]
    assert validate(commands[:k] + commands[k + 1:], graph, TARGET, addresses, sram_limit_bytes=1 << 30)


def _round_trip(commands):
    """The stream through the plan JSON's tables and back (as ``npuplan validate PLAN.json`` reads it)."""
    import json

    from npuplan.commands.serial import buffer_layouts, command_stream_json, layout_json, read_command_stream, read_layouts

    table = {name: layout_json(layout) for name, layout in buffer_layouts(commands).items()}
    text = json.dumps({"buffers": table, "commands": command_stream_json(commands)})
    document = json.loads(text)
    return read_command_stream(document["commands"], read_layouts([document["buffers"]]))


@seed(6)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(chain_plans(), diamond_plans()), st.integers(0, 10_000))
def test_streams_read_back_from_json_replay_the_same(plan, pick) -> None:
    graph, schedule = plan
    commands, addresses = _stream(graph, schedule)
    read, read_addresses = _round_trip(commands)
    assert read == commands and read_addresses == {n: a for n, a in addresses.items() if n in read_addresses}
    assert validate(read, graph, TARGET, read_addresses, sram_limit_bytes=1 << 30) == []
    stripes = [k for k, c in enumerate(read) if isinstance(c, NpuStripeCommand)]
    k = stripes[pick % len(stripes)]
    assert validate(read[:k] + read[k + 1:], graph, TARGET, read_addresses, sram_limit_bytes=1 << 30)
