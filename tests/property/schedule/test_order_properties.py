"""Operator order on random branchy networks (seeded): every order the search returns is
topological and its whole-feature-map peak is never above the file order's; the plans made with it
validate and their SRAM is never above the file order's plan in Size mode."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npuplan.api import make_options, plan
from npuplan.commands import validate_plan
from npuplan.hw import build_architecture
from npuplan.io.tflite import read_tflite
from npuplan.lowering import lower
from npuplan.schedule.model.network import build_network
from npuplan.schedule.moves.order import is_topological, least_peak_order, order_peak_bytes
from bench.random_graphs import network_bytes

BRANCHY = ("cell", "cell", "residual", "concat", "split", "conv", "pool")
SIZE = dict(accelerator_config="ethos-u55-64", system_config="Ethos_U55_Deep_Embedded", memory_mode="Shared_Sram",
            optimise="Size")


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), concat_writes=st.booleans())
def test_orders_are_topological_and_never_peak_above_the_file_order(tmp_path: Path, seed: int,
                                                                    concat_writes: bool) -> None:
    path = tmp_path / "net.tflite"
    path.write_bytes(network_bytes(seed, kinds=BRANCHY))
    arch = build_architecture(make_options(**SIZE))
    graph = lower(read_tflite(path), arch.accelerator, concat_writes=concat_writes)
    sizes = {name: fm.size_bytes for name, fm in build_network(graph).fms.items()}
    order = least_peak_order(graph, sizes)
    assert is_topological(graph, order), f"seed {seed}"
    identity = tuple(range(len(graph.ops)))
    assert order_peak_bytes(graph, order, sizes) <= order_peak_bytes(graph, identity, sizes), f"seed {seed}"


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6))
def test_size_plans_validate_and_never_need_more_sram_than_the_file_order(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "net.tflite"
    path.write_bytes(network_bytes(seed, kinds=BRANCHY))
    result = plan(path, **SIZE)
    validate_plan(result)
    file_order = plan(path, **SIZE, reorder=False)
    assert result.sram_memory_used_bytes <= file_order.sram_memory_used_bytes, f"seed {seed}"
