"""``npuplan fit``: the smallest arena cache size reaching an inference rate, verified."""

from __future__ import annotations

import csv
from dataclasses import replace

import pytest

from npuplan.api import PreparedModel, make_options, plan_prepared
from npuplan.cli import main
from npuplan.errors import ConfigError, InfeasiblePlan
from npuplan.report import build_report
from npuplan.sweep.fit import fit_budget


def fps_at(model: PreparedModel, options, budget: int) -> float:
    try:
        return build_report(plan_prepared(model, replace(options, arena_cache_size_bytes=budget))).inferences_per_second
    except InfeasiblePlan:
        return 0.0


# (ds_cnn on the U65-256 reaches 19.4k inferences a second at best since the plan prices the
# stream it emits: its earlier 20.3k counted weight DMAs under ops the stream waits for)
@pytest.mark.parametrize("accel, target", [("ethos-u55-64", 2000.0), ("ethos-u65-256", 18000.0)])
def test_answer_reaches_the_rate_and_one_granule_less_does_not(ds_cnn, accel, target):
    model = PreparedModel.read(ds_cnn)
    options = make_options(accelerator_config=accel)
    result = fit_budget(model, options, target)
    assert result.answer is not None and result.answer.plan is not None
    budget = result.answer.budget_bytes
    assert budget % 16 == 0
    assert result.answer.inferences_per_second >= target
    assert result.answer.plan.sram_memory_used_bytes <= budget
    assert fps_at(model, options, budget) == result.answer.inferences_per_second  # planned again: the same
    assert result.below is not None and result.below.budget_bytes == budget - 16
    assert fps_at(model, options, budget - 16) < target


def test_a_coarser_granularity_gives_a_multiple_of_it(ds_cnn):
    model = PreparedModel.read(ds_cnn)
    result = fit_budget(model, make_options(accelerator_config="ethos-u55-64"), 2000.0, granularity_bytes=1024)
    assert result.answer is not None and result.answer.budget_bytes % 1024 == 0
    assert fps_at(model, make_options(accelerator_config="ethos-u55-64"), result.answer.budget_bytes - 1024) < 2000.0
    with pytest.raises(ConfigError):
        fit_budget(model, make_options(), 2000.0, granularity_bytes=24)


def test_fit_command_writes_the_plans_reports_per_accelerator(tmp_path, capsys, ds_cnn):
    out = tmp_path / "out"
    status = main(["fit", str(ds_cnn), "--fps", "2000", "--accelerator-config", "ethos-u55-64,ethos-u65-256",
                   "--output-dir", str(out)])
    printed = capsys.readouterr().out.splitlines()
    assert status == 0
    assert [line.split(":")[0] for line in printed] == ["ethos-u55-64", "ethos-u65-256"]
    budget = int(printed[0].split("--arena-cache-size ")[1].split()[0])
    with (out / "ethos-u55-64" / "ds_cnn_kws_summary_internal-default.csv").open(newline="") as handle:
        (summary,) = list(csv.DictReader(handle))
    assert float(summary["arena_cache_size"]) == budget / 1024
    assert float(summary["inferences_per_second"]) >= 2000
    assert (out / "ethos-u65-256" / "ds_cnn_kws_plan.json").is_file()


def test_an_unreachable_rate_exits_1_with_the_best_rate(tmp_path, capsys, ds_cnn):
    out = tmp_path / "out"
    status = main(["fit", str(ds_cnn), "--fps", "5000", "--accelerator-config", "ethos-u55-64", "--output-dir",
                   str(out), "--memory-mode", "Shared_Sram"])
    err = capsys.readouterr().err
    assert status == 1
    (line,) = err.splitlines()
    assert "ethos-u55-64: no arena cache size up to" in line and "reaches 5000 inferences/s (best " in line
    assert 1000 < float(line.split("(best ")[1].split()[0]) < 5000
    assert not out.exists()


@pytest.mark.parametrize("args, fragment", [(["--fps", "0"], "--fps"), (["--fps", "100", "--optimise", "Fast"], "Fast"),
                                            (["--fps", "100", "--granularity", "8"], "granularity")])
def test_bad_fit_values_exit_2(tmp_path, capsys, ds_cnn, args, fragment):
    status = main(["fit", str(ds_cnn), *args, "--output-dir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and len(err.splitlines()) == 1 and fragment in err
    assert not (tmp_path / "out").exists()


def test_a_bad_second_accelerator_writes_nothing(tmp_path, capsys, ds_cnn):
    status = main(["fit", str(ds_cnn), "--fps", "100", "--accelerator-config", "ethos-u55-64,ethos-u99-1",
                   "--output-dir", str(tmp_path / "out")])
    assert status == 2 and "ethos-u99-1" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
