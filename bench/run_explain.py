"""Explain run_diff's rows without a reference from Vela's default core: for each model, the first
operator where npuplan's file stops reproducing LiteRT (bisect over prefixes, LiteRT's optimised
kernels), whether the whole file reproduces LiteRT's reference kernels, the README rule that names
the difference, and for a fully connected layer the rule recomputed.

Usage: python bench/run_explain.py [--diff-results bench/results/run_diff.txt] [--models NAME ...]
                                   [--scenario NAME] [--samples 5] [--seed 0] [--over N] [--growth] [--write]

The models: every DIFF row of ``--diff-results``, and every row whose Vela file is not its default
core's (``vela (static copy)``, ``vela (legacy core)``: the models where Vela's default core cannot
compile the model) on which npuplan's file differs from LiteRT; with ``--over N`` also every model
where npuplan's file differs from LiteRT by more than N (rows that agree with Vela's file as
closely, but by more than the README's bounds: whose difference is it?). The results file is
written with ``--over 3 --write``.

Rules (README, "Where the NPU differs from TFLite"):
  reference-exact     the whole file reproduces LiteRT's reference kernels (TFLite Micro's) bit for
                      bit: the difference is between LiteRT's two kernel sets, named in the README
  fc-double-rounding  first differing operator is a FULLY_CONNECTED or 1x1 CONV_2D: the output
                      stage's rounding. The int8 layer is recomputed on the input each side gave it
                      (``fc_rounding.py``, TFLite's formulas): npuplan's file must be double rounding
                      (the NPU's TFL rounding) in every element, each LiteRT kernel set one of the
                      rules in every element ("rule reproduced"), else "NOT REPRODUCED"
  avgpool-requant     first differing operator is an AVERAGE_POOL_2D whose input and output
                      quantization differ
  UNEXPLAINED         anything else: a bug to fix or a difference still to name
Unless the whole file is reference-exact, the rule is that of the first operator where npuplan's
file differs from the reference kernels (a second bisection), and that operator is recomputed.
``--growth`` also prints, for each prefix from the first differing operator to the end, how far its
outputs are from LiteRT's (``--reference-kernels``: the reference kernels'): how a one-step rounding
difference grows through the later layers. Prints one line per model (two with the recomputation);
with --write also writes bench/results/run_explain.txt. Asserts nothing.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from run_bisect import differs, first_differing, prefix_model
from run_diff import SETS, VELA, _header
from scenarios import SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from fc_rounding import match, supported  # noqa: E402
from npuplan.api import plan_and_emit  # noqa: E402
from npuplan.io.tflite import read_tflite  # noqa: E402
from npuplan.io.tflite_write import write_tflite  # noqa: E402
from npuplan.ir.graph import Graph, Model, Op  # noqa: E402
from npuplan.run import CompiledModel, ReferenceModel, random_inputs  # noqa: E402

RESULTS = HERE / "results" / "run_explain.txt"


FALLBACKS = ("| vela (static copy) ", "| vela (legacy core) ")


def _largest(line: str) -> float:
    """npuplan's largest difference in a run_diff row (0 when the row has none)."""
    match = re.search(r"\| npuplan max \|diff\| ([0-9.e+inf]+),", line)
    return float(match.group(1)) if match else 0.0


def diff_models(results: Path, over: float | None = None) -> list[str]:
    """The model names of run_diff's DIFF rows, of its rows whose Vela file is not the default
    core's where npuplan's file differs from LiteRT, and (``over``) of its rows where npuplan's
    file differs by more than ``over``; first-seen order."""
    names: list[str] = []
    for line in results.read_text().splitlines():
        fallback = any(f in line for f in FALLBACKS) and _largest(line) > 0
        large = over is not None and _largest(line) > over
        if (": DIFF" in line or fallback or large) and not line.startswith("#"):
            name = line.split()[0]
            if name not in names:
                names.append(name)
    return names


def find_model(name: str, scratch: Path) -> Path | None:
    """The model file of a run_diff row: a set's file, or run_diff's seeded random network."""
    if name.startswith("random_") and name[7:].isdigit():
        from random_graphs import network_bytes

        path = scratch / f"{name}.tflite"
        path.write_bytes(network_bytes(int(name[7:])))
        return path
    for directory in SETS.values():
        path = Path(directory) / f"{name}.tflite"
        if path.exists():
            return path
    return None


def rule_of(op: Op) -> str:
    kind = str(op.type)
    if kind.endswith("FULLY_CONNECTED"):
        return "fc-double-rounding"
    if kind.endswith("CONV_2D") and not kind.endswith("DEPTHWISE_CONV_2D"):
        weights = op.inputs[1]
        if weights is not None and tuple(weights.shape)[1:3] == (1, 1):
            return "fc-double-rounding"
    if kind.endswith("AVERAGE_POOL_2D"):
        source, result = op.inputs[0], op.outputs[0]
        if source.quant != result.quant:
            return "avgpool-requant"
    return "UNEXPLAINED"


def probe_model(model: Model, index: int) -> bytes:
    """The first ``index + 1`` operators of ``model``'s main graph with operator ``index``'s first
    input and first output as the outputs (the other subgraphs kept at their indices)."""
    graph = model.main
    op = graph.ops[index]
    ops = graph.ops[:index + 1]
    read = {id(t) for o in ops for t in o.inputs if t is not None}
    inputs = tuple(t for t in graph.inputs if id(t) in read)
    probe = Graph(graph.name, ops, inputs, (op.inputs[0], op.outputs[0]))
    return write_tflite(Model(model.name, (probe, *model.subgraphs[1:])))


