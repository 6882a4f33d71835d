"""Find the first operator where a compiled file stops reproducing LiteRT: bisect over prefixes of the
model (its first k operators, every tensor they write that no later one of them reads as an output),
compile each prefix with the chosen tool (``vela``: the file run_diff takes, its default core's, else of
the static copy, else its legacy core's), run it (``npuplan run``'s machinery) and the prefix itself
(LiteRT) on the same seeded inputs.

Usage: python bench/run_bisect.py MODEL.tflite [--tool npuplan|vela] [--scenario NAME] [--samples 1] [--seed 0]
                                 [--reference-kernels]

A diagnosis aid for the mismatches bench/run_diff.py prints: it assumes a difference, once there,
reaches the prefix's outputs (an activation can hide one, so the operator named is where the
difference is first seen, the place to start looking). Prints each prefix tried and the operator
found; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from run_diff import VELA, npuplan_file, run_side, vela_side
from scenarios import SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.io.tflite import read_tflite  # noqa: E402
from npuplan.io.tflite_write import write_tflite  # noqa: E402
from npuplan.ir.graph import Graph, Model  # noqa: E402


def prefix_model(model: Model, count: int) -> bytes:
    """The first ``count`` operators of ``model``'s main graph as a model of their own (the other
    subgraphs kept, at their indices: CALL_ONCE's initialiser)."""
    graph = model.main
    ops = graph.ops[:count]
    read = {id(t) for op in ops for t in op.inputs if t is not None}
    outputs = tuple(t for op in ops for t in op.outputs if id(t) not in read or t in graph.outputs)
    inputs = tuple(t for t in graph.inputs if id(t) in read)
    return write_tflite(Model(model.name, (Graph(graph.name, ops, inputs, outputs), *model.subgraphs[1:])))


def differs(data: bytes, tool: str, options: dict[str, str], samples: int, seed: int, scratch: Path, *,
            reference_kernels: bool = False) -> str:
    """'' when the tool's file of ``data`` reproduces LiteRT, else what differs (or failed)."""
    path = scratch / "prefix.tflite"
    path.write_bytes(data)
    if tool == "npuplan":
        side = run_side(*npuplan_file(path, options), data, samples, seed, reference_kernels=reference_kernels)
    else:  # run_diff's Vela file: the default core's, else of the static copy, else the legacy core's
        side = vela_side(path, options, VELA, data, samples, seed, reference_kernels=reference_kernels)
    if side.error:
        return side.error
    bad = [f"output {d.output}: max |diff| {d.max_abs_diff:g} in {d.differing}" for d in side.diffs if not d.agrees]
    return "; ".join(bad)


def first_differing(count: int, check: Callable[[int], str]) -> int | None:
    """Index of the first of ``count`` operators whose prefix ``check`` finds differing (a non-empty
    answer), None when the whole model agrees."""
    if not check(count):
        return None
    low, high = 0, count  # the first `low` operators agree (0: nothing), the first `high` do not
    while high - low > 1:
        middle = (low + high) // 2
        if check(middle):
            high = middle
        else:
            low = middle
    return high - 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--tool", choices=("npuplan", "vela"), default="npuplan")
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="u55_128_highend_shared_perf")
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reference-kernels", action="store_true", help="LiteRT's reference kernels (as TFLM)")
    args = parser.parse_args()
    model = read_tflite(args.model)
    options = SCENARIOS[args.scenario]
    ops = model.main.ops
    with tempfile.TemporaryDirectory() as scratch:
        def check(count: int) -> str:
            found = differs(prefix_model(model, count), args.tool, options, args.samples, args.seed, Path(scratch),
                            reference_kernels=args.reference_kernels)
            print(f"first {count} operators (to {count - 1} {ops[count - 1].type}): {found or 'agree'}", flush=True)
            return found

        index = first_differing(len(ops), check)
        if index is None:
            print("the whole model agrees")
            return
        print(f"first seen at operator {index} ({ops[index].type}, output '{ops[index].name}')")


if __name__ == "__main__":
    main()
