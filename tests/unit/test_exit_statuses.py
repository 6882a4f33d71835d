"""The README's exit-status table, case by case, for every command (the Vela form included): each
documented status is produced by a case here, one line on stderr, and the table lists exactly the
statuses tested."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from npuplan.cli import main

ROOT = Path(__file__).resolve().parents[2]
MODEL = str(ROOT / "tests" / "data" / "ds_cnn_kws.tflite")
U55 = ["--accelerator-config", "ethos-u55-128", "--system-config", "Ethos_U55_High_End_Embedded",
       "--memory-mode", "Shared_Sram"]

CASES = [
    (0, "plan", ["plan", MODEL, *U55, "--quiet"]),
    (0, "vela form", [MODEL]),
    (1, "plan: missing model", ["plan", "nope.tflite"]),
    (1, "vela form: missing model", ["nope.tflite"]),
    (1, "vela form: system config not in the config", [MODEL, "--system-config", "No_Such_System"]),
    (1, "plan: no plan fits", ["plan", str(ROOT / "tests" / "data" / "mobilenet_v1_025_96.tflite"), *U55,
                               "--arena-cache-size", "32k"]),
    (1, "validate: a .tflite never compiled", ["validate", MODEL]),
    (1, "report: missing plan JSON", ["report", "nope_plan.json", "-o", "x.html"]),
    (1, "fit: the rate is not reached", ["fit", MODEL, "--fps", "1e9", "--accelerator-config", "ethos-u55-64"]),
    (1, "sweep: a memory mode not in the config", ["sweep", MODEL, "--memory-mode", "Nope", "--output-dir", "s"]),
    (2, "plan: unknown option", ["plan", MODEL, "--frobnicate"]),
    (2, "plan: value outside its choices", ["plan", MODEL, "--optimise", "Fastest"]),
    (2, "plan: size of the wrong form", ["plan", MODEL, "--arena-cache-size", "12x"]),
    (2, "sweep: --jobs 0", ["sweep", MODEL, "--jobs", "0", "--output-dir", "s"]),
    (2, "vela form: unknown option", [MODEL, "--frobnicate"]),
    (2, "vela form: Ethos-U85", [MODEL, "--accelerator-config", "ethos-u85-256"]),
    (2, "no command", []),
]


@pytest.mark.parametrize("status, name, argv", CASES, ids=[c[1] for c in CASES])
def test_documented_case(status, name, argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    try:
        got = main(argv)
    except SystemExit as done:  # argparse's command-line errors
        got = int(done.code or 0)
    err = capsys.readouterr().err
    assert got == status, (name, err)
    if status and argv:
        assert len(err.strip().splitlines()) == 1, err


def test_a_violation_is_3(tmp_path, monkeypatch, capsys):
    import npuplan.commands as commands
    from npuplan.errors import ValidationError

    def violated(_plan):
        raise ValidationError("buffer 'x' overlaps buffer 'y'")

    monkeypatch.setattr(commands, "validate_plan", violated)
    assert main(["plan", MODEL, *U55, "--validate", "--output-dir", str(tmp_path / "o")]) == 3
    assert not (tmp_path / "o").exists()


def test_a_bug_is_4_and_an_interrupt_130(tmp_path, monkeypatch, capsys):
    import npuplan.api as api

    def broken(*_args, **_kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(api, "plan", broken)
    assert main(["plan", MODEL, "--output-dir", str(tmp_path / "o")]) == 4

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "plan", interrupted)
    assert main(["plan", MODEL, "--output-dir", str(tmp_path / "o")]) == 130


def test_a_crash_inside_litert_is_5(tmp_path, monkeypatch, capsys):
    """LiteRT 2.3's reference kernels abort on MobileNet v1: the child that runs them dies, npuplan does not."""
    pytest.importorskip("ai_edge_litert", reason='LiteRT (the "run" extra) is the reference')
    monkeypatch.chdir(tmp_path)
    argv = ["check", str(ROOT / "tests" / "data" / "mobilenet_v1_025_96.tflite"), "--reference-kernels", "--samples", "1"]
    assert main(argv) == 5
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_the_readme_lists_exactly_the_tested_statuses():
    """141 (a closed stdout) is tested in test_cli.py, with a real pipe."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text[text.index("## Exit statuses"):]
    listed = {int(s) for s in re.findall(r"^\| (\d+) \|", table, re.M)}
    assert listed == {s for s, _, _ in CASES} | {3, 4, 5, 130, 141}
