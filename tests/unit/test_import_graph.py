"""The package's import graph: no circles (imports inside functions count), no arrow up the pipeline,
no ``except ImportError`` around an npuplan import (a missing internal module is a crash)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.import_graph import ROOT, Import, all_imports, arrows_up, circles

def test_no_import_circles() -> None:
    assert circles(all_imports()) == []


def test_no_arrow_up_the_pipeline() -> None:
    assert arrows_up(all_imports()) == []


def test_the_checker_finds_a_circle_and_an_arrow_up() -> None:
    made = [Import("npuplan.schedule.a", "npuplan.schedule.b", 1, True),
            Import("npuplan.schedule.b", "npuplan.schedule.a", 1, False),
            Import("npuplan.hw.x", "npuplan.schedule.a", 1, False),
            Import("npuplan.schedule.model.x", "npuplan.schedule.search.y", 1, False),
            Import("npuplan.schedule.search.y", "npuplan.schedule.model.x", 1, False)]
    assert circles(made)[0] == ["npuplan.schedule.a", "npuplan.schedule.b"]
    assert arrows_up(made) == [made[2], made[3]]


def _guards_internal_import(handler: ast.ExceptHandler, body: list[ast.stmt]) -> bool:
    names = {n.id for n in ast.walk(handler.type) if isinstance(n, ast.Name)} if handler.type is not None else set()
    imports = [n for stmt in body for n in ast.walk(stmt) if isinstance(n, (ast.Import, ast.ImportFrom))]
    internal = any((isinstance(n, ast.ImportFrom) and (n.level or (n.module or "").startswith("npuplan")))
                   or (isinstance(n, ast.Import) and any(a.name.startswith("npuplan") for a in n.names))
                   for n in imports)
    return bool(names & {"ImportError", "ModuleNotFoundError"}) and internal


def test_no_import_error_fallback_for_an_internal_module() -> None:
    found = [f"{path}:{node.lineno}" for path in sorted(Path(ROOT, "npuplan").rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Try) and any(_guards_internal_import(h, node.body) for h in node.handlers)]
    assert found == []


def test_bench_never_imports_from_tests() -> None:
    bench = Path(ROOT).parent / "bench"
    found = [f"{path.name}:{node.lineno}" for path in sorted(bench.rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text()))
             if (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tests")
             or (isinstance(node, ast.Import) and any(a.name.split(".")[0] == "tests" for a in node.names))]
    assert found == []
