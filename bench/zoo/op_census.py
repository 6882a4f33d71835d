"""Count the TFLite operator types each zoo file really contains, with the ``tflite`` package (run
with the system Python, no TensorFlow), and write them into DIR/manifest.json as ``ops``.

Usage: python bench/zoo/op_census.py [--zoo /work/zoo]

Run after generate.py (which records each model's family and input shape there). Prints each
model whose histogram differs from what the generator recorded, and the zoo's operator types
with how many models hold each.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import tflite


def operators(path: Path) -> list[tuple[str, list[str]]]:
    """Every operator of a .tflite file (all subgraphs): its type and the names of its outputs."""
    model = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    codes = [model.OperatorCodes(i) for i in range(model.OperatorCodesLength())]
    types = [tflite.opcode2name(max(c.BuiltinCode(), c.DeprecatedBuiltinCode())) for c in codes]
    found = []
    for g in range(model.SubgraphsLength()):
        graph = model.Subgraphs(g)
        for i in range(graph.OperatorsLength()):
            op = graph.Operators(i)
            outputs = [graph.Tensors(op.Outputs(j)).Name().decode() for j in range(op.OutputsLength())]
            found.append((types[op.OpcodeIndex()], outputs))
    return found


def op_types(path: Path) -> dict[str, int]:
    """Operator type -> count in a .tflite file."""
    return dict(sorted(Counter(op_type for op_type, _ in operators(path)).items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", type=Path, default=Path("/work/zoo"))
    args = parser.parse_args()
    manifest_path = args.zoo / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    everywhere: Counter[str] = Counter()
    for path in sorted(args.zoo.glob("*.tflite")):
        entry = manifest.setdefault(path.stem, {"family": path.stem.split("_")[0]})
        ops = op_types(path)
        if entry.get("ops") not in (None, ops):
            print(f"{path.stem}: generator recorded {entry['ops']}, the file holds {ops}")
        entry["ops"] = ops
        everywhere.update(ops.keys())
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    print(f"{len(manifest)} models; operator types (models holding each):")
    print(", ".join(f"{op} {n}" for op, n in sorted(everywhere.items())))


if __name__ == "__main__":
    main()
