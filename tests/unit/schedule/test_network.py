"""The scheduler's view of a lowered graph: facts derived from it once."""

from __future__ import annotations

from npuplan.schedule.model.network import Network, build_network

from .chains import conv_chain


def _ops_named(net: Network) -> tuple[str, ...]:
    return tuple(op.name for op in net.npu_ops)


def test_a_derived_fact_is_worked_out_once_per_network() -> None:
    graph = conv_chain([(8, 1), (16, 1), (8, 2)])
    calls: list[Network] = []

    def count_ops(net: Network) -> int:
        calls.append(net)
        return len(net.npu_ops)

    first, second = build_network(graph), build_network(graph)
    assert [first.derived(count_ops), first.derived(count_ops), second.derived(count_ops)] == [3, 3, 3]
    assert len(calls) == 2 and calls[0] is first and calls[1] is second
    assert first.derived(_ops_named) == tuple(op.name for op in graph.ops)  # one memo per function
