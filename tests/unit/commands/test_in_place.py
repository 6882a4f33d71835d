"""An elementwise OFM written over the input it reads shares that input's buffer; nothing else may."""

from __future__ import annotations

from dataclasses import replace

from npuplan.commands import Address, ViolationKind, build_command_stream, plan_addresses, validate

from tests.unit.commands.graphs import arch, chain, diamond, hand_schedule


def _check(graph, schedule, addresses):  # type: ignore[no-untyped-def]
    target = arch()
    commands = build_command_stream(schedule, graph, target, addresses)
    return validate(commands, graph, target, addresses)


def test_an_aliased_elementwise_output_gets_its_input_address_and_validates() -> None:
    graph = diamond()
    plain = hand_schedule(graph)
    aliased = replace(plain, buffer_aliases=(("sum", "left"),))
    addresses = plan_addresses(aliased, graph, arch())
    assert addresses["sum"].offset == addresses["left"].offset
    assert max(a.offset + a.size_bytes for a in addresses.values() if a.area == addresses["sum"].area) <= max(
        a.offset + a.size_bytes for a in plan_addresses(plain, graph, arch()).values() if a.area == addresses["sum"].area)
    assert _check(graph, aliased, addresses) == []


def test_an_elementwise_output_shifted_16_bytes_into_its_input_is_caught() -> None:
    graph = diamond()
    schedule = hand_schedule(graph)
    addresses = dict(plan_addresses(schedule, graph, arch()))
    left = addresses["left"]
    addresses["sum"] = Address(left.area, left.offset + 16, addresses["sum"].size_bytes)
    found = _check(graph, schedule, addresses)
    assert any(v.kind is ViolationKind.OVERLAP and v.tensor in ("sum", "left") for v in found)


def test_a_convolution_writing_over_its_input_is_caught() -> None:
    graph = chain([(8, 3, 1), (8, 3, 1)])  # conv1's OFM has conv0's shape, but a conv reads neighbours
    schedule = replace(hand_schedule(graph), buffer_aliases=(("conv1", "conv0"),))
    addresses = plan_addresses(schedule, graph, arch())
    assert addresses["conv1"].offset == addresses["conv0"].offset
    found = _check(graph, schedule, addresses)
    assert any(v.kind is ViolationKind.OVERLAP for v in found)
