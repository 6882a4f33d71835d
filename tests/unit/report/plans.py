"""Plans and plan documents for the HTML report tests, and a model whose names are markup."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import npuplan
from npuplan.io.tflite import read_tflite
from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Op, Tensor
from npuplan.report import build_report
from npuplan.report.plan_json import plan_json

SCENARIO = dict(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                memory_mode="Shared_Sram")
# A name that runs script if it ever reaches the page as markup, and one that ends a script element.
HOSTILE = "<img src=x onerror=alert(1)>"
SCRIPT_END = "</script><script>alert(2)</script>"


def plan_document(model: Path, **options: Any) -> dict[str, Any]:
    """The plan JSON ``npuplan plan`` writes for ``model``, read back."""
    plan = npuplan.plan(model, **{**SCENARIO, **options})
    return json.loads(plan_json(plan, build_report(plan)))


def _renamed(graph: Graph) -> Graph:
    """``graph`` with every tensor named after markup (each name still unique)."""
    new: dict[int, Tensor] = {}

    def rename(t: Tensor | None) -> Tensor | None:
        if t is None:
            return None
        if id(t) not in new:
            k = len(new)
            name = f"{HOSTILE}{k}" if k % 2 == 0 else f"{SCRIPT_END}&amp;{k}\u2028"
            new[id(t)] = dataclasses.replace(t, name=name)
        return new[id(t)]

    ops = tuple(Op(op.type, tuple(rename(t) for t in op.inputs), tuple(rename(t) for t in op.outputs),  # type: ignore[misc]
                   op.options, op.index) for op in graph.ops)
    return Graph(graph.name, ops, tuple(rename(t) for t in graph.inputs),  # type: ignore[arg-type]
                 tuple(rename(t) for t in graph.outputs))  # type: ignore[arg-type]


def hostile_model(source: Path, out: Path) -> Path:
    """``source`` rewritten with every tensor (so every op) named after markup, as ``out``."""
    model = read_tflite(source)
    renamed = Model(model.name, tuple(_renamed(g) for g in model.subgraphs), model.description)
    out.write_bytes(write_tflite(renamed))
    return out
