"""Networks as Keras writes them (tests/data/zoo11, from bench/zoo/zoo11_models.py) emitted and run
bit-exact against LiteRT's reference kernels."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("ai_edge_litert", reason="needs LiteRT: pip install 'npuplan[run]'")

from npuplan.run import check_model  # noqa: E402

ZOO11 = Path(__file__).resolve().parents[2] / "data" / "zoo11"


def test_a_softmax_between_keras_dot_layers_runs_on_the_npu_bit_exact() -> None:
    # Dot(axes=(2, 1)) writes its 8 x 1 scores, RESHAPE makes them 1 x 8 for the softmax over the
    # frames, EXPAND_DIMS feeds the next Dot. Dropping that RESHAPE left the softmax reading rows of
    # one element: refused on the NPU, and emitting failed ("rewritten by lowering, so it cannot
    # stay on the CPU"). Now the softmax runs on the NPU over the 8 frames.
    result = check_model(ZOO11 / "dot_attention_8x6.tflite", samples=2, seed=0, reference_kernels=True)
    assert all(d.agrees for d in result.diffs), [str(d) for d in result.diffs]
    assert "SOFTMAX" not in {o.op.type for o in result.plan.lowered.cpu_ops}
