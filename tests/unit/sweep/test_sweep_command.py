"""``npuplan sweep``: rows equal single plans, resume, atomic failures, infeasible rows, --jobs."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from npuplan.cli import main
from npuplan.report.summary import SUMMARY_COLUMNS
from npuplan.sweep import runner
from npuplan.sweep.table import COLUMNS

AXES = ["--accelerator-config", "ethos-u55-64,ethos-u65-256", "--optimise", "Performance,Size",
        "--arena-cache-size", "16k,default"]


def sweep(capsys, models: list[Path], out: Path, *args: str) -> tuple[int, str]:
    status = main(["sweep", *map(str, models), *args, "--output-dir", str(out), "--quiet"])
    return status, capsys.readouterr().err


def rows(out: Path) -> list[dict[str, str]]:
    with (out / "sweep.csv").open(newline="") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == COLUMNS
        return list(reader)


@pytest.fixture(scope="module")
def swept(tmp_path_factory, data_dir) -> tuple[Path, list[dict[str, str]]]:
    out = tmp_path_factory.mktemp("sweep") / "out"
    models = [data_dir / "ds_cnn_kws.tflite", data_dir / "resnet8_cifar.tflite"]
    assert main(["sweep", *map(str, models), *AXES, "--output-dir", str(out), "--quiet"]) == 0
    return out, rows(out)


def test_rows_equal_single_plans(swept, tmp_path, capsys):
    out, found = swept
    assert len(found) == 16
    for row in found:
        options = ["--accelerator-config", row["option_accelerator_config"], "--optimise", row["option_optimise"]]
        if row["option_arena_cache_size_bytes"]:
            options += ["--arena-cache-size", row["option_arena_cache_size_bytes"]]
        single = tmp_path / row["key"]
        status = main(["plan", row["model"], *options, "--output-dir", str(single), "--quiet"])
        err = capsys.readouterr().err
        if row["status"] == "infeasible":
            assert status == 1 and row["reason"] in err
            assert all(row[c] == "" for c in SUMMARY_COLUMNS)
            continue
        assert status == 0 and row["status"] == "ok" and row["reason"] == ""
        with next(single.glob("*_summary_*.csv")).open(newline="") as handle:
            (expected,) = list(csv.DictReader(handle))
        assert {c: row[c] for c in SUMMARY_COLUMNS} == expected


def test_infeasible_points_are_rows_with_the_reason(swept):
    _, found = swept
    infeasible = [r for r in found if r["status"] == "infeasible"]
    assert [(r["model"].endswith("resnet8_cifar.tflite"), r["option_accelerator_config"],
             r["option_arena_cache_size_bytes"]) for r in infeasible] == [(True, "ethos-u55-64", "16384")] * 2
    assert all(r["reason"].startswith("cannot fit") and "\n" not in r["reason"] for r in infeasible)


def test_combination_beyond_the_address_space_is_an_invalid_row(tmp_path, capsys, ds_cnn):
    out = tmp_path / "out"
    status, _ = sweep(capsys, [ds_cnn], out, "--accelerator-config", "ethos-u55-64,ethos-u65-256",
                      "--arena-cache-size", "8192M")
    assert status == 0
    found = rows(out)
    assert [r["status"] for r in found] == ["invalid", "ok"]
    assert "out of bounds" in found[0]["reason"]


def test_jobs_2_gives_the_same_csv(swept, tmp_path, capsys, data_dir):
    out, _ = swept
    status, _ = sweep(capsys, [data_dir / "ds_cnn_kws.tflite", data_dir / "resnet8_cifar.tflite"], tmp_path / "j2",
                      *AXES, "--jobs", "2")
    assert status == 0
    assert (tmp_path / "j2" / "sweep.csv").read_text() == (out / "sweep.csv").read_text()


class _Counting:
    """Counts the points ``runner.PointPlanner.row`` plans (this process, --jobs 1)."""

    def __init__(self, monkeypatch, *, stop_after: int | None = None) -> None:
        self.planned = 0
        original = runner.PointPlanner.row

        def row(planner, point, data=None):
            if stop_after is not None and self.planned == stop_after:
                raise KeyboardInterrupt
            self.planned += 1
            return original(planner, point, data)

        monkeypatch.setattr(runner.PointPlanner, "row", row)


def test_resume_plans_only_new_points(swept, tmp_path, capsys, monkeypatch, data_dir):
    out, _ = swept
    models = [data_dir / "ds_cnn_kws.tflite", data_dir / "resnet8_cifar.tflite"]
    shutil.copytree(out, tmp_path / "out")
    counting = _Counting(monkeypatch)
    assert sweep(capsys, models, tmp_path / "out", *AXES)[0] == 0
    assert counting.planned == 0
    assert (tmp_path / "out" / "sweep.csv").read_text() == (out / "sweep.csv").read_text()
    wider = [*AXES[:-1], "16k,64k,default"]
    assert sweep(capsys, models, tmp_path / "out", *wider)[0] == 0
    assert counting.planned == 8  # 2 models x 2 accelerators x 2 goals at the new 64k budget
    resumed = rows(tmp_path / "out")
    assert len(resumed) == 24
    assert [r["option_arena_cache_size_bytes"] for r in resumed[:3]] == ["16384", "65536", ""]


def test_interrupted_sweep_keeps_its_rows_and_resumes(swept, tmp_path, capsys, monkeypatch, data_dir):
    out, _ = swept
    models = [data_dir / "ds_cnn_kws.tflite", data_dir / "resnet8_cifar.tflite"]
    _Counting(monkeypatch, stop_after=5)
    assert sweep(capsys, models, tmp_path / "out", *AXES) == (130, "npuplan: interrupted\n")
    assert len(rows(tmp_path / "out")) == 5
    monkeypatch.undo()
    counting = _Counting(monkeypatch)
    assert sweep(capsys, models, tmp_path / "out", *AXES)[0] == 0
    assert counting.planned == 11
    assert (tmp_path / "out" / "sweep.csv").read_text() == (out / "sweep.csv").read_text()


@pytest.mark.parametrize("args, fragment", [
    (["--arena-cache-size", "64k,12x"], "12x"),
    (["--accelerator-config", "ethos-u55-64,ethos-u99-1"], "ethos-u99-1"),
    (["--optimise", "Performance,Fastest"], "Fastest"),
    (["--memory-mode", "Shared_Sram,Nope"], "Nope"),  # not in the config: bad input (1); the rest are usage (2)
    (["--jobs", "0"], "--jobs"),
    (["--jobs", "two"], "two"),
])
def test_bad_values_exit_2_with_one_line_and_no_csv(swept, tmp_path, capsys, ds_cnn, args, fragment):
    status, err = sweep(capsys, [ds_cnn], tmp_path / "new", *args) if "two" not in args else _argparse(
        capsys, [ds_cnn], tmp_path / "new", *args)
    expected = 1 if any("Nope" in a for a in args) else 2
    assert status == expected
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in err
    assert not (tmp_path / "new").exists()
    out, _ = swept  # a bad re-run leaves an existing CSV as it was
    shutil.copytree(out, tmp_path / "old")
    before = (tmp_path / "old" / "sweep.csv").read_text()
    assert (sweep(capsys, [ds_cnn], tmp_path / "old", *args) if "two" not in args
            else _argparse(capsys, [ds_cnn], tmp_path / "old", *args))[0] == expected
    assert (tmp_path / "old" / "sweep.csv").read_text() == before


def _argparse(capsys, models, out, *args):
    with pytest.raises(SystemExit) as exit_info:
        sweep(capsys, models, out, *args)
    return exit_info.value.code, capsys.readouterr().err


def test_a_csv_that_is_not_a_sweep_is_left_alone(tmp_path, capsys, ds_cnn):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "sweep.csv").write_text("a,b\n1,2\n")
    status, err = sweep(capsys, [ds_cnn], tmp_path / "out")
    assert status == 1 and "not a sweep CSV" in err
    assert (tmp_path / "out" / "sweep.csv").read_text() == "a,b\n1,2\n"


def test_html_is_self_contained_and_escapes_model_names(tmp_path, capsys, ds_cnn):
    pytest.importorskip("plotly")
    odd = tmp_path / "<img src=x onerror=alert(1)>.tflite"
    odd.write_bytes(ds_cnn.read_bytes())
    status, _ = sweep(capsys, [odd], tmp_path / "out", "--optimise", "Performance,Size")
    assert status == 0
    page = (tmp_path / "out" / "sweep.html").read_text()
    assert "<img src=x" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<script src=" not in page and "plotly.js v" in page  # the JavaScript is embedded
    assert "Pareto front" in page and "SRAM used (KiB)" in page


def test_without_plotly_the_csv_is_written_and_the_note_names_the_extra(tmp_path, capsys, monkeypatch, ds_cnn):
    import builtins

    real_import = builtins.__import__

    def no_plotly(name, *args, **kwargs):
        if name.startswith("plotly"):
            raise ImportError("No module named 'plotly'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_plotly)
    status, err = sweep(capsys, [ds_cnn], tmp_path / "out")
    assert status == 0
    assert len(rows(tmp_path / "out")) == 1
    assert not (tmp_path / "out" / "sweep.html").exists()
    assert 'pip install "npuplan[report]"' in err


def test_a_corrupt_model_is_invalid_rows_and_the_others_are_planned(tmp_path, capsys, ds_cnn):
    cut = tmp_path / "cut.tflite"
    cut.write_bytes(ds_cnn.read_bytes()[:5000])
    status, _ = sweep(capsys, [cut, ds_cnn], tmp_path / "out", "--optimise", "Performance,Size")
    assert status == 0
    found = rows(tmp_path / "out")
    assert [(Path(r["model"]).name, r["status"]) for r in found] == [
        ("cut.tflite", "invalid"), ("cut.tflite", "invalid"), ("ds_cnn_kws.tflite", "ok"), ("ds_cnn_kws.tflite", "ok")]
    assert "cut.tflite" in found[0]["reason"] and "\n" not in found[0]["reason"]
