"""Operators Vela's default core runs on the NPU that npuplan once left on the CPU (issue 25), in
TensorFlow-written networks (tests/data/ops, from bench/zoo/ops11_models.py): no CPU operator left,
and the emitted file bit-exact against LiteRT's reference kernels (a reference npuplan did not write)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("ai_edge_litert", reason="needs LiteRT: pip install 'npuplan[run]'")

from npuplan.run import check_model  # noqa: E402

OPS = Path(__file__).resolve().parents[2] / "data" / "ops"


@pytest.mark.parametrize("name", [
    "op_patchify_4x4",  # a 4x4 stride-4 CONV_2D of the image (patch_rows)
    "convnext_stem_32",  # the same stem before a 7x7 depthwise convolution and an MLP
    "op_overlap_7x7_s4",  # a 7x7 stride-4 SAME CONV_2D: PoolFormer's stem (stride_rows; Vela: CPU)
])
def test_runs_on_the_npu_bit_exact(name: str) -> None:
    result = check_model(OPS / f"{name}.tflite", samples=2, seed=0, reference_kernels=True)
    assert not result.plan.lowered.cpu_ops, [o.reason for o in result.plan.lowered.cpu_ops]
    assert all(d.agrees for d in result.diffs), [str(d) for d in result.diffs]


def test_slices_at_batch_offsets_run_on_the_npu() -> None:
    # a fused QKV (16 x 1 x 3 x 32) transposed to 3 x 16 x 1 x 32 and cut at batch offsets 0, 1, 2,
    # the heads' MAXIMUM the output: the SLICEs were kept on the CPU ("reads at a batch offset");
    # one element in 5 samples is 1 off, from the NPU's FULLY_CONNECTED before the slices (Vela's
    # file and npuplan's with the slices on the CPU are off by the same)
    result = check_model(OPS / "qkv_batch_max_16x32.tflite", samples=5, seed=0, reference_kernels=True)
    assert not result.plan.lowered.cpu_ops, [o.reason for o in result.plan.lowered.cpu_ops]
    assert all(d.max_abs_diff <= 1 and d.differing <= 1 for d in result.diffs), [str(d) for d in result.diffs]
