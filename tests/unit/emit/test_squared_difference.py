"""SQUARED_DIFFERENCE emitted as Vela's legacy decomposition: each input widened to 32 bits shifted
left by 7 (a 1x1 depthwise cast), multiplied by its constant multiplier with the shift in the output
stage, subtracted, squared, and multiplied to the output scale."""

from __future__ import annotations

from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.decompose import squared_difference_scaling
from tests.unit.emit._stream import registers_at_kicks
from tests.unit.emit.conftest import emit_graph

QA, QB, QOUT = Quantization((0.05,), (-3,)), Quantization((0.03,), (4,)), Quantization((0.1,), (-128,))


def _round_shift(x: int, shift: int) -> int:
    return (x + (1 << (shift - 1))) >> shift if shift > 0 else x


def test_the_scaling_computes_the_squared_difference():
    """The integer steps the stream runs give (a - b)^2 in the output's scale, within one step."""
    (m1, s1), (m2, s2), (mo, so), left = squared_difference_scaling(QA, QB, QOUT, DataType.INT8)
    assert left == 7
    for x, y in ((-128, 127), (0, 0), (100, -50), (-3, 4), (27, -100)):
        a = _round_shift(((x + 3) << left) * m1, s1)
        b = _round_shift(((y - 4) << left) * m2, s2)
        out = _round_shift((a - b) ** 2 * mo, so) - 128
        real = ((x + 3) * 0.05 - (y - 4) * 0.03) ** 2 / 0.1 - 128
        assert abs(min(out, 127) - min(real, 127)) <= 1


def test_squared_difference_runs_on_the_npu(tmp_path):
    from npuplan.regstream.events import NpuEvent

    a = Tensor("a", (1, 8, 8, 16), DataType.INT8, QA)
    b = Tensor("b", (1, 8, 8, 1), DataType.INT8, QB)
    y = Tensor("y", (1, 8, 8, 16), DataType.INT8, QOUT)
    graph = Graph("sqd", (Op("SQUARED_DIFFERENCE", (a, b), (y,), frozen_options({}), 0),), (a, b), (y,))
    _, emitted, report = emit_graph(tmp_path, graph)
    kinds = [e.kind for s in report.streams for e in s.events if isinstance(e, NpuEvent)]
    assert set(kinds) == {"DepthWise", "ElementWise"} and kinds[-1] == "ElementWise"  # stripes of 7 operations
    *_, (mo, so), _ = squared_difference_scaling(QA, QB, QOUT, DataType.INT8)
    scale = registers_at_kicks(emitted.data, "OFM_SCALE")[-1]
    assert (scale & 0xFFFFFFFF, scale >> 32) == (mo, so)
