"""The import graph of src/npuplan: circles, imports inside functions, arrows up the pipeline.

Counts every ``import npuplan...`` / ``from npuplan... import`` wherever it is written (module
level, inside a function, under ``if TYPE_CHECKING``): an import inside a function that dodges a
load-time failure is still a circle. Prints figures and exits 1 when it finds a circle or an arrow
up the pipeline; ``tests/unit/test_import_graph.py`` asserts the same.

Usage: python tests/import_graph.py [--src DIR]
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "src"

# The pipeline, lowest first: a module may import its own stage or any stage before it. It is the
# order of docs/architecture.md, with two stages placed by what they know rather than when they run:
# ``ir`` is the vocabulary every stage speaks (``io`` reads files into it), so it sits below ``io``;
# ``hw`` (accelerator presets: data) sits below ``lowering``, whose support checks read it; and
# ``memory`` (live ranges -> addresses, knowing nothing of the schedule) sits below ``schedule``,
# which prices a fit with the real allocator.
PIPELINE: tuple[tuple[str, ...], ...] = (
    ("errors", "_compat", "record_methods", "records", "options", "units", "version", "lean_bindings", "collector"),
    ("ir",),
    ("io",),
    ("hw",),
    ("lowering",),
    ("codec",),
    ("cost",),
    ("memory",),
    ("schedule",),
    ("commands",),
    ("result",),
    ("emit", "regstream"),
    ("report",),
    ("sim", "estimate"),
    ("api", "plan_forms", "prepared", "fitting", "form_price", "sweep", "cli_options", "velacli", "run"),
    ("cli", "cli_run", "cli_estimate", "__main__", "__init__"),
)
STAGE = {name: rank for rank, names in enumerate(PIPELINE) for name in names}
# Packages split in layers by role, lowest first: the same rule holds inside them.
LAYERS: dict[str, tuple[str, ...]] = {
    "schedule": ("model", "pricing", "moves", "search"),
}


@dataclass(frozen=True, slots=True)
class Import:
    """One import of an npuplan module: who imports whom, on which line, and whether inside a function."""
    importer: str
    imported: str
    line: int
    in_function: bool


def module_names(src: Path) -> dict[str, Path]:
    """Every module of the package under ``src``, by dotted name (a package by its own name)."""
    names: dict[str, Path] = {}
    for path in sorted((src / "npuplan").rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool,
             modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module if is_package else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}" if base else package
    # ``from a.b import c`` imports a.b, and a.b.c when c is a module
    return [base] + [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """The npuplan imports written in one module."""
    tree = ast.parse(path.read_text(), str(path))
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for target in _targets(child, module, path.name == "__init__.py", modules):
                    resolved = _resolve(target, modules) if target.startswith("npuplan") else None
                    if resolved and resolved != module:
                        found.append(Import(module, resolved, child.lineno, in_function))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return found


def all_imports(src: Path = ROOT) -> list[Import]:
    modules = module_names(src)
    return [imp for name, path in modules.items() for imp in imports_of(name, path, modules)]


def circles(imports: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        graph.setdefault(imp.importer, set()).add(imp.imported)
        graph.setdefault(imp.imported, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(found)


def stage_of(module: str) -> tuple[int, int]:
    """The pipeline rank of a module (by its first name under npuplan), then its layer's rank
    inside a layered package (-1 for the package itself, which may import its layers)."""
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else "__init__"
    layers = LAYERS.get(name, ())
    layer = layers.index(parts[2]) if len(parts) > 2 and parts[2] in layers else -1
    return STAGE[name], layer


def arrows_up(imports: list[Import]) -> list[Import]:
    """Imports from a stage to a later one (an earlier stage must not know a later one)."""
    return [imp for imp in imports if _up(stage_of(imp.importer), stage_of(imp.imported))
            and imp.importer != "npuplan"]


def _up(importer: tuple[int, int], imported: tuple[int, int]) -> bool:
    if importer[0] != imported[0]:
        return imported[0] > importer[0]
    return importer[1] >= 0 and imported[1] > importer[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT)
    args = parser.parse_args()
    imports = all_imports(args.src)
    inside = [imp for imp in imports if imp.in_function]
    found = circles(imports)
    members = {m for circle in found for m in circle}
    up = arrows_up(imports)
    print(f"{len(imports)} npuplan imports, {len(inside)} inside functions, {len(found)} circles, "
          f"{len(up)} arrows up the pipeline")
    for circle in found:
        print("circle:", " <-> ".join(circle))
    for imp in inside:
        if imp.importer in members and imp.imported in members:
            print(f"  dodges a circle: {imp.importer}:{imp.line} imports {imp.imported} inside a function")
    for imp in up:
        print(f"arrow up: {imp.importer}:{imp.line} -> {imp.imported}")
    return 1 if found or up else 0


if __name__ == "__main__":
    raise SystemExit(main())
