"""Error paths of the command line: one line on stderr, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from npuplan.cli import main


def run(tmp_path: Path, capsys, *args: str) -> tuple[int, str]:
    out = tmp_path / "out"
    status = main(["plan", *args, "--output-dir", str(out), "--quiet"])
    err = capsys.readouterr().err
    return status, err


def assert_clean_failure(status: int, err: str, tmp_path: Path, fragment: str) -> None:
    assert status == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert fragment in lines[0]
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_missing_model(tmp_path, capsys):
    status, err = run(tmp_path, capsys, str(tmp_path / "nope.tflite"))
    assert_clean_failure(status, err, tmp_path, "nope.tflite")


def test_not_a_tflite_file(tmp_path, capsys):
    bogus = tmp_path / "bogus.tflite"
    bogus.write_bytes(b"hello, I am not a flatbuffer" * 10)
    status, err = run(tmp_path, capsys, str(bogus))
    assert_clean_failure(status, err, tmp_path, "bogus.tflite")


def test_truncated_model(tmp_path, capsys, ds_cnn):
    cut = tmp_path / "cut.tflite"
    cut.write_bytes(ds_cnn.read_bytes()[:5000])
    status, err = run(tmp_path, capsys, str(cut))
    assert_clean_failure(status, err, tmp_path, "cut.tflite")


def test_unknown_accelerator(tmp_path, capsys, ds_cnn):
    status, err = run(tmp_path, capsys, str(ds_cnn), "--accelerator-config", "ethos-u99-1")
    assert_clean_failure(status, err, tmp_path, "ethos-u99-1")


def test_unknown_system_config(tmp_path, capsys, ds_cnn):
    status, err = run(tmp_path, capsys, str(ds_cnn), "--system-config", "No_Such_System")
    assert_clean_failure(status, err, tmp_path, "No_Such_System")


def test_bad_optimise_value(tmp_path, capsys, ds_cnn):
    status, err = run(tmp_path, capsys, str(ds_cnn), "--optimise", "Fastest")
    assert_clean_failure(status, err, tmp_path, "Fastest")


def test_negative_arena(tmp_path, capsys, ds_cnn):
    status, err = run(tmp_path, capsys, str(ds_cnn), "--arena-cache-size", "-5")
    assert_clean_failure(status, err, tmp_path, "-5")


def test_broken_ini(tmp_path, capsys, ds_cnn):
    ini = tmp_path / "broken.ini"
    ini.write_text("[System_Config.Mine\ncore_clock=oops\n")
    status, err = run(tmp_path, capsys, str(ds_cnn), "--config", str(ini), "--system-config", "Mine",
                      "--memory-mode", "Shared_Sram")
    assert_clean_failure(status, err, tmp_path, "broken.ini")


def test_unknown_flag_is_one_line(tmp_path, capsys, ds_cnn):
    with pytest.raises(SystemExit) as exit_info:
        main(["plan", str(ds_cnn), "--frobnicate"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert len([line for line in err.splitlines() if line.strip()]) == 1


def test_successful_plan_writes_three_files(tmp_path, capsys, ds_cnn):
    out = tmp_path / "out"
    status = main(["plan", str(ds_cnn), "--output-dir", str(out), "--accelerator-config", "ethos-u55-128",
                   "--system-config", "Ethos_U55_High_End_Embedded", "--memory-mode", "Shared_Sram"])
    assert status == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["ds_cnn_kws_per-layer.csv", "ds_cnn_kws_plan.json",
                     "ds_cnn_kws_summary_Ethos_U55_High_End_Embedded.csv"]
    assert "Network summary for ds_cnn_kws" in capsys.readouterr().out
