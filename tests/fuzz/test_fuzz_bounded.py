"""A bounded fuzz run on every change: mutated models, plan JSON and .ini files (see bench/fuzz.py
for long runs). Every case must end with a documented status, one line, no traceback, no files
left behind after a failure, within the time limit."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from bench.fuzzing import campaign, environment_ok, run_case, scratch_dir

DATA = Path(__file__).resolve().parents[1] / "data"
CASES = 320


@pytest.mark.skipif(not environment_ok(), reason="the fuzz harness bounds cases with SIGALRM (POSIX only)")
def test_bounded_fuzz_run_finds_no_bug() -> None:
    models = sorted(DATA.glob("*.tflite"))
    bugs = []
    with scratch_dir() as scratch:
        work = Path(scratch)
        for case in itertools.islice(campaign(models, ("bytes", "struct", "json", "ini"), seed=2026, work=work), CASES):
            outcome = run_case(case, work, model_for_ini=models[0])
            if outcome.is_bug:
                bugs.append((case.label, outcome.stderr or outcome.traceback))
    assert not bugs, bugs[:3]
