"""Random networks from the generator plan, validate, and put nothing on the CPU that the support
checks accept (seeded: a failure names the seed and generation;
``bench.random_graphs.network_bytes(seed, generation=g)`` rebuilds the file)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from npuplan.api import plan
from npuplan.commands import validate_plan
from npuplan.lowering.support import unsupported_reason
from bench.random_graphs import GENERATIONS, network_bytes

SCENARIOS = (
    dict(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded", memory_mode="Shared_Sram"),
    dict(accelerator_config="ethos-u55-64", system_config="Ethos_U55_Deep_Embedded", memory_mode="Shared_Sram",
         optimise="Size"),
    dict(accelerator_config="ethos-u65-256", system_config="Ethos_U65_High_End", memory_mode="Dedicated_Sram_384KB"),
)


@settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), scenario=st.sampled_from(range(len(SCENARIOS))), generation=st.sampled_from(GENERATIONS))
@example(seed=741, scenario=2, generation=2)  # a RELU lowered to a 1x1 pool written over its input
def test_random_networks_plan_validate_and_keep_supported_ops_on_the_npu(tmp_path: Path, seed: int,
                                                                          scenario: int, generation: int) -> None:
    path = tmp_path / f"random_{seed}.tflite"
    path.write_bytes(network_bytes(seed, generation=generation))
    result = plan(path, **SCENARIOS[scenario])
    validate_plan(result)
    wrongly_on_cpu = [(c.tflite_type, c.reason) for c in result.lowered.cpu_ops if unsupported_reason(c.op) is None]
    assert not wrongly_on_cpu, f"seed {seed} generation {generation}: {wrongly_on_cpu}"
    # Generation 1's files are pinned (tests/unit/test_random_graphs.py), and generation 2 builds
    # its layers too: a residual MAXIMUM of operands quantized otherwise than its output stays on
    # the CPU (the NPU compares them unscaled); nothing else may
    allowed = ("MAXIMUM", "Both Input quantization parameters must match OFM quantization parameters")
    on_cpu = [(c.tflite_type, c.reason) for c in result.lowered.cpu_ops if (c.tflite_type, c.reason) != allowed]
    assert not on_cpu, f"seed {seed} generation {generation}: {on_cpu}"
