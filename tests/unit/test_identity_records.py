"""Records that compare by identity (``eq=False``): results and working state nothing compares or
hashes, so no ``__eq__`` and ``__hash__`` are generated for them (each generated method is source
text compiled when the module loads: about 0.7 M instructions, issue 26: start-up). The test fails
if one of them gains an ``__eq__`` again, or if a plan, its report files and its emitted file compare
or hash one of them (which would then silently compare by identity)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

IDENTITY_RECORDS = (
    "npuplan.result.Plan",
    "npuplan.report.model.Report",
    "npuplan.report.model.LayerRow",
    "npuplan.report.model.CpuRow",
    "npuplan.schedule.model.network.Network",
    "npuplan.schedule.model.types.Schedule",
    "npuplan.schedule.search.pareto.SearchSpace",
    "npuplan.schedule.search.pareto.Option",
    "npuplan.schedule.search.pareto.Step",
    "npuplan.schedule.moves.choice_memo.ChoiceMemo",
    "npuplan.schedule.pricing.oracle.Costed",
    "npuplan.memory.allocators.Allocation",
    "npuplan.memory.live_range.LiveRangeSet",
    "npuplan.hw.ini.IniDatabase",
    "npuplan.lowering.softmax.Step",
)


def _record(path: str) -> type:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("path", IDENTITY_RECORDS)
def test_the_record_compares_by_identity(path: str) -> None:
    record = _record(path)
    assert record.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert record.__eq__ is object.__eq__ and record.__hash__ is object.__hash__


def test_nothing_compares_or_hashes_them(tmp_path: Path, ds_cnn: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from npuplan.cli import main

    def compared(self: object, *_other: object) -> bool:
        raise AssertionError(f"a {type(self).__name__} was compared or hashed")

    for path in IDENTITY_RECORDS:
        monkeypatch.setattr(_record(path), "__eq__", compared)
        monkeypatch.setattr(_record(path), "__hash__", compared)
    for goal in (["--optimise", "Performance"], ["--optimise", "Size", "--accelerator-config", "ethos-u55-64"]):
        assert main(["plan", str(ds_cnn), *goal, "--emit-tflite", "--quiet",
                     "--output-dir", str(tmp_path / goal[1])]) == 0
