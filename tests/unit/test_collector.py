"""The cycle collector is paused around a compile and restored after, whatever happens."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from npuplan.collector import collector_paused

DATA = Path(__file__).resolve().parents[1] / "data"


@collector_paused
def _state(fail: bool = False) -> bool:
    if fail:
        raise ValueError("boom")
    return gc.isenabled()


def test_paused_inside_and_resumed_after() -> None:
    assert gc.isenabled()
    assert _state() is False
    assert gc.isenabled()


def test_resumed_after_an_error() -> None:
    with pytest.raises(ValueError):
        _state(fail=True)
    assert gc.isenabled()


def test_left_off_when_it_was_off() -> None:
    gc.disable()
    try:
        assert _state() is False
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_plan_runs_with_the_collector_paused() -> None:
    from npuplan.api import plan

    seen: list[bool] = []
    plan(DATA / "ds_cnn_kws.tflite", on_step=lambda _name: seen.append(gc.isenabled()))
    assert seen and not any(seen)
    assert gc.isenabled()


def test_the_program_runs_its_whole_command_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    """``npuplan`` (``cli.run``) pauses the collector for the whole command, the imports of the
    planner included, and leaves it as it was."""
    import npuplan.cli as cli

    seen: list[bool] = []
    monkeypatch.setattr(cli, "main", lambda: seen.append(gc.isenabled()) or 0)
    try:
        assert cli.run() == 0
    finally:
        gc.unfreeze()  # run() freezes the collector's objects for the process's exit
    assert seen == [False]
    assert gc.isenabled()


def test_the_program_freezes_instead_of_collecting(monkeypatch: pytest.MonkeyPatch) -> None:
    """``cli.run`` ends by freezing, not collecting, what the command made (a collection of the
    youngest generation would walk every object made while paused), and resumes the collector with
    no collection pending."""
    import npuplan.cli as cli

    collections: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: collections.append(generation) or 0)
    monkeypatch.setattr(cli, "main", lambda: [object() for _ in range(1000)] and 0)
    try:
        assert cli.run() == 0
        assert collections == []
        assert gc.get_count()[0] < 1000
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert gc.isenabled()
