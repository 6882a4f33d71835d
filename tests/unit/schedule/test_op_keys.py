"""The costing memo keys ops by their costing signature: equal ops built apart (two lowerings of
one model) and ops that differ only in what no costing reads (names, quantization values, weight
values) share their costings; any difference in what it reads splits them, and weights read in
place count by their encoded bytes."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from npuplan.hw import build_architecture
from npuplan.hw.memory import Architecture
from npuplan.ir.lowered import Activation, Kernel, LoweredGraph, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import Quantization
from npuplan.options import Optimise, PlanOptions
from npuplan.schedule import plan_schedule
from npuplan.schedule.model.decisions import NO_WEIGHT_BUFFER, max_decisions
from npuplan.schedule.model.network import build_network
from npuplan.schedule.pricing.cost_adapter import CostModelOracle, default_oracle
from npuplan.schedule.pricing.costing import cost_op
from npuplan.schedule.pricing.op_keys import OpKeys
from npuplan.schedule.pricing.oracle import MemoOracle

from .chains import conv, conv_chain, fm

LAYERS = [(16, 1), (32, 2), (32, 1)]
PERFORMANCE = PlanOptions(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                          memory_mode="Shared_Sram")


def test_equal_ops_built_apart_share_a_key() -> None:
    keys = OpKeys()
    a = conv("t0", fm("in", 16, 16, 8), fm("t0", 16, 16, 16), seed=3)
    b = conv("t0", fm("in", 16, 16, 8), fm("t0", 16, 16, 16), seed=3)
    assert a is not b and a.ifm is not b.ifm
    assert keys.key(a) == keys.key(b)


def test_what_no_costing_reads_shares_a_key() -> None:
    keys = OpKeys()
    base = conv("t0", fm("in", 16, 16, 8), fm("t0", 16, 16, 16), seed=3)
    quant = Quantization((0.5,), (3,))
    variants = [
        conv("t0", fm("in", 16, 16, 8), fm("t0", 16, 16, 16), seed=4),  # other weight values
        replace(base, bias=np.ones_like(base.bias)),
        replace(base, name="t1", source_index=7),
        replace(base, ofm=fm("t0b", 16, 16, 16)),  # another tensor name
    ]
    assert {keys.key(op) for op in variants} == {keys.key(base)}
    a = replace(base, ofm=replace(base.ofm, quant=quant))
    b = replace(base, ofm=replace(base.ofm, quant=Quantization((0.25,), (-1,))))
    assert keys.key(a) == keys.key(b) != keys.key(base)  # quantized or not splits them (block configs read it)


def test_what_the_costing_reads_splits_the_keys() -> None:
    keys = OpKeys()
    base = conv("t0", fm("in", 16, 16, 8), fm("t0", 16, 16, 16), seed=3)
    variants = [
        replace(base, ofm_write_offset=base.ofm_shape.with_h(0)),
        replace(base, kernel=Kernel(3, 3, 2, 2)),
        replace(base, activation=Activation.RELU),
        replace(base, weights=base.weights.astype(np.int16)),
        replace(base, weights=None),
        conv("t0", fm("in", 16, 16, 8), fm("t0", 16, 16, 32), seed=3),  # another OFM depth
    ]
    found = {keys.key(op) for op in variants}
    assert keys.key(base) not in found and len(found) == len(variants)


@pytest.mark.parametrize("optimise", [Optimise.PERFORMANCE, Optimise.SIZE])
def test_weights_read_in_place_count_by_their_encoded_bytes(optimise: Optimise) -> None:
    """The middle two of four convs of one signature, the third with all-zero weights (a short
    stream), in the same context: read in place, each costs what an oracle that never saw the
    other costs, and they cost differently."""
    ops = [conv("a", fm("in", 16, 16, 16), fm("a", 16, 16, 16), seed=1)]
    for name, seed in (("b", 2), ("c", 3), ("d", 4)):
        ops.append(conv(name, ops[-1].ofm, fm(name, 16, 16, 16), seed=seed))
    ops[2] = replace(ops[2], weights=np.zeros_like(ops[2].weights))
    net = build_network(LoweredGraph("four", tuple(ops), (ops[0].ifm,), (ops[-1].ofm,)))
    arch = build_architecture(PERFORMANCE)
    shared = default_oracle(arch, optimise=optimise)
    assert shared.op_keys.key(ops[1]) == shared.op_keys.key(ops[2])
    dec = max_decisions(net, arch)
    for rows in (None, 4):
        got = [cost_op(net, dec, arch, shared, i, weights=NO_WEIGHT_BUFFER, rows=rows) for i in (1, 2)]
        want = [cost_op(net, dec, arch, default_oracle(arch, optimise=optimise), i, weights=NO_WEIGHT_BUFFER,
                        rows=rows) for i in (1, 2)]
        assert [g.cost for g in got] == [w.cost for w in want]
        assert got[0].cost != got[1].cost


def test_a_second_lowering_plans_from_the_first_ones_costings() -> None:
    options = PlanOptions(accelerator_config="ethos-u55-64", system_config="Ethos_U55_Deep_Embedded",
                          memory_mode="Shared_Sram", optimise=Optimise.SIZE)
    arch = build_architecture(options)
    oracle = default_oracle(arch)
    first = plan_schedule(conv_chain(LAYERS), arch, options, oracle=oracle)
    costed = len(oracle.costed)
    second = plan_schedule(conv_chain(LAYERS), arch, options, oracle=oracle)  # equal ops, new objects
    assert len(oracle.costed) == costed
    assert second.total_npu_cycles == first.total_npu_cycles
    assert [s.npu_cycles for s in second.ops] == [s.npu_cycles for s in first.ops]


def test_block_configs_are_searched_once_per_signature() -> None:
    """``MemoOracle`` asks its inner oracle for the block config of each signature and stripe once:
    two convs differing in names and weights share it."""
    inner = _Counting(build_architecture(PERFORMANCE))
    memo = MemoOracle(inner)
    a = conv("a", fm("in", 16, 16, 16), fm("a", 16, 16, 16), seed=1)
    b = conv("b", a.ofm, fm("b", 16, 16, 16), seed=2)
    wider = conv("c", fm("in", 16, 16, 16), fm("c", 16, 16, 32), seed=3)
    found = [memo.block_config(op, op.ofm_shape) for op in (a, b, wider, b)]
    assert inner.asked == ["a", "c"] and found[0] is found[1] is found[3]


class _Counting(CostModelOracle):
    """The cost model's oracle, naming each op it is asked a block config for."""

    def __init__(self, arch: Architecture) -> None:
        super().__init__(arch)
        self.asked: list[str] = []

    def block_config(self, op: NpuOp, ofm_stripe: Shape4D) -> Any:
        self.asked.append(op.name)
        return super().block_config(op, ofm_stripe)
