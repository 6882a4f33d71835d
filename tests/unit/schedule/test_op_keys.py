"""The costing memo keys ops by value: equal ops built apart (two lowerings of one model) share
their costings; any difference in a field, a tensor or an array splits them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from npuplan.hw import build_architecture
from npuplan.options import Optimise, PlanOptions
from npuplan.schedule import plan_schedule
from npuplan.schedule.pricing.cost_adapter import default_oracle
from npuplan.schedule.pricing.op_keys import OpKeys

from .chains import conv, conv_chain, fm

LAYERS = [(16, 1), (32, 2), (32, 1)]


def test_equal_ops_built_apart_share_a_key() -> None:
    keys = OpKeys()
    a = conv("t0", fm("in", 16, 16, 8), fm("t0", 16, 16, 16), seed=3)
    b = conv("t0", fm("in", 16, 16, 8), fm("t0", 16, 16, 16), seed=3)
    assert a is not b and a.ifm is not b.ifm
    assert keys.key(a) == keys.key(b)


def test_any_difference_splits_the_keys() -> None:
    keys = OpKeys()
    base = conv("t0", fm("in", 16, 16, 8), fm("t0", 16, 16, 16), seed=3)
    other_weights = base.weights.copy()
    other_weights[0, 0, 0, 0] ^= 1
    variants = [
        conv("t0", fm("in", 16, 16, 8), fm("t0", 16, 16, 16), seed=4),  # other weight values
        replace(base, weights=other_weights),
        replace(base, bias=np.ones_like(base.bias)),
        replace(base, name="t1"),
        replace(base, ofm=fm("t0b", 16, 16, 16)),  # another tensor name
        replace(base, ofm_write_offset=base.ofm_shape.with_h(0)),
    ]
    found = {keys.key(op) for op in variants}
    assert keys.key(base) not in found and len(found) == len(variants)


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
