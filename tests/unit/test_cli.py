"""Error paths of the command line: one line on stderr, nothing written; exit 1 for input that cannot
be compiled, 2 for a command-line error (the README's table)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from npuplan.api import Plan, plan
from npuplan.cli import main
from npuplan.report import render_console


def run(tmp_path: Path, capsys, *args: str) -> tuple[int, str]:
    out = tmp_path / "out"
    try:
        status = main(["plan", *args, "--output-dir", str(out), "--quiet"])
    except SystemExit as done:  # a command-line error, from argparse
        status = int(done.code or 0)
    err = capsys.readouterr().err
    return status, err


def assert_clean_failure(status: int, err: str, tmp_path: Path, fragment: str, expected: int = 1) -> None:
    assert status == expected
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
    assert_clean_failure(status, err, tmp_path, "ethos-u99-1", expected=2)


def test_unknown_system_config(tmp_path, capsys, ds_cnn):
    status, err = run(tmp_path, capsys, str(ds_cnn), "--system-config", "No_Such_System")
    assert_clean_failure(status, err, tmp_path, "No_Such_System")


def test_bad_optimise_value(tmp_path, capsys, ds_cnn):
    status, err = run(tmp_path, capsys, str(ds_cnn), "--optimise", "Fastest")
    assert_clean_failure(status, err, tmp_path, "Fastest", expected=2)


def test_negative_arena(tmp_path, capsys, ds_cnn):
    status, err = run(tmp_path, capsys, str(ds_cnn), "--arena-cache-size", "-5")
    assert_clean_failure(status, err, tmp_path, "-5", expected=2)


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


def test_budget_below_the_floor_names_it_and_the_floor_plans(tmp_path, capsys, data_dir):
    model = str(data_dir / "mobilenet_v1_025_96.tflite")
    target = ["--accelerator-config", "ethos-u55-256", "--system-config", "Ethos_U55_High_End_Embedded",
              "--memory-mode", "Shared_Sram"]
    status, err = run(tmp_path, capsys, model, *target, "--arena-cache-size", "32768")
    assert_clean_failure(status, err, tmp_path, "network input must be whole")
    assert "budget is 32768 bytes" in err and "rolling buffers" in err
    floor = int(err.split("raise --arena-cache-size to at least ")[1].split()[0])
    assert floor > 32768
    status = main(["plan", model, *target, "--arena-cache-size", str(floor), "--validate",
                   "--output-dir", str(tmp_path / "floor"), "--quiet"])
    assert status == 0
    summary = next((tmp_path / "floor").glob("*_summary_*.csv")).read_text().splitlines()
    row = dict(zip(summary[0].split(","), summary[1].split(",")))
    assert float(row["sram_memory_used"]) * 1024 <= floor


_OWN_PROCESS = """
import os, sys
from npuplan import cli
sys.argv = ["npuplan", "plan", sys.argv[1], "--output-dir", sys.argv[2]]
status = cli.run()
threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
print(status, threads, "rich" in sys.modules)
"""


def test_program_runs_in_one_thread_without_rich_when_piped(tmp_path, ds_cnn):
    """The program's own process: numpy's OpenBLAS starts no threads (nothing here needs them), and
    a summary printed to a pipe is plain text, so rich is never imported."""
    env = {key: value for key, value in os.environ.items() if key != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", _OWN_PROCESS, str(ds_cnn), str(tmp_path / "out")],
                          capture_output=True, text=True, check=True, env=env)
    lines = done.stdout.splitlines()
    assert "Network summary for ds_cnn_kws" in done.stdout
    assert lines[-1] == "0 1 False"


@pytest.fixture(scope="module")
def ds_cnn_plan(ds_cnn) -> Plan:  # type: ignore[no-untyped-def]
    return plan(str(ds_cnn))


def test_summary_prints_names_as_they_are(ds_cnn_plan):
    """Brackets in names and paths are printed, not read as markup (rich dropped ``[abc]`` and
    raised on ``[/x]``)."""
    out = io.StringIO()
    render_console(ds_cnn_plan, written=[Path("out/[/x]_[abc].json")], show_cpu_operations=True, file=out)
    assert "Wrote out/[/x]_[abc].json" in out.getvalue()


def test_per_layer_table_to_a_file_is_drawn_whole(ds_cnn_plan):
    """A file or pipe has no width: the table is not cut to 80 columns of ellipses."""
    out = io.StringIO()
    render_console(ds_cnn_plan, verbose_performance=True, file=out)
    text = out.getvalue()
    assert "TFLite_operator" in text and "DEPTHWISE_CONV_2D" in text
    assert "\u2026" not in text


def test_reader_closing_the_pipe_is_not_a_traceback(tmp_path, ds_cnn):
    """``npuplan plan ... | head``: the reports are written; exit 1 and no traceback, whether the
    plain summary (ours) or the per-layer table (rich's) meets the closed pipe."""
    for flags in ([], ["--verbose-performance"]):
        out = tmp_path / f"out{len(flags)}"
        proc = subprocess.Popen([sys.executable, "-m", "npuplan", "plan", str(ds_cnn), "--output-dir", str(out),
                                 *flags], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.close()  # before it prints: planning takes far longer than this
        err = proc.stderr.read().decode()
        assert (proc.wait(), err) == (141, "")
        assert len(list(out.iterdir())) == 3


def test_internal_error_is_one_line_status_4_and_no_files(tmp_path, capsys, monkeypatch):
    import npuplan.plan_forms as plan_forms

    def broken(*_args, **_kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(plan_forms, "plan_schedule", broken)
    model = Path(__file__).resolve().parents[1] / "data" / "ds_cnn_kws.tflite"
    status = main(["plan", str(model), "--output-dir", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert status == 4
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err
    assert "internal error while scheduling: ZeroDivisionError: boom" in lines[0]
    assert "bug in npuplan" in lines[0] and "--debug" in lines[0]
    assert not (tmp_path / "out").exists()
    with pytest.raises(ZeroDivisionError):
        main(["plan", str(model), "--output-dir", str(tmp_path / "out"), "--quiet", "--debug"])


def test_internal_error_in_lowering_names_the_op(tmp_path, capsys, monkeypatch):
    import importlib

    lower_module = importlib.import_module("npuplan.lowering.lower")

    def broken(_op):
        raise KeyError("x")

    monkeypatch.setitem(lower_module._CONVERTERS, "CONV_2D", broken)
    model = Path(__file__).resolve().parents[1] / "data" / "ds_cnn_kws.tflite"
    status = main(["plan", str(model), "--output-dir", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert status == 4 and "while lowering the network on op '" in err


def test_an_error_naming_a_hostile_tensor_stays_on_one_line():
    from npuplan.cli import one_line

    assert one_line("'a\nb\r\x00c' reads 'x'") == "'a\\nb\\r\\x00c' reads 'x'"
    assert one_line("plain: ünïcode ok") == "plain: ünïcode ok"


def test_help_shows_defaults_and_choices(capsys):
    with pytest.raises(SystemExit) as done:
        main(["plan", "--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0
    assert "(default: ethos-u55-128)" in out and "ethos-u65-512" in out and "{Performance,Size}" in out
    assert "(default: HillClimb)" in out and "(default: output)" in out


def test_plan_takes_a_size_with_a_suffix(tmp_path, capsys, ds_cnn):
    out = tmp_path / "out"
    assert main(["plan", str(ds_cnn), "--arena-cache-size", "256k", "--output-dir", str(out), "--quiet"]) == 0
    assert '"arena_cache_size_bytes": 262144' in next(out.glob("*_plan.json")).read_text()


def test_per_layer_table_at_80_columns_cuts_no_number(ds_cnn_plan):
    """A terminal of 80 columns: every line fits, and every figure of the CSV's rows is printed whole."""
    from npuplan.report.console import _per_layer_lines
    from npuplan.report.files import per_layer_rows
    from npuplan.report.model import build_report

    report = build_report(ds_cnn_plan)
    lines = _per_layer_lines(report, 80)
    assert max(len(line) for line in lines) <= 80
    cells = {cell for line in lines for cell in line.split()}
    for row in per_layer_rows(report):
        for value in row[2:-1]:
            text = f"{value:.2f}" if isinstance(value, float) and not value.is_integer() else str(int(value))
            assert text in cells, text


def test_a_subcommand_builds_only_its_own_parser_with_the_same_help():
    from npuplan.cli import _COMMANDS, _parser, subcommands

    full = _parser()
    assert set(_COMMANDS) | {"vela"} == set(subcommands(full))
    assert set(subcommands(_parser("plan"))) == {"plan"}
    assert set(subcommands(_parser("check"))) == {"plan", "run", "check"}  # check shares plan's options
    for name in _COMMANDS:
        alone = _parser(name)
        assert name in subcommands(alone)
        helps = [next(a for a in p._actions if a.dest == "command").choices[name].format_help() for p in (full, alone)]
        assert helps[0] == helps[1], name
