from __future__ import annotations

from dataclasses import replace

from npuplan.errors import InfeasiblePlan
from npuplan.hw import build_architecture
from npuplan.ir.lowered import Padding
from npuplan.options import Optimise, PlanOptions
from npuplan.schedule import BufferMode, plan_schedule
from npuplan.schedule.moves.cascades import chains, stripe_candidates
from npuplan.schedule.model.network import build_network

from .chains import conv_chain

LAYERS = [(16, 1), (32, 1), (32, 2), (32, 1), (64, 2)]


def _options(budget: int | None, optimise: Optimise = Optimise.PERFORMANCE) -> PlanOptions:
    return PlanOptions(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                       memory_mode="Shared_Sram", arena_cache_size_bytes=budget, optimise=optimise)


def test_chain_detection_covers_single_consumer_links() -> None:
    assert chains(build_network(conv_chain(LAYERS, h=64, w=64))) == [(0, 4)]


def test_stripe_candidates_span_small_and_large_heights() -> None:
    hs = stripe_candidates(112, 2)
    assert hs[0] == 2 and max(hs) <= 56 and len(hs) > 8


def test_tight_budget_cascades_with_rolling_buffers_within_budget() -> None:
    graph = conv_chain(LAYERS, h=64, w=64)
    options = _options(150_000)
    s = plan_schedule(graph, build_architecture(options), options)
    assert s.cascades and s.sram_peak_bytes <= 150_000
    rolling = [p for c in s.cascades for p in c.rolling_buffers]
    assert rolling and all(p.buffer_mode is BufferMode.ROLLING and p.format == "NHCWB16" for p in rolling)
    assert any(o.ofm_stripe.h < o.op.ofm_shape.h for o in s.ops)


def test_size_has_smaller_peak_than_performance() -> None:
    graph = conv_chain(LAYERS, h=64, w=64)
    perf, size = _options(None), _options(None, Optimise.SIZE)
    p = plan_schedule(graph, build_architecture(perf), perf)
    s = plan_schedule(graph, build_architecture(size), size)
    assert s.sram_peak_bytes < p.sram_peak_bytes


def test_infeasible_names_the_floor_with_the_whole_input_and_rolling_buffers() -> None:
    graph = conv_chain(LAYERS, h=64, w=64)  # input 32 KiB whole, 64x64x16 = 64 KiB after conv 0
    floor_error = None
    try:
        plan_schedule(graph, build_architecture(_options(20_000)), _options(20_000))
    except InfeasiblePlan as err:
        floor_error = err
    assert floor_error is not None and floor_error.needed_bytes > 32768
    assert "'input' 32768 B (network input must be whole)" in floor_error.why
    assert "rolling buffers" in floor_error.why and floor_error.op == "t0"
    exact = _options(floor_error.needed_bytes)
    s = plan_schedule(graph, build_architecture(exact), exact)
    assert s.cascades and s.sram_peak_bytes <= floor_error.needed_bytes


def test_a_binding_budget_also_cascades_chains_that_fit_when_that_is_faster() -> None:
    from npuplan.schedule.pricing.assemble import total_cycles
    from npuplan.schedule.pricing.cost_adapter import default_oracle
    from npuplan.schedule.model.limits import Limits
    from npuplan.schedule.search.strategy import cascade_search

    from bench.schedule_graphs import network

    # (a cascade's stripes each cost an operation: chains cascaded to make room pay for it only where
    # the room buys much, here the weights of two 96-channel layers in SRAM)
    graph = network([("conv", 64, 1, 1), ("conv", 16, 3, 1), ("residual", 96, 1, 1), ("residual", 16, 1, 1)],
                    h=28, w=8)
    options = _options(24307)
    arch = build_architecture(options)
    s = plan_schedule(graph, arch, options)
    assert "cascades where faster" in s.notes and s.sram_peak_bytes <= 24307
    net, oracle = build_network(graph), default_oracle(arch)
    only_overflowing = total_cycles(net, cascade_search(net, arch, options, oracle, Limits(24307)), arch, oracle)
    assert s.total_npu_cycles < only_overflowing


def test_stripe_rows_are_the_operations_the_stream_issues() -> None:
    from npuplan.cost import StripeRows
    from npuplan.schedule.pricing.cost_adapter import stripe_rows

    op = build_network(conv_chain([(16, 1), (16, 1)], h=8, w=8)).npu_ops[1]  # 3x3, stride 1, 8 rows in and out
    padded = replace(op, kernel=replace(op.kernel, padding=Padding(1, 1, 1, 1)))
    assert op.kernel.height == 3 and op.ofm_shape.h == op.ifm_shape.h == 8
    # stripes of 2 rows read 4 rows; the last reads the 2 left (unpadded), the first and last 3 (padded)
    assert set(stripe_rows(op, 2)) == {StripeRows(3, 2, 4), StripeRows(1, 2, 2)}
    assert set(stripe_rows(padded, 2)) == {StripeRows(2, 2, 3), StripeRows(2, 2, 4)}
    assert set(stripe_rows(padded, 3)) == {StripeRows(1, 3, 4), StripeRows(1, 3, 5), StripeRows(1, 2, 3)}
    assert stripe_rows(op, 8) == ()
