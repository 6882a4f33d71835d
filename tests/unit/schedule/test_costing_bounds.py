"""``costing._cheapest``: the block alternatives it skips by their least cycles change nothing."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest

from npuplan.schedule.pricing.costing import _cheapest
from npuplan.schedule.pricing.oracle import Costed


class _Stub:
    """Prices query ``i`` at ``cycles[i]`` with least cycles ``least[i]``; records what it prices."""

    def __init__(self, cycles: list[int], least: list[int]) -> None:
        self._cycles, self._least, self.priced = cycles, least, []

    def least_cycles(self, query) -> int:
        return self._least[query.block_config]

    def op_cost(self, query):
        self.priced.append(query.block_config)
        return self._cycles[query.block_config]

    def cycles(self, cost) -> int:
        return cost


def _queries(n: int) -> list[SimpleNamespace]:
    return [SimpleNamespace(block_config=i, ofm_stripe=None, ifm_stripe=None, ifm2_stripe=None) for i in range(n)]


def _first(cycles: int) -> Costed:
    return Costed("vela", None, None, None, cycles, cycles, cycles)


@pytest.mark.parametrize("cycles", [c for c in itertools.product((5, 7, 9), repeat=3)])
@pytest.mark.parametrize("slack", [0, 1, 3])
def test_the_first_of_the_cheapest_is_kept(cycles, slack):
    # least cycles at most the price (``slack`` below it, not below 0): the same choice as pricing
    # every block in order and keeping the first of the cheapest, Vela's block first
    stub = _Stub(list(cycles), [max(c - slack, 0) for c in cycles])
    chosen = _cheapest(stub, _first(7), _queries(3))
    everything = [_first(7).block_config, 0, 1, 2]
    expected = everything[min(range(4), key=lambda i: [7, *cycles][i])]
    assert chosen.block_config == expected


def test_blocks_that_cannot_win_are_not_priced():
    # the cheapest alternative (least 4) is priced first; the others' least cycles are not below it
    stub = _Stub([9, 4, 6, 5], [8, 4, 4, 5])
    chosen = _cheapest(stub, _first(7), _queries(4))
    assert chosen.block_config == 1
    assert stub.priced == [1]  # query 2 ties at 4 but comes after 1, query 3 costs at least 5
