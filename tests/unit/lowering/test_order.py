"""Vela's pass order (``vela_pass_order``) on lowered graphs built in code."""

from __future__ import annotations

import numpy as np

from npuplan.hw.accelerator import accelerator
from npuplan.ir.types import DataType
from npuplan.lowering import lower

from ._build import conv, fm, graph, i32, model, op


def _order(ops, inputs, outputs):  # type: ignore[no-untyped-def]
    return [o.name for o in lower(model(graph(ops, inputs, outputs)), accelerator("ethos-u55-128")).npu_ops]


def test_a_concatenation_copies_each_input_just_after_its_branch() -> None:
    """stem -> (a, b -> b2) -> concat: stem, a, a's copy, b, b2, b2's copy (Vela 5.2.0 legacy runs
    a generated Inception cell so; the file order put both copies last)."""
    x, s, a, b, b2, y = (fm("x", (1, 8, 8, 4)), fm("s", (1, 8, 8, 8)), fm("a", (1, 8, 8, 8)), fm("b", (1, 8, 8, 8)),
                         fm("b2", (1, 8, 8, 8)), fm("y", (1, 8, 8, 16)))
    ops = [conv(x, s, index=0), conv(s, a, index=1), conv(s, b, index=2), conv(b, b2, index=3),
           op("CONCATENATION", [a, b2], [y], 4, axis=3)]
    names = _order(ops, [x], [y])
    assert names[:2] == ["s", "a"] and names[3:5] == ["b", "b2"]
    assert "avgpool" in names[2] and "avgpool" in names[5]


def test_a_second_output_reading_a_shared_map_runs_before_the_branch_after_it() -> None:
    """conv -> ARG_MAX (second output) and conv -> tail (first output): the shared map's producer is
    taken once both readers are, so the ARG_MAX's operations run before the tail (random_539 of the
    seed-500 set, as Vela runs it)."""
    x, s, idx, y = fm("x", (1, 4, 4, 4)), fm("s", (1, 4, 4, 8)), fm("idx", (1, 4, 4), DataType.INT32, None), \
        fm("y", (1, 4, 4, 8))
    ops = [conv(x, s, index=0), conv(s, y, index=1), op("ARG_MAX", [s, i32("axis", np.int32(3))], [idx], 2,
                                                         output_type=2)]
    names = _order(ops, [x], [y, idx])
    assert names[0] == "s" and names[-1] == "y" and len(names) > 2


def test_operators_on_resource_variables_keep_the_file_s_order() -> None:
    """CALL_ONCE feeds nothing and ASSIGN_VARIABLE writes nothing: only their effects order them.
    The initialiser runs before the read, the store after it (the post-order from the outputs
    alone put CALL_ONCE after the READ_VARIABLE, which then read an uninitialised variable)."""
    from npuplan.ir.graph import Tensor
    from npuplan.lowering.order import vela_order

    handle, x, state, y = (Tensor("h", (), DataType.RESOURCE), fm("x", (1, 4, 4, 8)), fm("state", (1, 4, 4, 8)),
                           fm("y", (1, 4, 4, 8)))
    ops = [op("CALL_ONCE", [], [], 0, init_subgraph_index=1), op("VAR_HANDLE", [], [handle], 1),
           op("READ_VARIABLE", [handle], [state], 2), op("ADD", [x, state], [y], 3, fused_activation_function="NONE"),
           op("ASSIGN_VARIABLE", [handle, y], [], 4)]
    ordered = [o.type for o in vela_order(graph(ops, [x], [y])).ops]
    assert ordered == ["CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ADD", "ASSIGN_VARIABLE"]