def layer_values(run: Callable[[list[np.ndarray]], list[np.ndarray]], specs: list[tuple[tuple[int, ...], np.dtype]],
                 samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The probe's (layer input, layer output) over ``samples`` seeded inputs (as ``compare_runs``
    draws them), stacked along the first axis."""
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for _ in range(samples):
        x, y = run(random_inputs(specs, rng))
        xs.append(x.reshape(-1))
        ys.append(y.reshape(-1))
    return np.concatenate(xs), np.concatenate(ys)


def recompute_rule(model: Model, index: int, options: dict[str, str], samples: int, seed: int) -> str:
    """Where the first differing layer is a fully connected one: each rounding rule recomputed on
    the input each side gave the layer, against that side's output (``fc_rounding``)."""
    op = model.main.ops[index]
    why = supported(op)
    if why:
        return f"not recomputed ({why})"
    data = probe_model(model, index)
    optimised, reference = ReferenceModel(data), ReferenceModel(data, reference_kernels=True)
    specs = optimised.input_specs
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "probe.tflite"
        path.write_bytes(data)
        compiled = CompiledModel(plan_and_emit(path, **options)[1].data)

    def ours(inputs: list[np.ndarray]) -> list[np.ndarray]:
        return compiled.invoke([x.reshape(shape) for x, (shape, _) in zip(inputs, compiled.input_specs)])

    found = [match(op, side, *layer_values(run, specs, samples, seed)) for side, run in
             (("LiteRT optimised", optimised.invoke), ("LiteRT reference", reference.invoke), ("npuplan", ours))]
    return " | ".join(m.text() for m in found) + f" -> {_confirms(found)}"


def _confirms(found: list) -> str:
    """Whether the named rule accounts for every element: npuplan's file by double rounding, and
    each LiteRT kernel set by one of the two rules."""
    every = {m.side: [rule for rule, n in m.matches.items() if n == m.elements] for m in found}
    if "double" not in every["npuplan"]:
        return "NOT REPRODUCED: npuplan's layer is not double rounding everywhere"
    litert = {side: rules for side, rules in every.items() if side != "npuplan"}
    if not all(litert.values()):
        return "NOT REPRODUCED: " + ", ".join(side for side, rules in litert.items() if not rules) + " follows neither rule"
    return "rule reproduced (" + ", ".join(f"{side} {'/'.join(rules)}" for side, rules in litert.items()) + ")"


def growth(model: Model, first: int, options: dict[str, str], samples: int, seed: int, *,
           reference_kernels: bool) -> list[str]:
    """For each prefix from operator ``first`` on, how its outputs differ from LiteRT's."""
    lines = []
    with tempfile.TemporaryDirectory() as scratch:
        for count in range(first + 1, len(model.main.ops) + 1):
            op = model.main.ops[count - 1]
            found = differs(prefix_model(model, count), "npuplan", options, samples, seed, Path(scratch),
                            reference_kernels=reference_kernels)
            lines.append(f"    to op {count - 1} {op.type}: {found[:150] or 'agrees'}")
    return lines


def explain(path: Path, options: dict[str, str], samples: int, seed: int, *, grow: bool = False,
            reference_kernels: bool = False) -> str:
    """One model's line(s): where npuplan's file first differs from LiteRT's optimised kernels and,
    unless the whole file reproduces the reference kernels, from the reference kernels; the rule of
    the operator that tells (the reference one when there is one), recomputed where it can be."""
    model = read_tflite(path)
    count = len(model.main.ops)
    with tempfile.TemporaryDirectory() as scratch:
        def check(ops: int, reference: bool = False) -> str:
            return differs(prefix_model(model, ops), "npuplan", options, samples, seed, Path(scratch),
                           reference_kernels=reference)

        index = first_differing(count, check)
        if index is None:
            return "agrees (optimised kernels) in this scenario"
        whole_reference = check(count, True)
        reference_index = first_differing(count, lambda ops: check(ops, True)) if whole_reference else None
    op = model.main.ops[index]
    text = f"first at op {index} {op.type}"
    if reference_index is None:
        text += " -> reference-exact | reference kernels, whole model: agrees"
    else:
        index, op = reference_index, model.main.ops[reference_index]
        text += (f"; against the reference kernels at op {index} {op.type} -> {rule_of(op)} | reference kernels, "
                 f"whole model: {whole_reference[:100]}")
    if rule_of(op) == "fc-double-rounding" or not supported(op):
        text += "\n    recomputed: " + recompute_rule(model, index, options, samples, seed)
    if grow:
        text += "\n" + "\n".join(growth(model, index, options, samples, seed, reference_kernels=reference_kernels))
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--diff-results", type=Path, default=HERE / "results" / "run_diff.txt")
    parser.add_argument("--models", nargs="*")
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="u55_128_highend_shared_perf")
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--over", type=float, help="also every model where npuplan's file differs by more than this")
    parser.add_argument("--growth", action="store_true", help="each prefix's difference after the first differing op")
    parser.add_argument("--reference-kernels", action="store_true", help="--growth against LiteRT's reference kernels")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    names = args.models or diff_models(args.diff_results, args.over)
    lines = _header(sys.argv[1:], str(VELA))
    lines = [lines[0].replace("run_diff.py", "run_explain.py"), f"{lines[1]}, scenario {args.scenario}"]
    for line in lines:
        print(line)
    scratch = Path(tempfile.mkdtemp())
    for name in names:
        path = find_model(name, scratch)
        text = f"{name}: " + (explain(path, SCENARIOS[args.scenario], args.samples, args.seed, grow=args.growth,
                                      reference_kernels=args.reference_kernels) if path
                              else "model file not found in the sets")
        print(text, flush=True)
        lines.append(text)
    if args.write:
        RESULTS.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
