"""``costing._cheapest``: the block alternatives it skips by their least cycles change nothing."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import pytest

from npuplan.schedule.pricing.costing import _cheapest


@dataclass(frozen=True)
class _Query:
    block_config: Any = "vela"
    ofm_stripe: Any = None
    ifm_stripe: Any = None
    ifm2_stripe: Any = None


class _Stub:
    """Prices block ``i`` at ``cycles[i]``; records the blocks it prices."""

    def __init__(self, cycles: list[int], vela: int = 7) -> None:
        self._cycles, self._vela, self.priced = cycles, vela, []

    def op_cost(self, query):
        self.priced.append(query.block_config)
        return self._vela if query.block_config == "vela" else self._cycles[query.block_config]

    def cycles(self, cost) -> int:
        return cost


@pytest.mark.parametrize("cycles", list(itertools.product((5, 7, 9), repeat=3)))
@pytest.mark.parametrize("slack", [0, 1, 3])
def test_the_first_of_the_cheapest_is_kept(cycles, slack):
    # least cycles at most the price (``slack`` below it, not below 0): the same choice as pricing
    # every block in order and keeping the first of the cheapest, Vela's block (index -1) first
    screened = [(max(7 - slack, 0), -1, "vela"), *((max(c - slack, 0), i, i) for i, c in enumerate(cycles))]
    chosen = _cheapest(_Stub(list(cycles)), _Query(), screened)
    everything = ["vela", 0, 1, 2]
    assert chosen.block_config == everything[min(range(4), key=lambda i: [7, *cycles][i])]


def test_blocks_that_cannot_win_are_not_priced():
    # the cheapest alternative (least 4) is priced first; the others' least cycles, Vela's block's
    # too, are not below it: Vela's block is not priced either
    stub = _Stub([9, 4, 6, 5])
    chosen = _cheapest(stub, _Query(), [(6, -1, "vela"), (8, 0, 0), (4, 1, 1), (4, 2, 2), (5, 3, 3)])
    assert chosen.block_config == 1
    assert stub.priced == [1]  # block 2 ties at 4 but comes after 1, block 3 and Vela's cost at least 5


def test_with_nothing_screened_vela_block_is_priced():
    stub = _Stub([])
    assert _cheapest(stub, _Query(), []).block_config == "vela" and stub.priced == ["vela"]


@pytest.mark.parametrize("fetch", ["none", "single", "double"])
@pytest.mark.parametrize("rows", [25, 8])
def test_the_screen_of_a_block_is_its_costings_parts(fetch, rows):
    # ``CostModelOracle.screen_blocks`` answers from Vela's block's translation: each block's
    # least cycles are at least its full costing's datapath cycles and at most its cycles, its
    # weight reads are its full costing's, and a block is screened out exactly when its full
    # costing reads more weights than allowed
    import dataclasses

    import numpy as np

    from npuplan.hw import build_architecture
    from npuplan.hw.accelerator import Block
    from npuplan.hw.block_config import query_for, try_block_config
    from npuplan.ir.lowered import BlockType, Kernel, NpuOp
    from npuplan.ir.shape import Shape4D
    from npuplan.options import PlanOptions
    from npuplan.schedule.model.geometry import ifm_stripe_for
    from npuplan.schedule.pricing.cost_adapter import CostModelOracle
    from npuplan.schedule.pricing.oracle import StripeQuery

    from .chains import fm

    arch = build_architecture(PlanOptions("ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                                          memory_mode="Shared_Sram"))
    x, out = fm("x", 25, 5, 64), fm("y", 25, 5, 64)
    dw = NpuOp(name="dw", tflite_type="DEPTHWISE_CONV_2D", op_type="DepthwiseConv2DBias",
               block_type=BlockType.DEPTHWISE, ifm=x, ifm_shape=Shape4D.of(x.shape), ofm=out,
               ofm_shape=Shape4D.of(out.shape), kernel=Kernel(3, 3),
               weights=np.random.default_rng(0).integers(-127, 127, (1, 3, 3, 64), dtype=np.int8),
               bias=np.zeros(64, dtype=np.int32))
    oracle = CostModelOracle(arch)
    stripe = dw.ofm_shape.with_h(rows)
    vela = oracle.block_config(dw, stripe)
    blocks = [b for b in (try_block_config(query_for(dw), arch.accelerator, Block(h, 6, d), is_partkernel=False)
                          for h in (2, 5, 9, 14) for d in (16, 32)) if b is not None]
    buffered = fetch != "none"
    query = StripeQuery(
        op=dw, block_config=vela, ofm_stripe=stripe, ifm_stripe=ifm_stripe_for(dw, stripe), ifm2_stripe=None,
        ofm_depth=64, ifm_area=arch.fast_area, ifm2_area=None, ofm_area=arch.fast_area,
        weight_area=arch.fast_area if buffered else arch.const_area, weight_source_area=arch.const_area,
        weight_fetch=fetch, depth_slices=(0, 32, 64) if fetch == "double" else (),
        first_slice_bytes=400 if fetch == "double" else 0)
    full = [oracle.op_cost(dataclasses.replace(query, block_config=b)) for b in blocks]
    reads = sorted({oracle.weight_read_bytes(c) for c in full})
    assert len(reads) > 1
    oracle.op_cost(query)  # costing prices Vela's block first
    for most in (None, *reads):
        screened = oracle.screen_blocks(query, blocks, most_weight_read_bytes=most)
        assert [s is None for s in screened] == [most is not None and oracle.weight_read_bytes(c) > most for c in full]
        for s, c in zip(screened, full):
            if s is not None:
                assert round(c.op_cycles) <= s[0] <= oracle.cycles(c)
                assert s[1] == oracle.weight_read_bytes(c)
