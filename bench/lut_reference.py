"""Lookup tables against TensorFlow Lite's reference kernels, run by the LiteRT interpreter.

Usage: python bench/lut_reference.py --litert-python PYTHON [--random N] [MODEL ...]

PYTHON is an interpreter with ``ai-edge-litert`` installed (a separate venv: it is not a
dependency of npuplan). For every activation npuplan computes a table for (TANH, LOGISTIC, LEAKY_RELU, HARD_SWISH, EXP,
LOG, GELU, RSQRT: its inputs below the zero point, which the kernel rejects, are run as the zero point) in the given models (default: the zoo's op_* activations and mobilenet_v3_small's), and N random quantizations of each
kind (seeded), writes a one-operator int8 model, runs it on the 256 input values with LiteRT's
reference op resolver (``BUILTIN_REF``) and compares the outputs with npuplan's table
(``lowering.lut_tables``); a quantization TFLite's Prepare refuses must have no npuplan table. Prints, per kind, the tables compared, the identical ones and the
differing entries. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src")]

from npuplan.io.tflite import read_tflite  # noqa: E402
from npuplan.io.tflite_write import write_tflite  # noqa: E402
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options  # noqa: E402
from npuplan.ir.types import DataType, Quantization  # noqa: E402
from npuplan.lowering.lut_tables import LUT_ACTIVATIONS, activation_table  # noqa: E402

DEFAULT_MODELS = ["/work/zoo/op_tanh.tflite", "/work/zoo/op_logistic.tflite", "/work/zoo/op_leaky_relu.tflite",
                  "/work/zoo/op_exp.tflite", "/work/zoo/op_log.tflite", "/work/zoo/op_gelu.tflite", "/work/zoo/op_rsqrt.tflite",
                  "/work/zoo/op_hard_swish.tflite", "/work/shared/models/mobilenet_v3_small_224.tflite"]
_RUN = """
import json, sys, numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType
out = {}
for path, low in json.load(open(sys.argv[1])):
    it = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    try:
        it.allocate_tensors()
    except RuntimeError:  # the kernel's Prepare refuses the quantization
        out[path] = None
        continue
    values = np.maximum(np.arange(-128, 128), low).astype(np.int8)  # RSQRT rejects inputs below its zero point
    it.set_tensor(it.get_input_details()[0]["index"], values.reshape(1, 256))
    it.invoke()
    out[path] = it.get_tensor(it.get_output_details()[0]["index"]).reshape(-1).tolist()
json.dump(out, open(sys.argv[2], "w"))
"""

Case = tuple[str, Quantization, Quantization, dict[str, object]]


def model_cases(paths: list[str]) -> list[Case]:
    cases = []
    for path in paths:
        for op in read_tflite(path).main.ops:
            ifm, ofm = op.inputs[0], op.outputs[0]
            if op.type in LUT_ACTIVATIONS and ifm is not None and ifm.dtype == DataType.INT8:
                assert ifm.quant is not None and ofm.quant is not None
                cases.append((op.type, ifm.quant, ofm.quant, dict(op.options)))
    return cases


def random_cases(count: int, seed: int = 0) -> list[Case]:
    rng = np.random.default_rng(seed)
    cases: list[Case] = []
    for _ in range(count):
        q_in = Quantization((float(np.float32(10 ** rng.uniform(-3, 0))),), (int(rng.integers(-128, 128)),))
        for kind in sorted(LUT_ACTIVATIONS):
            fixed = {"TANH": Quantization((1 / 128,), (0,)), "LOGISTIC": Quantization((1 / 256,), (-128,))}
            q_out = fixed.get(kind) or Quantization((float(np.float32(10 ** rng.uniform(-3, 0))),),
                                                    (int(rng.integers(-128, 128)),))
            options: dict[str, object] = {}
            if kind == "LEAKY_RELU":
                options = {"alpha": float(np.float32(rng.choice([0.1, 0.2, 0.3, -0.5, 1.5])))}
            if kind == "GELU":
                options = {"approximate": bool(rng.integers(0, 2))}
            cases.append((kind, q_in, q_out, options))
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*")
    parser.add_argument("--litert-python", required=True)
    parser.add_argument("--random", type=int, default=40)
    args = parser.parse_args()
    cases = model_cases(args.models or DEFAULT_MODELS) + random_cases(args.random)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, (kind, q_in, q_out, options) in enumerate(cases):
            x, y = Tensor("x", (1, 256), DataType.INT8, q_in), Tensor("y", (1, 256), DataType.INT8, q_out)
            graph = Graph("main", (Op(kind, (x,), (y,), frozen_options(options), 0),), (x,), (y,))
            paths.append(str(Path(tmp) / f"{i}.tflite"))
            Path(paths[-1]).write_bytes(write_tflite(Model(f"lut_{i}", (graph,))))
        lows = [q_in.zero_point[0] if kind == "RSQRT" else -128 for kind, q_in, _, _ in cases]
        (Path(tmp) / "paths.json").write_text(json.dumps(list(zip(paths, lows))))
        subprocess.run([args.litert_python, "-c", _RUN, str(Path(tmp) / "paths.json"), str(Path(tmp) / "out.json")],
                       check=True)
        reference = json.loads((Path(tmp) / "out.json").read_text())
    totals: dict[str, list[int]] = {}
    for path, (kind, q_in, q_out, options) in zip(paths, cases):
        ours = activation_table(kind, DataType.INT8, q_in, q_out, options)
        if reference[path] is None or ours is None:  # both should refuse (TFLite's Prepare fails)
            differing = 0 if reference[path] is None and ours is None else 256
        else:
            differing = int(np.sum(ours != np.array(reference[path], dtype=np.int8)))
        total = totals.setdefault(kind, [0, 0, 0])
        total[0] += 1
        total[1] += differing == 0
        total[2] += differing
        if differing:
            print(f"{kind} in {q_in} out {q_out} {options}: {differing} entries differ")
    for kind, (tables, identical, entries) in sorted(totals.items()):
        print(f"{kind}: {identical}/{tables} tables identical to LiteRT's reference kernel ({entries} entries differ)")


if __name__ == "__main__":
    main()
