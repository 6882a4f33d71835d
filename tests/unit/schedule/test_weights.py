"""Weight plans: choosing one leaves uncosted the plans that can never come first, and chooses as
costing every plan would."""

from __future__ import annotations

from dataclasses import replace

import pytest

from npuplan.hw import build_architecture
from npuplan.hw.memory import Architecture
from npuplan.options import PlanOptions
from npuplan.schedule.moves import weights
from npuplan.schedule.moves.choice_memo import ChoiceMemo
from npuplan.schedule.pricing.costing import cost_op
from npuplan.schedule.model.decisions import NO_WEIGHT_BUFFER, Decisions, WeightPlan
from npuplan.schedule.model.network import Network, build_network
from npuplan.schedule.pricing.cost_adapter import default_oracle
from npuplan.schedule.pricing.estimate_oracle import EstimateOracle
from npuplan.schedule.pricing.oracle import CostOracle, MemoOracle
from npuplan.schedule.model.types import WeightBuffering
from npuplan.schedule.model.decisions import max_decisions

from .chains import conv_chain

# weights in flash, so every conv may buffer them
OPTIONS = PlanOptions(accelerator_config="ethos-u55-256", system_config="Ethos_U55_High_End_Embedded",
                      memory_mode="Shared_Sram")
# compute-bound convs (wide maps, few channels) and weight-bound ones (small maps, many channels)
LAYERS = [(8, 1), (16, 1), (32, 2), (128, 2), (256, 2), (16, 1), (192, 1)]
SLACKS = (0, 300, 3000, 10**9)


