"""Which operators either Vela 5.2.0 core runs on the NPU that npuplan keeps on the CPU, and back.

Every operator of the given models (zoo directories, tests/random_graphs.py seeds, single files) is
cut out as a one-operator model (its constant inputs kept, its other inputs and its outputs the
network's) and taken once per signature: operator type, input and output dtypes, fused
activation. Each is then placed three ways: npuplan's deployable lowering for Ethos-U55-256 (what
``--emit-tflite`` runs on the NPU), and Vela's default and legacy cores (``vela`` CLI, its default
system config, Ethos-U55-256; an operator is on the NPU when the written file keeps no builtin
operator, which counts an operator Vela removes as on the NPU).

A row per signature: the example's model, npuplan's placement and reason, each Vela core's, and
npuplan's placement when it only plans (no ``--emit-tflite``: the figures it reports).
The lists at the end are the disagreements: ``vela NPU / npuplan CPU`` (to close) and
``npuplan NPU / vela CPU`` (to justify). One results file, bench/results/op_placement.txt.

Usage: python bench/op_placement.py [--zoo DIR ...] [--seeds N] [--model FILE ...] [--jobs 2]
                                    [--out bench/results/op_placement.txt] [--work /tmp/op_placement]
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE.parent))

import tflite  # noqa: E402

from npuplan.errors import NpuplanError  # noqa: E402
from npuplan.hw.accelerator import accelerator  # noqa: E402
from npuplan.io.tflite import read_tflite  # noqa: E402
from npuplan.io.tflite_write import write_tflite  # noqa: E402
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options  # noqa: E402
from npuplan.ir.lowered import CpuOp, LoweredGraph  # noqa: E402
from npuplan.ir.types import DataType, Quantization  # noqa: E402
from npuplan.lowering.lower import lower  # noqa: E402

VELA = "/work/velavenv/bin/vela"
ACCELERATOR = "ethos-u55-256"
SKIPPED = frozenset({"CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "WHILE", "IF", "CALL"})


@dataclass(frozen=True)
class Case:
    signature: str
    source: str
    path: Path
    in_context: str  # npuplan's deployable placement of the operator in its own model


def _dtype(t: Tensor) -> str:
    """``int8``; ``cint8`` for a constant; ``int32u`` for an unquantized integer feature map."""
    unquantized = t.dtype.is_integer and (t.quant is None or not t.quant.is_valid) and not t.is_constant
    return f"{'c' if t.is_constant else ''}{t.dtype}{'u' if unquantized else ''}"


def signature(op: Op) -> str:
    ins = ",".join(_dtype(t) for t in op.inputs if t is not None)
    outs = ",".join(_dtype(t) for t in op.outputs)
    act = op.options.get("fused_activation_function", "NONE")
    return f"{op.type}({ins})->{outs}" + (f" {act}" if act not in ("NONE", None) else "")


def single(op: Op) -> Model:
    """``op`` alone: its non-constant inputs (each once) the network's inputs, its outputs the outputs."""
    inputs = tuple(dict.fromkeys(t for t in op.inputs if t is not None and not t.is_constant and not t.is_variable))
    return Model(op.name, (Graph("main", (op,), inputs, op.outputs),))


def _fm(name: str, dtype: DataType, scale: float | None = 0.05, zero: int = 0) -> Tensor:
    quant = Quantization((scale,), (zero,)) if scale is not None else None
    return Tensor(name, (1, 8, 8, 16), dtype, quant)


def extras() -> Iterator[tuple[str, Model]]:
    """Single operators seen in converter-written files that the zoo lacks: a SOFTMAX with an int16
    output, QUANTIZE from int32, unquantized int32 elementwise ops."""
    i8, i16, i32 = DataType.INT8, DataType.INT16, DataType.INT32
    unary = [("SOFTMAX", _fm("x", i8), _fm("y", i16, 1 / 32768), {"beta": 1.0}),
             ("SOFTMAX", _fm("x", i16, 0.001), _fm("y", i16, 1 / 32768), {"beta": 1.0}),
             ("QUANTIZE", _fm("x", i32, 0.001), _fm("y", i8, 0.05, -3), {}),
             ("QUANTIZE", _fm("x", i32, 0.001), _fm("y", i16, 0.001), {}),
             ("QUANTIZE", _fm("x", i8, 0.05, 2), _fm("y", i32, 0.001), {})]
    for kind, x, y, options in unary:
        yield f"extra/{kind.lower()}_{x.dtype}_{y.dtype}", Model(kind, (Graph("main", (
            Op(kind, (x,), (y,), frozen_options(options)),), (x,), (y,)),))
    for kind in ("ADD", "SUB", "MUL", "MINIMUM", "MAXIMUM"):
        for quantized in (False, True):
            scale = 1.0 if quantized else None
            a, b, y = _fm("a", i32, scale), _fm("b", i32, scale), _fm("y", i32, scale)
            options = {"fused_activation_function": "NONE"} if kind in ("ADD", "SUB", "MUL") else {}
            yield f"extra/{kind.lower()}_int32{'_q' if quantized else ''}", Model(kind, (Graph("main", (
                Op(kind, (a, b), (y,), frozen_options(options)),), (a, b), (y,)),))


