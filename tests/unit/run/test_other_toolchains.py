"""Files from other toolchains (tests/data/zoo10: litert-torch PT2E exports and rewrites of one by
bench/zoo/zoo10_quirks.py) emitted and run bit-exact against LiteRT's reference kernels (a
reference npuplan did not write)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("ai_edge_litert", reason="needs LiteRT: pip install 'npuplan[run]'")

from npuplan.run import check_model  # noqa: E402

ZOO10 = Path(__file__).resolve().parents[2] / "data" / "zoo10"


@pytest.mark.parametrize("name", ["pt_se_block_48", "pt_deconv_24"])
def test_a_float_tail_transpose_stays_on_the_cpu(name: str) -> None:
    # PT2E leaves ConvTranspose2d and what follows it in float, ending in the NHWC->NCHW TRANSPOSE:
    # lowering gave that float TRANSPOSE a merged view for NPU steps, so it counted as rewritten
    # and emitting failed ("rewritten by lowering, so it cannot stay on the CPU"); it stays as declared
    result = check_model(ZOO10 / f"{name}.tflite", samples=1, seed=0, reference_kernels=True)
    assert all(d.agrees for d in result.diffs), [str(d) for d in result.diffs]


@pytest.mark.parametrize("quirk", ["same_names", "offset_buffers"])
def test_a_file_with_a_writer_quirk_emits_and_runs(quirk: str) -> None:
    result = check_model(ZOO10 / f"pt_audio1d_49__{quirk}.tflite", samples=1, seed=0, reference_kernels=True)
    assert all(d.agrees for d in result.diffs), [str(d) for d in result.diffs]


def test_a_pytorch_channel_shuffle_runs_on_the_npu_bit_exact() -> None:
    # ShuffleNet's x.view(n, 2, c // 2, h, w).transpose(1, 2) as litert-torch writes it: TRANSPOSE
    # (NHWC -> NCHW), RESHAPE to 5-D, 5-D TRANSPOSE, RESHAPE, TRANSPOSE back. The 5-D TRANSPOSE, given
    # a merged view over the 4-D maps around it, kept its declared permutation's one-step view and
    # wrote the wrong bytes (236 off in 4666 of 6144 elements); the NHWC -> NCHW one stayed on the CPU
    # (its reshape after was 5-D, so it was not given a view at all). Bit-exact now, and no CPU operator.
    result = check_model(ZOO10 / "pt_shufflenet_32.tflite", samples=1, seed=0, reference_kernels=True)
    assert all(d.agrees for d in result.diffs), [str(d) for d in result.diffs]
    assert not result.plan.lowered.cpu_ops


def test_the_compiled_file_keeps_the_signature_defs() -> None:
    # as Vela's does: before, the emitted file had none and LiteRT's get_signature_runner() failed
    from ai_edge_litert.interpreter import Interpreter

    from npuplan.io.tflite import parse_tflite

    result = check_model(ZOO10 / "pt_deconv_24.tflite", samples=1, seed=0)
    assert [s.key for s in parse_tflite(result.emitted.data).signatures] == ["serving_default"]
    assert "serving_default" in Interpreter(model_content=result.emitted.data).get_signature_list()


def test_a_detection_postprocess_custom_operator_runs_and_keeps_its_options() -> None:
    # an SSD head ending in TFLite_Detection_PostProcess (tests/data/zoo12, bench/zoo/zoo12_models.py):
    # the reader dropped a custom operator's options, so the emitted file's operator had none (its
    # kernel parses them at init), and the runner refused every custom operator ("no TFLite built-in
    # kernel"): LiteRT's resolver has this one, and the emitted file now runs bit-exact
    from npuplan.io.tflite import parse_tflite

    source = ZOO10.parent / "zoo12" / "ssd_det_tiny_16.tflite"
    result = check_model(source, samples=2, seed=0, reference_kernels=True)
    assert len(result.diffs) == 4 and all(d.agrees for d in result.diffs), [str(d) for d in result.diffs]

    def options(data: bytes) -> bytes:
        (op,) = [op for op in parse_tflite(data).main.ops if op.type == "CUSTOM:TFLite_Detection_PostProcess"]
        return bytes(op.options["custom_options"])

    assert options(result.emitted.data) == options(source.read_bytes())
