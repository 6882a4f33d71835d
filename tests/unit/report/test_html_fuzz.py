"""Seeded structural mutants of a written plan JSON: the HTML report is made or the plan is
refused as a bad plan file (exit 2 material), never an unexpected exception."""

from __future__ import annotations

import json
import random

import pytest

from npuplan.commands.plan_file import PlanFileError
from npuplan.report.html import render
from npuplan.report.html_diff import render_diff
from npuplan.report.html_model import html_report

from bench.fuzzing import mutate_json
from .plans import plan_document

pytest.importorskip("plotly")

CASES = 120
SEED = 14


def test_mutated_plans_make_a_page_or_a_plan_file_error(data_dir) -> None:
    seed = json.dumps(plan_document(data_dir / "resnet8_cifar.tflite"))
    rng = random.Random(SEED)
    made = refused = 0
    for case in range(CASES):
        text = mutate_json(seed, rng)
        try:
            document = json.loads(text)
            report = html_report(document, f"case-{case}.json")
        except (PlanFileError, ValueError):
            refused += 1
            continue
        try:
            page = render(report) if case % 2 else render_diff(report, report)
        except Exception as error:  # noqa: BLE001 - any escape is the bug this test hunts
            raise AssertionError(f"seed {SEED} case {case}: {type(error).__name__}: {error}") from error
        assert page.startswith(b"<!DOCTYPE html>")
        made += 1
    assert made > 10 and refused > 10, (made, refused)  # both paths were exercised
