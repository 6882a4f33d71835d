"""Single-operator oracle runs for the datapath tests: write a one-op TFLite model, compile it with
Vela 5.2.0's CLI, take the registers each NPU operation is kicked with, and run the original model
through LiteRT (TFLite's reference kernels).

The functional truth is LiteRT's output of the original model; the registers are Vela's (its files
run on silicon). Skips (pytest) where LiteRT or the ``vela`` CLI is absent.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import tflite

from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Op, Tensor
from npuplan.regstream.tflite_file import ethos_u_payloads
from npuplan.regstream.words import decoded, payload_words

KICKS = ("NPU_OP_CONV", "NPU_OP_DEPTHWISE", "NPU_OP_POOL", "NPU_OP_ELEMENTWISE")


def vela_cli() -> str:
    """The ``vela`` CLI beside this interpreter (or on PATH); skips the test where there is none."""
    local = Path(sys.executable).parent / "vela"
    found = str(local) if local.exists() else shutil.which("vela")
    if found is None:
        pytest.skip("the vela CLI (ethos-u-vela) is not installed")
    return found


def litert() -> object:
    return pytest.importorskip("ai_edge_litert.interpreter", reason="ai_edge_litert (LiteRT) is not installed")


def model_bytes(ops: Sequence[Op], inputs: Sequence[Tensor], outputs: Sequence[Tensor]) -> bytes:
    return write_tflite(Model("one_op", (Graph("main", tuple(ops), tuple(inputs), tuple(outputs)),)))


def compile_with_vela(data: bytes, *, extra: Sequence[str] = ()) -> bytes:
    """Vela's compiled file for ``data`` (Ethos-U55-128, its default system config)."""
    vela = vela_cli()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "m.tflite"
        src.write_bytes(data)
        out = Path(tmp) / "out"
        run = subprocess.run([vela, str(src), "--output-dir", str(out), "--accelerator-config", "ethos-u55-128",
                              *extra], capture_output=True, text=True, timeout=300)
        compiled = out / "m_vela.tflite"
        if run.returncode or not compiled.exists():
            raise AssertionError(f"vela failed: {run.stdout[-2000:]} {run.stderr[-2000:]}")
        return compiled.read_bytes()


Kick = tuple[str, int, dict[str, int], "np.ndarray | None"]


def kicks(compiled: bytes) -> list[Kick]:
    """(operation, parameter, registers, lookup table) of every NPU operation of every ethos-u
    operator, in order; registers as ``npuplan.regstream.events`` keeps them (cmd1: payload |
    parameter << 32); the table: the bytes of the latest DMA from the flash into the NPU's
    internal memory (None before any)."""
    out: list[Kick] = []
    for payload, flash_bytes in ethos_u_payloads(compiled):
        flash = np.frombuffer(flash_bytes, dtype=np.uint8)
        registers: dict[str, int] = {}
        table = None
        for name, param, value, _ in decoded(payload_words(payload).words):
            if value is not None:
                registers[name] = value | ((param & 0xFF) << 32)
            elif not name.startswith("NPU_OP_"):
                registers[name] = param
            elif name in KICKS:
                out.append((name, param, dict(registers), table))
            elif name == "NPU_OP_DMA_START" and registers.get("DMA0_DST_REGION", 0) & (1 << 8):
                start = registers.get("DMA0_SRC", 0)
                table = flash[start:start + registers.get("DMA0_LEN", 0)].astype(np.int64)
    return out


def cpu_operators(compiled: bytes) -> list[str]:
    """The builtin operators Vela left on the CPU."""
    model = tflite.Model.GetRootAsModel(compiled, 0)
    sg = model.Subgraphs(0)
    names = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
    out = []
    for i in range(sg.OperatorsLength()):
        code = model.OperatorCodes(sg.Operators(i).OpcodeIndex())
        if code.CustomCode() != b"ethos-u":
            out.append(names.get(max(code.BuiltinCode(), code.DeprecatedBuiltinCode()), "?"))
    return out


def run_litert(data: bytes, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The original model's outputs by LiteRT's reference kernels."""
    module = litert()
    interpreter = module.Interpreter(model_content=data,  # type: ignore[attr-defined]
                                     experimental_op_resolver_type=module.OpResolverType.BUILTIN_REF)  # type: ignore[attr-defined]
    interpreter.allocate_tensors()
    for detail, value in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(detail["index"], value.astype(detail["dtype"]))
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]).copy() for d in interpreter.get_output_details()]
