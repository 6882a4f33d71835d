"""LiteRT's reference kernels in a child process (``run.isolated``): the same outputs as in-process,
and a crash inside them (LiteRT 2.3 aborts on MobileNet v1's depthwise layers) one line and exit
status 5 from ``npuplan check``, not a dead process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from npuplan.errors import LiteRTCrash
from npuplan.run.litert import ReferenceModel, interpreter

pytest.importorskip("ai_edge_litert", reason='LiteRT (the "run" extra) is the reference')

DATA = Path(__file__).resolve().parents[2] / "data"
CRASHES = DATA / "mobilenet_v1_025_96.tflite"  # LiteRT 2.3's reference kernels abort on it
RUNS = DATA / "ds_cnn_kws.tflite"


def test_the_child_computes_what_the_reference_kernels_compute_in_process() -> None:
    data = RUNS.read_bytes()
    isolated = ReferenceModel(data, label="ds_cnn", reference_kernels=True)
    rng = np.random.default_rng(3)
    x = [rng.integers(-128, 128, shape).astype(dtype) for shape, dtype in isolated.input_specs]
    local = interpreter(data, label="ds_cnn", reference_kernels=True, isolated=False)
    local.set_tensor(local.get_input_details()[0]["index"], x[0])
    local.invoke()
    want = local.get_tensor(local.get_output_details()[0]["index"])
    assert np.array_equal(isolated.invoke(x)[0], want)


def test_a_crash_in_the_reference_kernels_is_a_typed_error() -> None:
    reference = ReferenceModel(CRASHES.read_bytes(), label="mobilenet", reference_kernels=True)
    x = [np.zeros(shape, dtype) for shape, dtype in reference.input_specs]
    with pytest.raises(LiteRTCrash, match=r"mobilenet: LiteRT's reference kernels crashed \(signal \d+, SIG\w+\) "
                                          r"in invoke") as error:
        reference.invoke(x)
    assert error.value.exit_status == 5 and "\n" not in str(error.value)
    with pytest.raises(LiteRTCrash, match="crashed earlier"):
        reference.invoke(x)


def test_check_reports_the_crash_in_one_line_with_status_5(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "npuplan", "check", str(CRASHES), "--reference-kernels",
                          "--samples", "1"], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert run.returncode == 5, run.stderr[-500:]
    assert run.stderr.count("\n") == 1 and "LiteRT's reference kernels crashed" in run.stderr
    assert "Traceback" not in run.stderr and not list(tmp_path.iterdir())  # no core file
