"""The bounded differential of bench/run_diff.py: small shipped models in one scenario, one sample,
npuplan's compiled file (native backend) and Vela's (its command-line program, when installed beside
this Python) run by the simulator and compared with LiteRT running the original. npuplan's file must
differ from LiteRT no more than Vela's file does (Vela's runs on silicon), or not at all without it."""

from __future__ import annotations

import glob
import subprocess
import sys
from pathlib import Path

import pytest

from npuplan.api import plan_and_emit
from npuplan.run import CompiledModel, OutputDiff, ReferenceModel, compare_runs

pytest.importorskip("ai_edge_litert", reason='LiteRT (the "run" extra) is the reference')

DATA = Path(__file__).resolve().parents[2] / "data"
SCENARIO = dict(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                memory_mode="Shared_Sram", optimise="Performance")
VELA = Path(sys.executable).parent / "vela"


def _vela_file(model: Path, out: Path) -> bytes | None:
    if not VELA.exists():
        return None
    flags = [a for key, value in SCENARIO.items() for a in (f"--{key.replace('_', '-')}", value)]
    subprocess.run([str(VELA), str(model), *flags, "--output-dir", str(out)], capture_output=True, check=True)
    return Path(glob.glob(f"{out}/*_vela.tflite")[0]).read_bytes()


@pytest.mark.parametrize("name", ["ds_cnn_kws", "autoencoder_ad", "resnet8_cifar"])
def test_npuplan_file_agrees_with_litert_as_closely_as_vela_file(name: str, tmp_path: Path) -> None:
    model = DATA / f"{name}.tflite"
    original = model.read_bytes()
    ours = compare_runs(CompiledModel(plan_and_emit(model, **SCENARIO)[1].data), ReferenceModel(original),
                        samples=1, seed=0)
    vela = _vela_file(model, tmp_path)
    theirs = (compare_runs(CompiledModel(vela), ReferenceModel(original), samples=1, seed=0) if vela is not None
              else [OutputDiff(d.output, 0.0, 0, d.elements) for d in ours])
    for a, b in zip(ours, theirs):
        assert a.max_abs_diff <= b.max_abs_diff and a.differing <= b.differing, (
            f"output {a.output}: npuplan's file differs from LiteRT by up to {a.max_abs_diff} in {a.differing} "
            f"elements, Vela's by up to {b.max_abs_diff} in {b.differing}")
