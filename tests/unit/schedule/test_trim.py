"""Peak trimming: fast storage at the peak is given back only where the speed it buys is not real."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import npuplan
from npuplan.hw import build_architecture
from npuplan.options import PlanOptions, Search
from npuplan.schedule.pricing.assemble import total_cycles
from npuplan.schedule.model.network import build_network
from npuplan.schedule.pricing.cost_adapter import default_oracle
from npuplan.schedule.model.limits import Limits
from npuplan.schedule.search.pareto import pareto_decisions
from npuplan.schedule.search.planner import EQUAL_SPEED_FRACTION
from npuplan.schedule.model.usage import peak_bytes
from npuplan.schedule.moves.trim import _meets, _peak_steps, trim_peak

from .chains import conv_chain

SHARED = {"accelerator_config": "ethos-u55-128", "system_config": "Ethos_U55_High_End_Embedded",
          "memory_mode": "Shared_Sram"}


def test_mobilenet_keeps_the_speed_without_the_peak_cascade(data_dir: Path) -> None:
    """The Pareto plan cascades the first block for a fraction of a percent of cycles at a few
    percent more peak: trimming undoes that cascade and keeps the rest of the Pareto plan's speed
    at the cascade search's SRAM."""
    model = data_dir / "mobilenet_v1_025_96.tflite"
    plans = {s: npuplan.plan(model, search=s, **SHARED) for s in ("cascade", "pareto")}
    cycles = {s: sum(float(o.cost.total_cycles) for o in p.schedule.ops) for s, p in plans.items()}
    assert plans["pareto"].sram_memory_used_bytes <= plans["cascade"].sram_memory_used_bytes
    assert cycles["pareto"] <= cycles["cascade"]  # (equal once a prefetch needs its source memory free)
    # (whether a cascade is left to trim depends on the prices; trimming itself: the property below)


@settings(max_examples=12, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(layers=st.lists(st.tuples(st.sampled_from([8, 16, 32]), st.sampled_from([1, 2])), min_size=2, max_size=4),
       size=st.sampled_from([16, 32]), slack=st.sampled_from([0.0, EQUAL_SPEED_FRACTION, 0.2]))
def test_trimming_lowers_the_peak_within_the_bound(layers, size, slack) -> None:  # type: ignore[no-untyped-def]
    options = PlanOptions(**SHARED, search=Search.PARETO)  # type: ignore[arg-type]
    arch = build_architecture(options)
    oracle = default_oracle(arch)
    net = build_network(conv_chain(layers, h=size, w=size))
    dec = pareto_decisions(net, arch, options, oracle, Limits(1 << 24))
    if dec is None:
        return
    cycles = total_cycles(net, dec, arch, oracle)
    bound = cycles * (1 + slack)
    trimmed = trim_peak(net, dec, arch, oracle, bound)
    if trimmed == dec:
        return
    after = total_cycles(net, trimmed, arch, oracle)
    assert peak_bytes(net, trimmed) < peak_bytes(net, dec)
    assert after <= bound
    # never more cycles, relatively, than the peak bytes it gives back
    assert (after - cycles) / cycles < 1 - peak_bytes(net, trimmed) / peak_bytes(net, dec)


def test_buffering_every_op_s_weights_is_not_trimmed_back(data_dir: Path) -> None:
    """``buffer_weights`` (Vela-comparable plans) copies the weights of the ops that read them in
    place by choice (the first six convolutions here, whose copy no earlier op hides), and keeps
    them: the peak trimming, which could give them back, is not run (an op in a cascade may still
    read its weights in place: "cascades where faster" is proposed at every budget)."""
    model = data_dir / "mobilenet_v1_025_96.tflite"
    plans = {always: npuplan.plan(model, search="cascade", buffer_weights=always, **SHARED) for always in (False, True)}
    modes = {always: [o.weight_buffering.value for o in p.schedule.ops if o.op.weights is not None]
             for always, p in plans.items()}
    alone = [o.weight_buffering.value for o in plans[True].schedule.ops[:-1]
             if o.op.weights is not None and o.cascade_id < 0]
    assert modes[False][:6] == ["none"] * 6 and "none" not in alone and len(alone) > 20
    assert sum(m != "none" for m in modes[True]) > sum(m != "none" for m in modes[False])
    assert "peak trimmed" not in plans[True].schedule.notes


def test_a_span_meets_the_peak_steps_when_one_lies_inside_it() -> None:
    steps, peak = _peak_steps([1, 5, 2, 5, 5, 0])
    assert (steps, peak) == ([1, 3, 4], 5)
    assert [_meets(steps, a, b) for a, b in ((0, 0), (0, 1), (2, 2), (2, 3), (5, 9), (4, 4), (0, 9))] == [
        False, True, False, True, False, True, True]
    assert not _meets([], 0, 9)
