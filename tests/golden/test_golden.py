"""Golden end-to-end results on the small shipped models, compared with tolerances."""

from __future__ import annotations

import json
import math

import pytest

from tests.golden.cases import CASES, GOLDEN, figures

REL_TOL = 0.005  # 0.5%: cost-model refinements below this do not need a regeneration


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name):
    path = GOLDEN / f"{name}.json"
    expected = json.loads(path.read_text())
    got = figures(name)
    for key, value in expected["summary"].items():
        assert math.isclose(float(got["summary"][key]), float(value), rel_tol=REL_TOL, abs_tol=1.0), (
            f"{name}: {key} moved from {value} to {got['summary'][key]}; regenerate with a reason if intended"
        )
    assert set(got["layers"]) == set(expected["layers"])
    for layer, cycles in expected["layers"].items():
        assert math.isclose(float(got["layers"][layer]), float(cycles), rel_tol=REL_TOL, abs_tol=1.0), layer
