"""``costing.cost_op`` keeps one costing for every previous-op slack where the oracle's costing
does not read it (``CostOracle.reads_prev_slack``): the answers must be the ones the oracle gives
when asked with each slack."""

from __future__ import annotations

from dataclasses import replace

import pytest

from npuplan.hw import build_architecture
from npuplan.options import PlanOptions
from npuplan.schedule.model.decisions import NO_WEIGHT_BUFFER, max_decisions
from npuplan.schedule.model.network import build_network
from npuplan.schedule.moves import weights
from npuplan.schedule.pricing.cost_adapter import default_oracle
from npuplan.schedule.pricing.costing import cost_op
from npuplan.schedule.pricing.estimate_oracle import EstimateOracle
from npuplan.schedule.pricing.oracle import CostOracle, MemoOracle

from .chains import conv_chain

OPTIONS = PlanOptions(accelerator_config="ethos-u55-256", system_config="Ethos_U55_High_End_Embedded",
                      memory_mode="Shared_Sram")
SLACKS = (0, 50, 300, 3000, 10**9)


class _EverySlack:
    """An oracle whose costings all read the slack: ``cost_op`` memoises each slack on its own."""

    def __init__(self, inner: CostOracle) -> None:
        self._inner = inner
        self.costed: dict = {}

    def reads_prev_slack(self, *args: object, **kwargs: object) -> bool:
        return True

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)


@pytest.mark.parametrize("estimate", [False, True])
def test_a_costing_kept_for_every_slack_is_the_one_each_slack_gives(estimate: bool) -> None:
    net = build_network(conv_chain([(8, 1), (64, 2), (256, 2), (16, 1)], h=32, w=32))
    arch = build_architecture(OPTIONS)
    oracle = MemoOracle(EstimateOracle(arch)) if estimate else default_oracle(arch)
    reference = _EverySlack(oracle)
    dec = max_decisions(net, arch)
    shared = read = 0
    for i, op in enumerate(net.npu_ops):
        block = oracle.block_config(op, op.ofm_shape)
        plans = [NO_WEIGHT_BUFFER] + [p for plan in weights.candidate_plans(op, block, oracle)
                                      for p in (plan, replace(plan, prebuffer=True))]
        for plan in plans:
            for slack in SLACKS:
                got = cost_op(net, dec, arch, oracle, i, weights=plan, prev_slack_cycles=slack)
                want = cost_op(net, dec, arch, reference, i, weights=plan, prev_slack_cycles=slack)  # type: ignore[arg-type]
                assert (got.cycles, got.slack_cycles, got.cost) == (want.cycles, want.slack_cycles, want.cost)
            reads = oracle.reads_prev_slack(op, weight_fetch=str(plan.buffering), weight_prefetched=plan.prebuffer,
                                            lut_prefetched=False, loads_table=False)
            shared += not reads
            read += reads
    # both kinds were asked for, and a prefetched buffered plan's slack does change its cost
    assert shared > 0 and read > 0
    op = net.npu_ops[2]
    plan = replace(weights.candidate_plans(op, oracle.block_config(op, op.ofm_shape), oracle)[0], prebuffer=True)
    assert len({cost_op(net, dec, arch, oracle, 2, weights=plan, prev_slack_cycles=s).cycles for s in SLACKS}) > 1
