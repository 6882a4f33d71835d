"""A reshape the graph passes cannot drop runs on the NPU as a copy, in deployable plans too."""

from __future__ import annotations

from npuplan.ir.graph import Graph
from npuplan.ir.types import DataType

from tests.unit.emit.conftest import emit_graph
from tests.unit.lowering._build import conv, const, fm, op



def test_a_reshape_between_a_concatenation_and_the_network_output_is_an_emitted_copy(tmp_path) -> None:
    x, a, b, c, r = fm("x", (1, 4, 4, 8)), fm("a", (1, 4, 4, 8)), fm("b", (1, 4, 4, 8)), fm("c", (1, 4, 4, 16)), \
        fm("r", (1, 16, 16))
    ops = (conv(x, a, 1, index=0), conv(x, b, 1, index=1), op("CONCATENATION", [a, b], [c], 2, axis=3),
           op("RESHAPE", [c, const("s", [1, 16, 16], DataType.INT32, None)], [r], 3))
    planned, emitted, report = emit_graph(tmp_path, Graph("reshape_copy", ops, (x,), (r,)))
    assert [o.tflite_type for o in planned.lowered.npu_ops].count("RESHAPE") == 1
    # validate_tflite raised on none; the plan may run an op in several pieces (stripes, depth slices)
    # the convolutions write their slices of the concatenation in place: no concatenation copies
    assert report.npu_operations >= len(planned.lowered.npu_ops) == 3
