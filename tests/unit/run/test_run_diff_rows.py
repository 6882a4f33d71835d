"""bench/run_diff.py's rows when a process dies: a worker killed mid-job is the row ``worker
crashed`` for that job, and every other job still gets its rows, in order."""

from __future__ import annotations

import importlib
import os
import signal
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"


def _dies_on_b(job: tuple[Path, str, int, int, str, bool]) -> list[tuple[str, str]]:
    if job[0].name == "b":
        os.kill(os.getpid(), signal.SIGKILL)
    return [("ok", f"{job[0].name} {job[1]}")]


@pytest.fixture()
def run_diff(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    pytest.importorskip("ai_edge_litert", reason='LiteRT (the "run" extra) is the reference')
    monkeypatch.syspath_prepend(str(BENCH))
    module = importlib.import_module("run_diff")
    monkeypatch.setattr(module, "one", _dies_on_b)
    return module


@pytest.mark.skipif(sys.platform != "linux", reason="the forked workers see the patched job function")
@pytest.mark.parametrize("workers", [1, 2])
def test_a_dead_worker_is_a_row_and_the_other_jobs_run(run_diff: ModuleType, workers: int) -> None:
    jobs = [(Path(name), "s", 1, 0, "vela", False) for name in ("a", "b", "c", "d")]
    rows = list(run_diff.rows_of(jobs, workers))
    assert [v for v, _ in rows] == ["ok", "worker crashed", "ok", "ok"]
    assert rows[1][1].startswith("b s: worker crashed") and rows[3][1] == "d s"
