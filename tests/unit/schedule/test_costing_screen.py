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
from npuplan.schedule.pricing.costing import cost_op, least_cycles

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
    for i, plan, slack in _cases(net, shared, rows):
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


@pytest.mark.parametrize("optimise", [Optimise.PERFORMANCE, Optimise.SIZE])
@pytest.mark.parametrize("rows", [None, 4, 1])
@pytest.mark.parametrize("config", [("ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram"),
                                    ("ethos-u65-256", "Ethos_U65_High_End", "Dedicated_Sram")])
def test_least_cycles_is_a_lower_bound_of_every_plan(optimise: Optimise, rows: int | None,
                                                     config: tuple[str, str, str]) -> None:
    # ``least_cycles`` asked before any costing (from the screens and the weight DMA wait alone)
    # is at most the costing's cycles, for every weight plan and slack, and equals them once the
    # costing is memoised; it is not vacuous: within 10% for the whole weights read in place
    accelerator, system, mode = config
    options = PlanOptions(accelerator_config=accelerator, system_config=system, memory_mode=mode)
    net = build_network(conv_chain([(8, 1), (64, 2), (96, 1), (16, 1)], h=24, w=24))
    arch = build_architecture(options)
    oracle = default_oracle(arch, optimise=optimise)
    dec = max_decisions(net, arch)
    for i, plan, slack in _cases(net, oracle, rows):
        args = dict(weights=plan, prev_slack_cycles=slack, rows=rows)
        bound = least_cycles(net, dec, arch, oracle, i, **args)  # type: ignore[arg-type]
        cycles = cost_op(net, dec, arch, oracle, i, **args).cycles  # type: ignore[arg-type]
        assert bound <= cycles
        assert least_cycles(net, dec, arch, oracle, i, **args) == cycles  # type: ignore[arg-type]
        if plan is NO_WEIGHT_BUFFER:
            assert bound >= 0.9 * cycles - 1


def _cases(net, oracle, rows):  # type: ignore[no-untyped-def]
    """(op index, weight plan, slack) for every op, candidate weight plan (plain and prebuffered) and slack."""
    for i, op in enumerate(net.npu_ops):
        block = oracle.block_config(op, op.ofm_shape.with_h(min(rows or op.ofm_shape.h, op.ofm_shape.h)))
        plans = [NO_WEIGHT_BUFFER] + [p for plan in weights.candidate_plans(op, block, oracle)
                                      for p in (plan, replace(plan, prebuffer=True))]
        for plan in plans:
            for slack in (0, 400, 10**6):
                yield i, plan, slack
