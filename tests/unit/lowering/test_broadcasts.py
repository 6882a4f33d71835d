"""A binary elementwise op whose operands both broadcast runs on the NPU when one is a constant:
the constant is written out at the output's shape (as Vela's default core runs an MLP-Mixer's
``x[1, 16, 1] * w[1, 1, 32]``)."""

from __future__ import annotations

import numpy as np

from npuplan.hw.accelerator import accelerator
from npuplan.ir.graph import Graph, Model
from npuplan.ir.lowered import CpuOp, NpuOp
from npuplan.lowering.broadcasts import MAX_MATERIALISED_BYTES, materialise_broadcast_constants
from npuplan.lowering.deployable import folded_inputs_only
from npuplan.lowering.lower import lower

from ._build import const, fm, op


def _outer(rows: int, cols: int) -> Graph:
    x, y = fm("x", (1, rows, 1)), fm("y", (1, rows, cols))
    w = const("w", np.arange(cols, dtype=np.int8).reshape(1, 1, cols))
    return Graph("main", (op("MUL", [x, w], [y], 0, fused_activation_function="NONE"),), (x,), (y,))


def test_the_constant_is_written_out_at_the_output_shape_and_the_op_runs_on_the_npu() -> None:
    graph = _outer(16, 32)
    rewritten, removed = materialise_broadcast_constants(graph)
    assert removed == ()
    wide = rewritten.ops[0].inputs[1]
    assert wide is not None and wide.shape == (1, 16, 32) and wide.data is not None
    assert (wide.data == np.arange(32, dtype=np.int8)).all()
    assert folded_inputs_only(rewritten.ops[0], graph)  # the CPU computes the same with it
    for deployable in (False, True):
        ops = lower(Model("m", (graph,)), accelerator("ethos-u55-256"), deployable=deployable).ops
        assert len(ops) == 1 and isinstance(ops[0], NpuOp), ops


def test_a_constant_too_large_to_write_out_stays_as_it_is() -> None:
    rows = MAX_MATERIALISED_BYTES // 32 + 1
    graph = _outer(rows, 32)
    assert materialise_broadcast_constants(graph)[0].ops[0] is graph.ops[0]
    (cpu,) = lower(Model("m", (graph,)), accelerator("ethos-u55-256")).ops
    assert isinstance(cpu, CpuOp) and "must match the OFM's shape" in cpu.reason
