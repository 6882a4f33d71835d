"""One clock on common work (issue 25): npuplan's file against the better Vela file on the operators
both run on the NPU, for ``bench/estimate_fidelity.py``.

Each file's CPU operators (the operators outside its ethos-u operators) are matched by output tensor
name to the source network's. npuplan's estimate of its own file is attributed to source operators
(its file records where each NPU operation came from: ``Estimate.cycles_by_source``), so the cycles
it spends on operators the Vela file leaves to the CPU come off its total. Left out, with the
reason counted in the summary line:
- networks where npuplan leaves an operator to the CPU that the Vela file runs on the NPU (Vela's
  files record no attribution, so its cycles on them cannot come off);
- networks whose npuplan cycles are all on the Vela file's CPU operators (nothing in common);
- Vela files that do not do the source network's NPU work: a tensor an ethos-u operator reads or
  writes is declared with another shape than the one the source network gives it when LiteRT
  allocates it (Vela 5.2's legacy core plans a SPACE_TO_BATCH_ND output of a dynamic-batch
  network as batch 1: its NPU convolves one batch of 4..16, and the file's BATCH_TO_SPACE_ND
  fails to prepare). The better of the Vela files that do is compared.
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from npuplan.estimate import estimate_file
from npuplan.estimate.read import ETHOS_U
from npuplan.io.tflite import binding, read_tflite
from npuplan.ir.graph import Op
from npuplan.options import PlanOptions

Locate = Callable[[str, str, str], "Path | None"]  # (scenario, model, side) -> the file that side timed


@dataclass(frozen=True)
class CommonWork:
    """npuplan's file and the better Vela file of one network on the operators both run on the NPU.

    ``on_vela_cpu_cycles``: npuplan's estimated cycles on the operators the Vela file leaves to the
    CPU; ``vela_only`` / ``npuplan_only``: the types of the source operators only that file leaves
    to the CPU; ``note``: why there is no comparison (an attribution or a file missing, no Vela file
    doing the source's NPU work)."""

    scenario: str
    model: str
    vela_side: str
    vela_cycles: float
    npuplan_cycles: float
    on_vela_cpu_cycles: float = 0.0
    vela_only: tuple[str, ...] = ()
    npuplan_only: tuple[str, ...] = ()
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.npuplan_cycles / self.vela_cycles if self.vela_cycles else math.inf

    @property
    def left_out(self) -> str:
        """Why the network has no ratio on common work ("" when it has one)."""
        if self.note:
            return self.note
        if self.npuplan_only:
            return "npuplan's CPU operators"
        if self.npuplan_cycles - self.on_vela_cpu_cycles <= 0:
            return "no common NPU work"
        return ""

    @property
    def common_ratio(self) -> float | None:
        """npuplan's cycles less those on the Vela file's CPU operators, over the Vela file's; None
        when the network is left out (``left_out``)."""
        if self.left_out:
            return None
        return (self.npuplan_cycles - self.on_vela_cpu_cycles) / self.vela_cycles


def one_clock_line(label: str, ratios: list[tuple[float, str]]) -> str:
    """A one-clock summary line of sorted (ratio, model) pairs: geomean, median, those above 1.01."""
    geomean = math.exp(sum(math.log(v) for v, _ in ratios) / len(ratios))
    over = [f"{m} {v:.2f}" for v, m in ratios if v > 1.01]
    return (f"{label} n={len(ratios)} geomean {geomean:.3f} median {statistics.median(v for v, _ in ratios):.3f} "
            f"above 1.01: {len(over)} (worst {', '.join(over[-3:][::-1])})")


@cache
def _runtime_shapes(source: Path) -> Mapping[str, tuple[int, ...]] | None:
    """Each tensor's shape once LiteRT has run the source network on zeros (a dynamic dimension
    resolved as it runs: a RESHAPE whose target a SHAPE computes is sized by the invocation, not by
    the allocation); None when LiteRT cannot run it."""
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter

    try:
        with warnings.catch_warnings():  # preserving every tensor is "for debugging": what this is
            warnings.simplefilter("ignore", UserWarning)
            interpreter = Interpreter(model_path=str(source), experimental_preserve_all_tensors=True)
        interpreter.allocate_tensors()
        for d in interpreter.get_input_details():
            interpreter.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
        interpreter.invoke()
    except (RuntimeError, ValueError):
        return None
    return {d["name"]: tuple(int(x) for x in d["shape"]) for d in interpreter.get_tensor_details()}


def npu_shape_changes(compiled: Path, source: Path) -> list[str]:
    """The tensors ``compiled``'s ethos-u operators read or write (after the command stream, flash
    and scratch inputs) that it declares with another shape than the source network gives them."""
    shapes = _runtime_shapes(source)
    if shapes is None:
        return []
    model = binding("Model").GetRootAsModel(compiled.read_bytes(), 0)
    codes = [model.OperatorCodes(k).CustomCode() for k in range(model.OperatorCodesLength())]
    changed = []
    for g in range(model.SubgraphsLength()):
        graph = model.Subgraphs(g)
        for k in range(graph.OperatorsLength()):
            op = graph.Operators(k)
            if codes[op.OpcodeIndex()] != ETHOS_U.split(":")[1].encode():
                continue
            for index in [*op.InputsAsNumpy()[4:], *op.OutputsAsNumpy()]:
                tensor = graph.Tensors(int(index))
                name = tensor.Name().decode(errors="replace")
                declared = tuple(int(d) for d in tensor.ShapeAsNumpy()) if tensor.ShapeLength() else ()
                if name in shapes and shapes[name] != declared:
                    changed.append(f"{name} {list(declared)} (runs as {list(shapes[name])})")
    return changed


def _key(op: Op) -> str:
    """An operator's name across files: its first output tensor's, or for one with no output (an
    ASSIGN_VARIABLE) its type and first input's."""
    if op.outputs:
        return op.outputs[0].name
    first = op.inputs[0] if op.inputs else None
    return f"{op.type} of {first.name if first is not None else '-'}"


def _source_ops(model: Path) -> list[tuple[str, str]]:
    """(name, type) of each operator of the source network's main subgraph, in order (``_key``)."""
    return [(_key(op), op.type) for op in read_tflite(model).subgraphs[0].ops]


def _cpu_names(path: Path) -> set[str]:
    """The operators of a compiled file (any subgraph) outside its ethos-u operators (``_key``)."""
    return {_key(op) for graph in read_tflite(path).subgraphs for op in graph.ops if op.type != ETHOS_U}


def _better_vela(estimates: Mapping[str, float], scenario: str, model: str, source: Path,
                 locate: Locate) -> tuple[str, float, Path] | str:
    """The Vela file with the fewest cycles among those doing the source's NPU work, or why none."""
    kept = []
    for side, cycles in estimates.items():
        path = locate(scenario, model, side)
        if path is not None and cycles > 0 and not npu_shape_changes(path, source):
            kept.append((cycles, side, path))
    if not kept:
        return "no Vela file keeps the source's shapes" if estimates else "no Vela file"
    cycles, side, path = min(kept)
    return side, cycles, path


def compare(scenario: str, model: str, estimates: Mapping[str, float], source: Path, locate: Locate,
            options: PlanOptions) -> CommonWork:
    """One network on common work: ``estimates`` holds npuplan estimate of each side's file
    ("npuplan", "vela-default", "vela-legacy")."""
    npuplan = estimates["npuplan"]
    vela = {side: cycles for side, cycles in estimates.items() if side != "npuplan"}
    best = _better_vela(vela, scenario, model, source, locate)
    mine = locate(scenario, model, "npuplan")
    if isinstance(best, str) or mine is None:
        side = min(vela, key=vela.__getitem__) if vela else "-"
        return CommonWork(scenario, model, side, vela.get(side, 0.0), npuplan,
                          note=best if isinstance(best, str) else "npuplan's file is gone")
    side, cycles, theirs = best
    if npu_shape_changes(mine, source):
        return CommonWork(scenario, model, side, cycles, npuplan, note="npuplan's file changes the source's shapes")
    on_cpu, on_cpu_mine = _cpu_names(theirs), _cpu_names(mine)
    if on_cpu == on_cpu_mine:
        return CommonWork(scenario, model, side, cycles, npuplan)
    ops = _source_ops(source)
    index = {name: k for k, (name, _) in enumerate(ops)}
    kinds = lambda names: tuple(sorted(ops[index[n]][1] if n in index else f"? {n}" for n in names))  # noqa: E731
    estimate = estimate_file(mine, options)
    by_source = estimate.cycles_by_source()
    note = ""
    if by_source is None:
        note = "npuplan's file records no source operators"
    elif abs(estimate.report.cycles_total - npuplan) > 0.5:
        note = "npuplan's file is not the one timed"
    spent = sum((by_source or {}).get(index[n], 0.0) for n in on_cpu - on_cpu_mine if n in index)
    return CommonWork(scenario, model, side, cycles, npuplan, spent, kinds(on_cpu - on_cpu_mine),
                      kinds(on_cpu_mine - on_cpu), note)


def summary_lines(found: list[CommonWork], label_width: int = 34) -> list[str]:
    """Per scenario: one clock on the operators both files run on the NPU, and what was left out."""
    out = []
    for scenario in dict.fromkeys(c.scenario for c in found):
        mine = [c for c in found if c.scenario == scenario]
        ratios = sorted((c.common_ratio, c.model) for c in mine if c.common_ratio is not None)
        reasons = [c.left_out for c in mine if c.left_out]
        left_out = ", ".join(f"{reasons.count(r)} {r}" for r in dict.fromkeys(reasons)) or "none"
        if ratios:
            out.append(one_clock_line(f"{scenario:{label_width}} one clock, on the operators both files run on the "
                                      f"NPU:", ratios) + f" (left out: {left_out})")
    return out


def table(found: list[CommonWork]) -> list[str]:
    """Per network whose files leave different operators to the CPU (or left out): npuplan's
    cycles on the Vela file's CPU operators, the ratios on all and on common work."""
    lines = ["", "# one clock per network whose files leave different operators to the CPU, or left out "
             "(npuplan's estimate of its file; of the better Vela file doing the source's NPU work; npuplan's "
             "cycles on operators that Vela file leaves to the CPU; the ratios on all work and on common work; "
             "the operators only one file leaves to the CPU)",
             f"{'scenario':22} {'model':28} {'side':12} {'npuplan':>10} {'vela':>10} {'on_vela_cpu':>11} {'all':>6} "
             f"{'common':>6} cpu only in vela / only in npuplan"]
    for c in found:
        if not (c.vela_only or c.npuplan_only or c.left_out):
            continue
        common = f"{c.common_ratio:6.3f}" if c.common_ratio is not None else f"{'-':>6}"
        only = ", ".join(_counted(c.vela_only)) + " / " + ", ".join(_counted(c.npuplan_only))
        lines.append(f"{c.scenario[:22]:22} {c.model[:28]:28} {c.vela_side:12} {c.npuplan_cycles:10.0f} "
                     f"{c.vela_cycles:10.0f} {c.on_vela_cpu_cycles:11.0f} {c.ratio:6.3f} {common} {only}"
                     f"{' (' + c.left_out + ')' if c.left_out else ''}")
    return lines


def _counted(kinds: tuple[str, ...]) -> list[str]:
    return [f"{k} x{kinds.count(k)}" if kinds.count(k) > 1 else k for k in dict.fromkeys(kinds)]
