"""bench/run_diff.py's worker pool: a worker that dies (LiteRT's reference kernels segfault on some
networks) is a row of its own and the run goes on (it used to end in BrokenProcessPool)."""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
from pathlib import Path

import pytest

pytest.importorskip("ai_edge_litert", reason="needs LiteRT: pip install 'npuplan[run]'")

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))  # run_diff imports its neighbours

import run_diff  # noqa: E402


def _segfault_on_boom(job: run_diff.Job) -> list[tuple[str, str]]:
    if job[0].stem == "boom":
        faulthandler.disable()  # pytest's handler, inherited by the forked worker, would print its stack
        os.kill(os.getpid(), signal.SIGSEGV)
    return [("ok", job[0].stem)]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_crashed_worker_is_a_row_and_the_run_goes_on(monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    monkeypatch.setattr(run_diff, "one", _segfault_on_boom)  # the forked workers see the patched module
    names = ["a", "b", "boom", "c", "d", "e"]
    jobs = [(Path(f"{n}.tflite"), "u55_128_highend_shared_perf", 1, 0, "vela", True) for n in names]
    rows = [row for rows in run_diff.run_all(jobs, workers) for row in rows]
    assert [v for v, _ in rows] == ["ok", "ok", "crashed", "ok", "ok", "ok"]
    assert [line for v, line in rows if v == "ok"] == ["a", "b", "c", "d", "e"]
    assert rows[2][1].startswith("boom u55_128_highend_shared_perf: crashed")
