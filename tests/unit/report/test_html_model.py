"""The HTML report's model: pure data read from a plan document (no plotly needed)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from npuplan.commands.plan_file import PlanFileError
from npuplan.report.html_diff import op_changes, option_rows, total_rows
from npuplan.report.html_model import HtmlReport, html_report

from .plans import plan_document

MODELS = ("ds_cnn_kws", "resnet8_cifar", "tiny_yolo_160")


@pytest.fixture(scope="module")
def documents(data_dir) -> dict[str, dict[str, Any]]:
    return {name: plan_document(data_dir / f"{name}.tflite") for name in MODELS}


def _report(document: dict[str, Any]) -> HtmlReport:
    return html_report(document, "plan.json")


@pytest.mark.parametrize("name", MODELS)
def test_live_sram_peak_is_the_allocators_lower_bound(documents, name: str) -> None:
    document = documents[name]
    report = _report(document)
    area = document["allocation"]["areas"][report.sram_area]
    live = [s.total_bytes - s.bytes_of("constant") for s in report.sram]
    assert max(live) == area["lower_bound_bytes"] <= report.sram_allocated_bytes == area["peak_bytes"]
    assert report.sram[report.peak_step].total_bytes == max(s.total_bytes for s in report.sram)
    assert report.sram_budget_bytes == document["target"]["arena_cache_size_bytes"]


@pytest.mark.parametrize("name", MODELS)
def test_every_op_once_in_order_with_cycles_that_respect_the_lower_bound(documents, name: str) -> None:
    document = documents[name]
    report = _report(document)
    assert [op.name for op in report.ops] == [op["name"] for op in document["ops"]]
    assert [s.step for s in report.sram] == list(range(len(report.ops)))
    for op in report.ops:
        if op.placement == "cpu":
            assert op.cycles is None and op.reason
            continue
        c = op.cycles
        assert c is not None
        assert c.total_cycles >= max(c.compute_cycles, *c.access_cycles.values())  # a DMA wait adds to it
        assert c.mac_bound_cycles <= c.compute_cycles
        assert c.lower_bound_cycles == max(c.mac_bound_cycles, c.weight_bound_cycles)
        assert (c.bound_by == "compute") == (c.compute_cycles >= max(c.access_cycles.values()))


def test_cascades_span_their_ops_and_buffers_name_their_steps(documents) -> None:
    report = _report(documents["resnet8_cifar"])
    by_name = {op.name: op for op in report.ops}
    for cascade in report.cascades:
        steps = [by_name[n].step for n in cascade.ops]
        assert (cascade.first_step, cascade.last_step) == (min(steps), max(steps))
        assert all(by_name[n].cascade == cascade.id for n in cascade.ops)
    tensors = {t.name: t for t in report.tensors}
    for s in report.sram:
        for buffer in s.live:
            first = buffer.name.split(" = ")[0]
            assert tensors[first].area == report.sram_area
            assert tensors[first].first_step <= s.step or buffer.kind == "constant"


def test_a_field_of_the_wrong_type_names_where_it_is(documents) -> None:
    document = copy.deepcopy(documents["ds_cnn_kws"])
    document["ops"][3]["cost"]["nn_macs"] = "many"
    with pytest.raises(PlanFileError, match=r"plan\.ops\[3\]\.cost\.nn_macs"):
        _report(document)
    document = copy.deepcopy(documents["ds_cnn_kws"])
    del document["target"]["fast_area"]
    with pytest.raises(PlanFileError, match=r"plan\.target has no 'fast_area'"):
        _report(document)
    del document["target"]["macs_per_cycle"]  # as plans written before the HTML report
    with pytest.raises(PlanFileError, match="older npuplan"):
        _report(document)
    document = copy.deepcopy(documents["ds_cnn_kws"])
    document["ops"][0]["placement"] = "gpu"
    with pytest.raises(PlanFileError, match="placement"):
        _report(document)


def test_a_plan_compared_with_itself_has_no_changes(documents) -> None:
    report = _report(documents["ds_cnn_kws"])
    assert not any(c.changed for c in op_changes(report, report))
    assert all(a == b for _, a, b in option_rows(report, report))
    assert all(row[3] in (0, None) for row in total_rows(report, report))


def test_comparison_matches_ops_by_name_and_reports_the_changes(data_dir, documents) -> None:
    a = _report(documents["ds_cnn_kws"])
    b = _report(plan_document(data_dir / "ds_cnn_kws.tflite", accelerator_config="ethos-u55-64"))
    changes = op_changes(a, b)
    assert [c.name for c in changes] == [op.name for op in a.ops]
    assert any(c.changed for c in changes)
    options = {k: (x, y) for k, x, y in option_rows(a, b)}
    assert options["accelerator_config"] == ("ethos-u55-128", "ethos-u55-64")
    totals = {row[0]: row for row in total_rows(a, b)}
    cycles = totals["cycles_total"]
    assert cycles[3] == pytest.approx(cycles[2] - cycles[1]) and cycles[3] > 0
    shorter = HtmlReport(**{**a.__dict__, "ops": a.ops[:-1]})
    only_b = op_changes(shorter, a)[-1]
    assert only_b.a is None and only_b.b is a.ops[-1] and only_b.changed


def test_headline_states_totals_counts_and_the_largest_changes(data_dir, documents) -> None:
    from npuplan.report.html_diff import headline

    a = _report(documents["ds_cnn_kws"])
    assert headline(a, a, op_changes(a, a)) == [f"0 of {len(a.ops)} ops differ; 0 only in A, 0 only in B, "
                                                "0 moved between NPU and CPU"]
    b = _report(plan_document(data_dir / "ds_cnn_kws.tflite", accelerator_config="ethos-u55-64"))
    lines = headline(a, b, op_changes(a, b))
    assert lines[0].startswith("cycles: ") and "%)" in lines[0]
    moves = [line for line in lines if line.startswith("cycles ")]
    assert 0 < len(moves) <= 5
    deltas = [abs(float(line.split()[1].rstrip(":").replace(",", ""))) for line in moves]
    assert deltas == sorted(deltas, reverse=True)
