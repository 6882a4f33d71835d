"""``npuplan run`` and ``npuplan check``: files written, one-line errors, exit statuses."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from npuplan.cli import main
from npuplan.run import OutputDiff
from npuplan.run.check import CheckResult

from ._files import SHAPE, add_relu_model

pytest.importorskip("ai_edge_litert", reason='LiteRT (the "run" extra) runs the CPU operators')


@pytest.fixture()
def model(tmp_path: Path) -> Path:
    path = tmp_path / "add_relu.tflite"
    path.write_bytes(add_relu_model())
    return path


def _input(tmp_path: Path, array: np.ndarray, name: str = "x.npy") -> str:
    np.save(tmp_path / name, array)
    return str(tmp_path / name)


def test_run_writes_each_output_in_order(model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    x = np.arange(-8, 8, dtype=np.int8).reshape(SHAPE)
    assert main(["run", str(model), "--input", _input(tmp_path, x), "--output-dir", str(tmp_path / "out")]) == 0
    y = np.load(tmp_path / "out" / "output_0.npy")
    assert y.dtype == np.int8 and (y == np.maximum(2 * x, 0)).all()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["output_0.npy"]
    assert "output_0.npy: int8 [1, 2, 2, 4]" in capsys.readouterr().out


@pytest.mark.parametrize(("array", "message"), [
    (np.zeros((1, 2, 2, 4), np.int16), "input 0 must be int8 [1, 2, 2, 4], not int16 [1, 2, 2, 4]"),
    (np.zeros((2, 2, 4), np.int8), "input 0 must be int8 [1, 2, 2, 4], not int8 [2, 2, 4]"),
])
def test_a_wrong_input_is_one_line_and_exit_1_and_writes_nothing(
        model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], array: np.ndarray, message: str) -> None:
    out = tmp_path / "out"
    assert main(["run", str(model), "--input", _input(tmp_path, array), "--output-dir", str(out)]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and not out.exists()


def test_a_wrong_input_count_and_an_unreadable_input_exit_1(model: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(model), "--output-dir", str(tmp_path)]) == 1
    assert "has 1 input(s), 0 given" in capsys.readouterr().err
    (tmp_path / "bad.npy").write_bytes(b"not numpy")
    assert main(["run", str(model), "--input", str(tmp_path / "bad.npy"), "--output-dir", str(tmp_path)]) == 1
    assert "cannot read input" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "missing.tflite"), "--output-dir", str(tmp_path)]) == 1


def _fake_check(diffs: list[OutputDiff]):  # type: ignore[no-untyped-def]
    def check_model(path, *, samples, seed, backend, reference_kernels, **options):  # type: ignore[no-untyped-def]
        assert (samples, seed, backend, options["accelerator_config"]) == (2, 7, "npuplan", "ethos-u65-256")
        return CheckResult(None, None, tuple(diffs), samples)

    return check_model


@pytest.mark.parametrize(("diffs", "status", "said"), [
    ([OutputDiff(0, 0.0, 0, 32)], 0, "output 0: agrees: max |diff| 0, 0 of 32 elements differ over 2 sample(s)"),
    ([OutputDiff(0, 0.0, 0, 32), OutputDiff(1, 3.0, 5, 32)], 3, "output 1: DIFFERS: max |diff| 3, 5 of 32"),
])
def test_check_exit_status_says_whether_the_outputs_agree(
        model: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        diffs: list[OutputDiff], status: int, said: str) -> None:
    import npuplan.run

    monkeypatch.setattr(npuplan.run, "check_model", _fake_check(diffs))
    argv = ["check", str(model), "--accelerator-config", "ethos-u65-256", "--samples", "2", "--seed", "7"]
    assert main(argv) == status
    assert said in capsys.readouterr().out


def test_check_refuses_zero_samples(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(model), "--samples", "0"]) == 2
    assert "--samples must be at least 1" in capsys.readouterr().err


def test_check_plans_emits_and_runs_for_real(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bench.random_graphs import network_bytes

    path = tmp_path / "random_1.tflite"  # a seeded random network whose compiled file is exact
    path.write_bytes(network_bytes(1))
    assert main(["check", str(path), "--samples", "2", "--output-dir", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "output 0: agrees: max |diff| 0, 0 of 32 elements differ over 2 sample(s) (seed 0)" in out
    assert (tmp_path / "out" / "random_1_npuplan.tflite").is_file()
