"""Per-operator isolation of a compiled file's differences from LiteRT: each operator of a model alone,
fed the inputs LiteRT itself gave it when running the whole model, compiled by the chosen tool and run
by ``npuplan run``'s machinery, against LiteRT's output of that operator.

Usage: python bench/run_opwise.py MODEL.tflite ... [--tool npuplan|vela] [--scenario NAME] [--seed 0]
                                  [--reference-kernels] [--ops I,J] [--out FILE]

bench/run_bisect.py finds where a file's outputs first differ, differences of earlier operators
included; here every operator sees exact inputs, so a row is that operator's own arithmetic (its
output stage's rounding, a table, a decomposition), never an accumulation. LiteRT runs the whole
model with its built-in optimised kernels, as ``npuplan run`` does (no XNNPACK delegate: a delegated
partition keeps no intermediate tensors); ``--reference-kernels``: each operator's expected output
is recomputed by LiteRT's reference kernels (TensorFlow Lite Micro's) on the same inputs. Prints a
row per operator that differs or cannot be checked alone (an operator whose shapes are computed at
run time from a dynamic batch is written at its placeholder shapes) and a count per model; writes
them to ``--out`` (default bench/results/run_opwise.txt) with a header. Asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

from run_diff import VELA, _header, npuplan_file, vela_file
from scenarios import SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.errors import NpuplanError  # noqa: E402
from npuplan.io.tflite import read_tflite  # noqa: E402
from npuplan.io.tflite_write import write_tflite  # noqa: E402
from npuplan.ir.graph import Graph, Model, Op, Tensor  # noqa: E402
from npuplan.run.compare import random_inputs  # noqa: E402
from npuplan.run.litert import ReferenceModel  # noqa: E402
from npuplan.run.runner import CompiledModel  # noqa: E402


def all_tensors(data: bytes, seed: int) -> dict[str, np.ndarray]:
    """Every tensor's value, by name, after LiteRT's built-in kernels run the model on seeded inputs."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    found = Interpreter(model_content=data, num_threads=1, experimental_preserve_all_tensors=True,
                        experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    found.allocate_tensors()
    specs = [(tuple(d["shape"]), d["dtype"]) for d in found.get_input_details()]
    bounds = ReferenceModel(data, label="the model").index_bounds
    for d, value in zip(found.get_input_details(), random_inputs(specs, np.random.default_rng(seed), bounds)):
        found.set_tensor(d["index"], value)
    found.invoke()
    return {d["name"]: found.get_tensor(d["index"]) for d in found.get_tensor_details()}


def at_run_shape(t: Tensor, values: dict[str, np.ndarray]) -> Tensor:
    """``t`` at the shape LiteRT gave it (a tensor of a dynamic batch declares a placeholder shape),
    static: the operator alone then plans and runs at the shapes the whole model ran at."""
    value = values.get(t.name)
    if t.data is not None or value is None or (value.shape == t.shape and t.signature is None):
        return t
    return replace(t, shape=tuple(value.shape), signature=None)


def alone(model: Model, op: Op, values: dict[str, np.ndarray]) -> tuple[bytes, tuple[Tensor, ...]]:
    """``op`` as a model of its own (the other subgraphs kept at their indices) and its inputs."""
    graph = model.main
    op = replace(op, inputs=tuple(None if t is None else at_run_shape(t, values) for t in op.inputs),
                 outputs=tuple(at_run_shape(t, values) for t in op.outputs))
    inputs = tuple(dict.fromkeys(t for t in op.inputs if t is not None and t.data is None))
    return write_tflite(Model(model.name, (Graph(graph.name, (op,), inputs, tuple(op.outputs)),
                                           *model.subgraphs[1:]))), inputs


def compiled(path: Path, tool: str, options: dict[str, str]) -> tuple[bytes | None, str]:
    return npuplan_file(path, options) if tool == "npuplan" else vela_file(path, options, VELA)


def difference(got: np.ndarray, expected: np.ndarray) -> tuple[float, int]:
    """Largest absolute difference and how many elements differ."""
    wide = np.int64 if expected.dtype.kind in "iub" else np.float64
    diff = np.abs(got.astype(wide) - expected.astype(wide))
    return float(diff.max(initial=0)), int(np.count_nonzero(diff))


def check_op(model: Model, index: int, values: dict[str, np.ndarray], tool: str, options: dict[str, str],
             scratch: Path, *, reference_kernels: bool) -> str:
    """'' when the tool's file of operator ``index`` alone reproduces LiteRT, else what differs."""
    op = model.main.ops[index]
    data, inputs = alone(model, op, values)
    path = scratch / "op.tflite"
    path.write_bytes(data)
    file, why = compiled(path, tool, options)
    if file is None:
        return f"no file: {why[:100]}"
    feed = [values[t.name] for t in inputs]
    try:
        got = CompiledModel(file, label="the operator's file", reference_kernels=reference_kernels).invoke(feed)
        expected = (ReferenceModel(data, label="the operator", reference_kernels=True).invoke(feed)
                    if reference_kernels else [values[t.name] for t in op.outputs])
    except NpuplanError as error:
        return f"not checkable alone: {str(error)[:100]}"
    bad = [f"output {k}: max |diff| {m:g} in {n} of {e.size}"
           for k, (g, e) in enumerate(zip(got, expected)) for m, n in [difference(g, e)] if n]
    return "; ".join(bad)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--tool", choices=("npuplan", "vela"), default="npuplan")
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="u55_128_highend_shared_perf")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reference-kernels", action="store_true")
    parser.add_argument("--ops", type=lambda text: {int(v) for v in text.split(",")}, metavar="I,J,...",
                        help="only these operators (indices in the main graph)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "run_opwise.txt")
    args = parser.parse_args()
    lines = _header(sys.argv[1:], str(VELA))
    lines[0] = lines[0].replace("run_diff.py", "run_opwise.py")
    print(*lines, sep="\n", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        for path in args.models:
            model, values = read_tflite(path), all_tensors(path.read_bytes(), args.seed)
            counts: collections.Counter[str] = collections.Counter()
            for index, op in enumerate(model.main.ops):
                if args.ops is not None and index not in args.ops:
                    continue
                found = check_op(model, index, values, args.tool, SCENARIOS[args.scenario], Path(scratch),
                                 reference_kernels=args.reference_kernels)
                kind = "exact" if not found else "unchecked" if found.startswith(("no file", "not check")) else "differs"
                counts[kind] += 1
                if found:
                    lines.append(f"{path.stem} op {index} {op.type} {op.name[:48]}: {found}")
                    print(lines[-1], flush=True)
            lines.append(f"# {path.stem} ({args.tool}): " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
            print(lines[-1], flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