def models(args: argparse.Namespace) -> Iterator[tuple[str, Model]]:
    yield from extras()
    for zoo in args.zoo:
        for path in sorted(Path(zoo).glob("*.tflite")):
            try:
                yield f"{Path(zoo).name}/{path.stem}", read_tflite(path)
            except NpuplanError:
                continue
    for path in args.model:
        yield Path(path).stem, read_tflite(path)
    if args.seeds:
        from bench.random_graphs import random_network

        for seed in range(args.seeds):
            yield f"random_graphs/{seed}", random_network(seed)


def in_context(lowered: LoweredGraph | str, op: Op) -> str:
    """npuplan's deployable placement of ``op`` inside its model, lowered (or the error lowering it
    gave): its neighbours may fold it (a RESHAPE whose shape a SHAPE chain computes)."""
    if isinstance(lowered, str):
        return lowered
    names = [t.name for t in op.outputs]  # by name: graph passes may rebuild the op and its tensors
    cpu = next((o for o in lowered.cpu_ops if [t.name for t in o.op.outputs] == names), None)
    return "NPU or removed" if cpu is None else "CPU"


def _lowered(model: Model) -> LoweredGraph | str:
    try:
        return lower(model, accelerator(ACCELERATOR), deployable=True)
    except NpuplanError as error:
        return f"error: {str(error)[:100]}"


def cases(args: argparse.Namespace) -> list[Case]:
    found: dict[str, Case] = {}
    for source, model in models(args):
        lowered: LoweredGraph | str | None = None
        for op in model.main.ops:
            key = signature(op)
            if key in found or op.type in SKIPPED or not op.outputs:
                continue
            path = args.work / f"{len(found):04d}.tflite"
            try:
                path.write_bytes(write_tflite(single(op)))
            except Exception:  # noqa: BLE001 - an op the writer cannot cut out is left out, not fatal
                continue
            lowered = _lowered(model) if lowered is None else lowered
            found[key] = Case(key, source, path, in_context(lowered, op))
    return list(found.values())


def npuplan_placement(path: Path, *, deployable: bool = True) -> str:
    try:
        lowered = lower(read_tflite(path), accelerator(ACCELERATOR), deployable=deployable)
    except NpuplanError as error:
        return f"error: {str(error)[:150]}"
    cpu = [o for o in lowered.ops if isinstance(o, CpuOp)]
    if cpu:
        return f"CPU: {cpu[0].reason[:150]}"
    return "NPU" if lowered.ops else "removed"


def vela_placement(path: Path, work: Path, legacy: bool) -> str:
    out = work / f"{path.stem}_{'legacy' if legacy else 'default'}"
    command = [VELA, str(path), "--output-dir", str(out), "--accelerator-config", ACCELERATOR]
    if legacy:
        command.append("--debug-force-legacy-core")
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    written = out / f"{path.stem}_vela.tflite"
    if run.returncode != 0 or not written.exists():
        last = (run.stderr or run.stdout).strip().splitlines()
        return f"crash: {last[-1][:120] if last else run.returncode}"
    model = tflite.Model.GetRootAsModel(written.read_bytes(), 0)
    sg = model.Subgraphs(0)
    codes = [model.OperatorCodes(sg.Operators(i).OpcodeIndex()) for i in range(sg.OperatorsLength())]
    builtin = [c for c in codes if c.CustomCode() != b"ethos-u"]
    return "CPU" if builtin else "NPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", action="append", default=[])
    parser.add_argument("--model", action="append", default=[])
    parser.add_argument("--seeds", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--work", type=Path, default=Path("/tmp/op_placement"))
    parser.add_argument("--out", type=Path, default=HERE / "results" / "op_placement.txt")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    found = cases(args)
    with ThreadPoolExecutor(args.jobs) as pool:
        default = list(pool.map(lambda c: vela_placement(c.path, args.work, False), found))
        legacy = list(pool.map(lambda c: vela_placement(c.path, args.work, True), found))
    ours = [npuplan_placement(c.path) for c in found]
    planned = [npuplan_placement(c.path, deployable=False) for c in found]
    rows = sorted(zip(found, ours, default, legacy, planned), key=lambda r: r[0].signature)
    version = subprocess.run([VELA, "--version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [f"# python3 bench/op_placement.py {' '.join(sys.argv[1:])}",
             f"# commit {commit}, Vela {version}, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
             f"{ACCELERATOR}; npuplan = deployable lowering", f"# {len(rows)} signatures",
             "signature | example | npuplan deployable | vela default | vela legacy | npuplan plan (not deployable)"]
    lines += [f"{c.signature} | {c.source} | {o} | {d} | {g} | {p}" for c, o, d, g, p in rows]
    npu = lambda s: s in ("NPU", "removed")  # noqa: E731
    missed = [r for r in rows if not npu(r[1]) and (npu(r[2]) or npu(r[3]))]
    extra = [r for r in rows if (npu(r[1]) or npu(r[4])) and r[2] == "CPU" and r[3] == "CPU"]
    lines += ["", f"vela NPU / npuplan deployable CPU: {len(missed)}"]
    lines += [f"  {c.signature} ({c.source}): npuplan {o}; vela default {d}, legacy {g}; npuplan in its model: "
              f"{c.in_context}" for c, o, d, g, _ in missed]
    lines += ["", f"npuplan NPU (deployable or plan) / both vela cores CPU: {len(extra)}"]
    lines += [f"  {c.signature} ({c.source}): deployable {o}; plan {p}" for c, o, _, _, p in extra]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-(len(missed) + len(extra) + 4):]))


if __name__ == "__main__":
    main()
