"""Vela 5.2.0's legacy-core NPU LSTM (tests/data/stateful: bench/zoo/lstm_models.py's lstm_tm_t4_b2,
``vela --debug-force-legacy-core``) against LiteRT: the simulator runs every one of its operations
(int8 x int8 -> int16 gate convolutions, int16 ADD with a fused SIGMOID/TANH and its clamps, int16
MULs scaled by 2**30 / 2**45 and 2**49, the cell state's TANH through a POOL scaled by 6, the int16
x int16 -> int8 hidden MUL) as TFLite's integer LSTM computes them, apart from the two differences
the README names, both in Vela's file (which runs on silicon), neither in the simulator:

- the hidden MUL's OFM zero point is the output's (-1), where TFLite adds the hidden intermediate's
  (0): every element of the first step is one below LiteRT's;
- the NPU's SIGMOID/TANH are the int16 table (as TensorFlow Lite Micro's LSTM), LiteRT's LSTM kernel
  computes gemmlowp's fixed-point functions: off by one now and then, compounding over the steps.

Unchanged, 330 of 384 elements differ over 3 invocations (the first step pinned by
tests/unit/run/test_regressions.py). With those two replaced in the datapath (the zero point, and
gemmlowp's functions from ``tests/unit/sim/_gemmlowp.py``), the file reproduces LiteRT bit for bit
over 8 invocations; a mistake anywhere else in the simulator's arithmetic would show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("ai_edge_litert.interpreter", reason="ai_edge_litert (LiteRT), the oracle, is not installed")

import npuplan.sim.datapath as datapath  # noqa: E402
from npuplan.run import CompiledModel, ReferenceModel, random_inputs  # noqa: E402
from npuplan.sim.output_stage import ofm_type  # noqa: E402
from tests.unit.sim import _gemmlowp  # noqa: E402

STATEFUL = Path(__file__).resolve().parents[2] / "data" / "stateful"
ELEMENTWISE_ADD, ELEMENTWISE_MUL = 1, 0
TANH, SIGMOID = 3, 4
GATE_INTEGER_BITS = 3  # TFLite's gates are Q3.12
CELL_INTEGER_BITS = 4  # the cell state's scale 2**-11: Q4.11


def _as_tflites_lstm(compute: Any) -> Any:
    """``datapath.compute`` with the hidden zero point and the activations as LiteRT's LSTM has them."""

    def patched(op: str, param: int, regs: dict[str, int], ifm: np.ndarray, ifm2: np.ndarray | None = None,
                **kwargs: Any) -> np.ndarray:
        function = regs.get("ACTIVATION", 0) & 0x1F
        if op == "NPU_OP_ELEMENTWISE" and param == ELEMENTWISE_MUL and ofm_type(regs.get("OFM_PRECISION", 0)).bits == 8:
            regs = {**regs, "OFM_ZERO_POINT": 0}
        if op == "NPU_OP_ELEMENTWISE" and param == ELEMENTWISE_ADD and function in (TANH, SIGMOID):
            gate = np.clip(np.asarray(ifm, dtype=np.int64) + np.asarray(ifm2, dtype=np.int64), -32768, 32767)
            return (_gemmlowp.sigmoid if function == SIGMOID else _gemmlowp.tanh)(gate, GATE_INTEGER_BITS)
        if op == "NPU_OP_POOL" and function == TANH:
            return _gemmlowp.tanh(np.asarray(ifm, dtype=np.int64), CELL_INTEGER_BITS)
        return compute(op, param, regs, ifm, ifm2, **kwargs)

    return patched


def _differing(compiled: CompiledModel, reference: ReferenceModel, invocations: int) -> list[int]:
    """Differing elements per invocation, the inputs seeded, the states carried over."""
    rng = np.random.default_rng(0)
    counts = []
    for _ in range(invocations):
        inputs = random_inputs(reference.input_specs, rng)
        counts.append(int(np.count_nonzero(compiled.invoke(inputs)[0] != reference.invoke(inputs)[0])))
    return counts


def _models() -> tuple[CompiledModel, ReferenceModel]:
    compiled = CompiledModel((STATEFUL / "lstm_tm_t4_b2_legacy_vela.tflite").read_bytes())
    reference = ReferenceModel((STATEFUL / "lstm_tm_t4_b2.tflite").read_bytes(), reference_kernels=True)
    return compiled, reference


def test_velas_legacy_lstm_is_litert_once_the_two_named_differences_are_taken_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(datapath, "compute", _as_tflites_lstm(datapath.compute))
    assert _differing(*_models(), invocations=8) == [0] * 8
