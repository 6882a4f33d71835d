"""A standalone LUT activation runs as a 1x1 average pool through its table where the accelerator
keeps spare SHRAM banks for tables (as Vela's default core runs it), an Add of zero elsewhere; the
planner keeps whichever plan is faster (issue 25)."""

from __future__ import annotations

import pytest

from npuplan.ir.types import Quantization
from tests.unit.emit.conftest import U55_128, emit_graph
from tests.unit.lowering._build import fm, graph, op

pytest.importorskip("ethosu.vela.api", reason="the deploy extra (ethos-u-vela) is not installed")

U55_64 = {**U55_128, "accelerator_config": "ethos-u55-64"}


def _sigmoid_graph():
    x = fm("x", (1, 24, 24, 32), quant=Quantization(scale=(0.06,), zero_point=(3,)))
    y = fm("y", (1, 24, 24, 32), quant=Quantization(scale=(1 / 256,), zero_point=(-128,)))
    return graph([op("LOGISTIC", [x], [y], 0)], [x], [y])


def test_a_standalone_table_runs_as_an_average_pool_on_u55_128(tmp_path):
    pytest.importorskip("ai_edge_litert", reason='LiteRT (the "run" extra) is the reference')
    from npuplan.run import CompiledModel, ReferenceModel, compare_runs

    g = _sigmoid_graph()
    planned, emitted, report = emit_graph(tmp_path, g)
    assert [(o.op_type, o.ifm2) for o in planned.lowered.npu_ops] == [("AvgPool", None)]
    assert report.npu_operations == emitted.npu_operations
    diffs = compare_runs(CompiledModel(emitted.data), ReferenceModel((tmp_path / f"{g.name}.tflite").read_bytes()),
                         samples=2, seed=0)
    assert all(d.differing == 0 for d in diffs), [str(d) for d in diffs]


def test_the_table_stays_an_add_where_it_works_for_elementwise_ops_only(tmp_path):
    planned, _, _ = emit_graph(tmp_path, _sigmoid_graph(), U55_64)
    assert [o.op_type for o in planned.lowered.npu_ops] == ["Add"]
