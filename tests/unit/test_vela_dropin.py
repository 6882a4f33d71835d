"""``npuplan MODEL.tflite [Vela options]`` against the ``vela`` command (Vela 5.2.0) on a table of
command lines: the same exit status, the same file names written (in ``--output-dir``, or the
current directory for ``--supported-ops-report``) and the same summary labels in the same order.

The reference is Vela's own program, run in its own virtual environment: ``$NPUPLAN_VELA``, else
``/work/velavenv/bin/vela``, else ``vela`` on the PATH; the comparison is skipped, saying so,
when none is there. The figures are not compared (npuplan plans differently); the labels are.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from npuplan.cli import main
from tests.tflite_builder import elementwise_model

DATA = Path(__file__).resolve().parents[1] / "data"
MODEL = str(DATA / "ds_cnn_kws.tflite")
MOBILENET = str(DATA / "mobilenet_v1_025_96.tflite")


def _vela() -> str | None:
    for candidate in (os.environ.get("NPUPLAN_VELA"), "/work/velavenv/bin/vela", shutil.which("vela")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


VELA = _vela()
needs_vela = pytest.mark.skipif(VELA is None, reason="Vela 5.2 CLI not found ($NPUPLAN_VELA, /work/velavenv/bin/vela "
                                                     "or vela on the PATH): nothing to compare with")

# (name, command line after the program name); {model}, {mobilenet}, {junk} are filled in.
CASES = [
    ("defaults", "{model}"),
    ("u55-32", "{model} --accelerator-config ethos-u55-32"),
    ("u55-64 size", "{model} --accelerator-config ethos-u55-64 --optimise Size"),
    ("u55-128", "{model} --accelerator-config ethos-u55-128 --optimise Performance"),
    ("u65-256", "{model} --accelerator-config ethos-u65-256"),
    ("u65-512 size", "{mobilenet} --accelerator-config ethos-u65-512 --optimise Size"),
    ("raw", "{model} --output-format raw"),
    ("config sram only", "{model} --config Arm/vela.ini --system-config Ethos_U55_Deep_Embedded --memory-mode Sram_Only"),
    ("config dedicated", "{model} --config Arm/vela.ini --system-config Ethos_U65_High_End --memory-mode "
                         "Dedicated_Sram --accelerator-config ethos-u65-256"),
    ("config without names", "{model} --config Arm/vela.ini"),
    ("per-layer", "{mobilenet} --verbose-performance"),
    ("weights and cycles", "{model} --verbose-weights --verbose-cycle-estimate"),
    ("arena size", "{model} --arena-cache-size 262144 --optimise Size --accelerator-config ethos-u55-64"),
    ("allocator", "{model} --tensor-allocator Greedy --cpu-tensor-alignment 32"),
    ("deprecated", "{model} --timing --max-block-dependency 2"),
    ("list config files", "--list-config-files"),
    ("list configs", "--list-configs Arm/vela.ini"),
    ("list configs missing", "--list-configs nope.ini"),
    ("supported ops", "--supported-ops-report"),
    ("nothing on the NPU", "{float_model}"),
    ("no network", ""),
    ("unknown option", "{model} --frobnicate"),
    ("bad accelerator", "{model} --accelerator-config ethos-u99-1"),
    ("bad alignment", "{model} --cpu-tensor-alignment 8"),
    ("bad optimise", "{model} --optimise Fastest"),
    ("bad allocator", "{model} --tensor-allocator Best"),
    ("missing file", "missing.tflite"),
    ("not a model", "{junk}"),
    ("unknown system config", "{model} --system-config No_Such_System"),
    ("missing config file", "{model} --config nope.ini --system-config X --memory-mode Y"),
]
# Where npuplan differs from Vela on purpose: case -> (Vela's status, npuplan's status, why).
DIFFERENCES = {
    "bad optimise": (1, 2, "Vela 5.2 ends in a KeyError traceback (its --optimise type raises KeyError, which "
                           "argparse does not catch); npuplan reports a command-line error"),
    "bad allocator": (1, 2, "as --optimise: Vela's --tensor-allocator type raises KeyError"),
}
_LABEL = re.compile(r"^(.*?)(?:\s{2,}| = )")


def _argv(command: str, tmp_path: Path) -> list[str]:
    junk = tmp_path / "junk.tflite"
    junk.write_bytes(b"not a flatbuffer" * 8)
    float_model = tmp_path / "float_add.tflite"
    float_model.write_bytes(elementwise_model())
    return command.format(model=MODEL, mobilenet=MOBILENET, junk=junk, float_model=float_model).split()


def summary_labels(stdout: str) -> list[str]:
    """The labels of the network summary, in order (values, operator lists and npuplan's own
    lines after it left out)."""
    lines = stdout.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Network summary for")), None)
    if start is None:
        return []
    labels = []
    for line in lines[start + 1:]:
        if line.startswith("   CPU:") or line.startswith("   NPU:") or not line.strip():
            continue
        match = _LABEL.match(line)
        labels.append(match.group(1) if match else line)
        if line.startswith("Batch Inference time") or (line.startswith("Neural network macs") and
                                                        "--verbose-cycle-estimate" not in stdout):
            break
    return labels


def _written(where: Path) -> list[str]:
    return sorted(p.name for p in where.rglob("*") if p.is_file())


def run_vela(argv: list[str], where: Path) -> tuple[int, str, list[str]]:
    where.mkdir()
    done = subprocess.run([VELA, *argv, "--output-dir", "out"] if argv and argv[0] != "--list-config-files" and
                          "--list-configs" not in argv and "--supported-ops-report" not in argv else [VELA, *argv],
                          cwd=where, capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout, _written(where)


def run_npuplan(argv: list[str], where: Path, capsys, monkeypatch) -> tuple[int, str, list[str]]:
    where.mkdir()
    monkeypatch.chdir(where)
    extra = ["--output-dir", "out"] if argv and argv[0] != "--list-config-files" and "--list-configs" not in argv \
        and "--supported-ops-report" not in argv else []
    try:
        status = main([*argv, *extra])
    except SystemExit as done:
        status = int(done.code or 0)
    out = capsys.readouterr().out
    return status, out, _written(where)


@needs_vela
@pytest.mark.parametrize("name, command", CASES, ids=[c[0] for c in CASES])
def test_as_vela(name, command, tmp_path, capsys, monkeypatch):
    argv = _argv(command, tmp_path)
    v_status, v_out, v_files = run_vela(argv, tmp_path / "vela")
    n_status, n_out, n_files = run_npuplan(argv, tmp_path / "npuplan", capsys, monkeypatch)
    if name in DIFFERENCES:
        assert (v_status, n_status) == DIFFERENCES[name][:2], DIFFERENCES[name][2]
        return
    assert n_status == v_status, (name, v_status, n_status)
    assert n_files == v_files
    assert summary_labels(n_out) == summary_labels(v_out)
    if v_status == 0 and argv and not argv[0].startswith("--"):
        assert summary_labels(n_out), "no summary printed"


def test_ethos_u85_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    """Vela compiles for Ethos-U85; npuplan says it does not yet, writes nothing, status 2."""
    monkeypatch.chdir(tmp_path)
    assert main([MODEL, "--accelerator-config", "ethos-u85-256"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Ethos-U85 is not supported yet" in err[0]
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("option", ["--enable-debug-db", "--force-symmetric-int-weights", "--cop-format=COP2",
                                    "--experimental-softmax-int16-neg-exp-range=5", "--api-version"])
def test_options_without_meaning_are_refused_saying_why(option, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([MODEL, option]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("npuplan: error: --") and ": " in line[len("npuplan: error: --"):]
    assert not any(tmp_path.iterdir())


def test_the_raw_output_has_vela_s_arrays(tmp_path, capsys, monkeypatch):
    import numpy as np

    monkeypatch.chdir(tmp_path)
    assert main([MODEL, "--output-format", "raw"]) == 0
    arrays = np.load(tmp_path / "output" / "ds_cnn_kws_vela.npz", allow_pickle=True)
    assert {"cmd_data", "weight_data", "scratch_size", "input_shape", "output_offset", "input_quantization"} <= set(arrays)
    assert bytes(arrays["cmd_data"]).startswith(b"COP1")
    assert arrays["input_shape"].tolist() == [[1, 1, 1, 49, 10, 1]]


def test_supported_ops_report_comes_from_the_lowering_rules(tmp_path, capsys, monkeypatch):
    from npuplan.lowering.support import LOWERED_TYPES

    monkeypatch.chdir(tmp_path)
    assert main(["--supported-ops-report"]) == 0
    text = (tmp_path / "SUPPORTED_OPS.md").read_text()
    assert all(f"| {op_type} |" in text for op_type in LOWERED_TYPES)
    assert "Stride values for both width and height must be in the range [1, 3]" in text