def _setup() -> tuple[Network, Architecture, list[Decisions]]:
    net = build_network(conv_chain(LAYERS, h=48, w=48))
    arch = build_architecture(OPTIONS)
    whole = max_decisions(net, arch)
    striped = replace(whole, ofm_rows=tuple(max(op.ofm_shape.h // 4, 1) for op in net.npu_ops))
    return net, arch, [whole, striped, replace(whole, fast_fms=frozenset())]


def _oracle(arch: Architecture, estimate: bool) -> CostOracle:
    return MemoOracle(EstimateOracle(arch)) if estimate else default_oracle(arch)


def _every_plan(net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, i: int,
                slack: int) -> list[tuple[int, int, int, WeightPlan]]:
    """Reading in place, then each candidate plan and its prebuffered variant, all costed, in the
    order the choice breaks ties by: ``(cycles, bytes ranked by, bytes held, plan)``."""
    op = net.npu_ops[i]
    block = oracle.block_config(op, op.ofm_shape.with_h(min(dec.ofm_rows[i], op.ofm_shape.h)))
    found = [(cost_op(net, dec, arch, oracle, i, weights=NO_WEIGHT_BUFFER, prev_slack_cycles=slack).cycles, 0, 0,
              NO_WEIGHT_BUFFER)]
    for plan in weights.candidate_plans(op, block, oracle):
        held = weights.held_bytes(plan)
        found.append((cost_op(net, dec, arch, oracle, i, weights=plan).cycles, plan.buffer_bytes, held, plan))
        if i > 0:
            ahead = replace(plan, prebuffer=True)
            cycles = cost_op(net, dec, arch, oracle, i, weights=ahead, prev_slack_cycles=slack).cycles
            found.append((cycles, plan.buffer_bytes * 2, held, ahead))
    return found


def _best(every: list[tuple[int, int, int, WeightPlan]], room: int, prev_room: int) -> WeightPlan:
    fits = [(s[0], s[1], k, s[3]) for k, s in enumerate(every)
            if k == 0 or (s[2] <= room and (not s[3].prebuffer or s[2] <= prev_room))]
    return min(fits, key=lambda f: f[:3])[3]


@pytest.mark.parametrize("estimate", [False, True])
def test_every_plan_left_uncosted_costs_no_less_than_one_ranked_before_it(estimate: bool) -> None:
    """``_ranked`` leaves a plan uncosted where its ``least_cycles`` reach reading in place (or,
    prebuffered, the same plan read without prefetch): costed in full, each of those plans costs at
    least that much, so it could never be chosen."""
    net, arch, decisions = _setup()
    oracle = _oracle(arch, estimate)
    memo = ChoiceMemo()
    skipped = 0
    for dec in decisions:
        for i in range(len(net.npu_ops)):
            for slack in SLACKS:
                every = _every_plan(net, dec, arch, oracle, i, slack)
                ranked = {s[3] for _, s in weights._scored(net, dec, arch, oracle, i, slack, memo)}
                plain = {s[3]: s[0] for s in every if not s[3].prebuffer}
                for cycles, _, _, plan in every[1:]:
                    if plan not in ranked:
                        skipped += 1
                        beaten = min(every[0][0], plain[replace(plan, prebuffer=False)]) if plan.prebuffer else every[0][0]
                        assert cycles >= beaten
    assert skipped > 0


@pytest.mark.parametrize("estimate", [False, True])
def test_the_choice_is_the_one_costing_every_plan_gives(estimate: bool) -> None:
    net, arch, decisions = _setup()
    oracle = _oracle(arch, estimate)
    memo = ChoiceMemo()
    usage = [0] * (max(net.times) + 1)
    uncosted = buffered = 0
    for dec in decisions:
        for i in range(len(net.npu_ops)):
            for slack in SLACKS:
                every = _every_plan(net, dec, arch, oracle, i, slack)
                ranked = weights._scored(net, dec, arch, oracle, i, slack, memo)
                uncosted += len(every) - len(ranked)
                buffered += _best(every, 10**9, 10**9) is not NO_WEIGHT_BUFFER
                rooms = sorted({0, 10**9} | {s[2] + d for s in every for d in (-1, 0)})
                for room in rooms:
                    for prev_room in (-1, room, 10**9) if i > 0 else (-1,):
                        at = usage[:]  # nothing held at op i; room - prev_room held at op i-1
                        if i > 0:
                            at[net.times[i - 1]] = room - prev_room
                        chosen = weights._choose(net, dec, arch, oracle, i, at, room, slack, memo)
                        assert chosen == _best(every, room, prev_room)
    assert uncosted > 0 and buffered > 0  # both paths were taken


def test_always_buffering_copies_every_op_s_weights_that_fit_even_where_reading_in_place_is_faster() -> None:
    """``buffer_weights`` (Vela's habit, for Vela-comparable plans): the first conv, with no slack
    before it to hide the copy in, reads its weights in place by choice, and copies them when always
    buffering; with no room, nothing is buffered either way."""
    net, arch, decisions = _setup()
    oracle = default_oracle(arch)
    dec = decisions[0]
    chosen = weights.propose_weight_buffering(net, dec, arch, oracle, 10**9)
    always = weights.propose_weight_buffering(net, dec, arch, oracle, 10**9, always=True)
    assert chosen.weights[0] is NO_WEIGHT_BUFFER and always.weights[0] is not NO_WEIGHT_BUFFER
    assert all(w is not NO_WEIGHT_BUFFER for w in always.weights)
    none = weights.propose_weight_buffering(net, dec, arch, oracle, 0, always=True)
    assert all(w is NO_WEIGHT_BUFFER for w in none.weights)


def test_always_buffering_fetches_whole_weights_under_enough_slack_and_leaves_the_next_op_its_cycles() -> None:
    """As Vela: an op whose whole weights copy within the previous op's slack takes them in one buffer
    (slicing them would cost no fewer cycles but leave the next op only the last slice's cycles to
    hide its own copy in); each op's plan is the fastest after the actual slack, then the one
    leaving the most slack."""
    net, arch, decisions = _setup()
    oracle = default_oracle(arch)
    dec = decisions[0]
    always = weights.propose_weight_buffering(net, dec, arch, oracle, 10**9, always=True)
    slack = 0
    for i in range(2):
        slack = cost_op(net, dec, arch, oracle, i, weights=always.weights[i], prev_slack_cycles=slack).slack_cycles
    # op 2 (24x24x32) is compute-bound and its weights copy within op 1's cycles
    chosen = cost_op(net, dec, arch, oracle, 2, weights=always.weights[2], prev_slack_cycles=slack)
    assert always.weights[2].buffering is WeightBuffering.FULL
    assert chosen.slack_cycles == chosen.cost.op_cycles > slack // 2


def test_fully_connected_weights_are_buffered_whole_where_that_pays() -> None:
    """Vela's default core copies a fully-connected op's weights into fast storage while the op
    before runs (autoencoder_ad, U65-512 Client_Server: 32392 cycles against 47159 reading them
    in place). Whole only: each depth slice of an FC is one more NPU operation re-reading its IFM."""
    from pathlib import Path

    from npuplan.api import plan
    from npuplan.ir.lowered import BlockType

    model = Path(__file__).resolve().parents[2] / "data" / "autoencoder_ad.tflite"
    result = plan(str(model), accelerator_config="ethos-u65-512", system_config="Ethos_U65_High_End",
                  memory_mode="Dedicated_Sram")
    fcs = [s for s in result.schedule.ops if s.op.block_type is BlockType.VECTOR_PRODUCT]
    assert fcs and all(weights.needs_dma(s.op, result.arch) for s in fcs)
    # whether it pays depends on the window under the op before: none where that op streams its own
    # weights from the same DRAM (cost.model.source_free_cycles); whatever is buffered is whole
    assert all(s.weight_buffering in (WeightBuffering.NONE, WeightBuffering.FULL) for s in fcs)
    plans = weights.candidate_plans(fcs[0].op, fcs[0].block_config, default_oracle(result.arch))
    assert [p.buffering for p in plans] == [WeightBuffering.FULL]


def test_an_op_reads_in_place_where_buffering_its_weights_slows_the_next_op_more() -> None:
    """mobilenet_v1_025_96 (u55-128 Performance): double-buffering conv_dw_4's weights saves it 16
    cycles but leaves conv_pw_4 too little slack to copy its own under (248 more); the weight pass
    looks one op ahead (``_looked_ahead``) and reads conv_dw_4's in place."""
    from pathlib import Path

    from npuplan.api import plan

    model = Path(__file__).resolve().parents[2] / "data" / "mobilenet_v1_025_96.tflite"
    result = plan(str(model), accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                  memory_mode="Shared_Sram", optimise="Performance")
    dw, pw = (next(s for s in result.schedule.ops if f"/{name}_relu_1/" in s.op.name) for name in ("conv_dw_4", "conv_pw_4"))
    assert dw.cascade_id == pw.cascade_id == -1
    assert dw.weight_buffering is WeightBuffering.NONE and pw.weight_buffering is WeightBuffering.FULL
