"""tests/data/chain_3.tflite, the 3-op network of the start-up target (issue 26: plan it in under
0.15 s, timed by bench/startup.py): a 1x1 convolution, a 3x3 depthwise convolution (both with
weights) and a residual ADD, as bench/chain_nets.py writes chain_3."""

from __future__ import annotations

import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_it_is_the_chain_the_bench_writes(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        from chain_nets import write_chain
    finally:
        sys.path.remove(str(BENCH))
    shipped = DATA / "chain_3.tflite"
    assert shipped.stat().st_size < 10 * 1024
    assert write_chain(tmp_path, 3).read_bytes() == shipped.read_bytes()


def test_it_plans_three_npu_ops_two_with_weights() -> None:
    from npuplan.api import plan

    planned = plan(DATA / "chain_3.tflite")
    ops = planned.lowered.npu_ops
    assert [(op.op_type, op.weights is not None) for op in ops] == [
        ("Conv2DBias", True), ("DepthwiseConv2DBias", True), ("Add", False)]
