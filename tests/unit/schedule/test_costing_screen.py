"""``costing``'s block screen is memoised per op context and weight-plan shape
(``CostOracle.screened``): the weight plans of one op share a screening, and a costing made with a
shared screen is the one an oracle that never saw the other plans makes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from npuplan.hw import build_architecture
from npuplan.options import Optimise, PlanOptions
from npuplan.schedule.model.decisions import NO_WEIGHT_BUFFER, max_decisions
from npuplan.schedule.model.network import build_network
from npuplan.schedule.moves import weights
from npuplan.schedule.pricing.cost_adapter import default_oracle
from npuplan.schedule.pricing.costing import cost_op

from .chains import conv_chain

OPTIONS = PlanOptions(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                      memory_mode="Shared_Sram")


@pytest.mark.parametrize("optimise", [Optimise.PERFORMANCE, Optimise.SIZE])
@pytest.mark.parametrize("rows", [None, 4])
def test_a_shared_screen_costs_as_a_fresh_one(optimise: Optimise, rows: int | None) -> None:
    net = build_network(conv_chain([(8, 1), (64, 2), (96, 1), (16, 1)], h=24, w=24))
    arch = build_architecture(OPTIONS)
    shared = default_oracle(arch, optimise=optimise)
    dec = max_decisions(net, arch)
    costings = 0
    for i, op in enumerate(net.npu_ops):
        block = shared.block_config(op, op.ofm_shape.with_h(min(rows or op.ofm_shape.h, op.ofm_shape.h)))
        plans = [NO_WEIGHT_BUFFER] + [p for plan in weights.candidate_plans(op, block, shared)
                                      for p in (plan, replace(plan, prebuffer=True))]
        for plan in plans:
            for slack in (0, 400, 10**6):
                got = cost_op(net, dec, arch, shared, i, weights=plan, prev_slack_cycles=slack, rows=rows)
                fresh = default_oracle(arch, optimise=optimise)
                want = cost_op(net, dec, arch, fresh, i, weights=plan, prev_slack_cycles=slack, rows=rows)
                assert (got.block_config, got.cycles, got.slack_cycles) == (want.block_config, want.cycles,
                                                                            want.slack_cycles)
                assert got.cost == want.cost
                costings += 1
    # the plans of one op shared their screenings: far fewer than the costings (whole OFMs have
    # block alternatives to screen here; 4-row stripes may have none)
    assert len(shared.screened) < costings / 4
    assert rows is not None or shared.screened
