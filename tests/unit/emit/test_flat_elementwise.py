"""An elementwise op over same-shaped maps whose depth fills no brick runs over a 16-deep view of
the same bytes (as Vela's default core runs it), when that plan is better (fewer cycles, then less
SRAM; issue 25)."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.ofm_views import flat_elementwise_views
from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.ir.shape import Shape4D
from tests.unit.emit.conftest import emit_graph
from tests.unit.lowering._build import const, fm, graph, op

pytest.importorskip("ethosu.vela.api", reason="the deploy extra (ethos-u-vela) is not installed")


def _add(shape: tuple[int, ...]) -> NpuOp:
    a, b, y = fm("a", shape), fm("b", shape), fm("y", shape)
    s = a.shape4d
    return NpuOp("y", "ADD", "Add", BlockType.ELEMENTWISE, a, s, y, s, ifm2=b, ifm2_shape=s, elementwise="ADD")


def test_the_view_is_16_deep_and_as_square_as_the_elements_allow():
    (flat,) = flat_elementwise_views((_add((1, 8, 8, 4)),))
    assert flat.ofm_shape == flat.ifm_shape == flat.ifm2_shape == Shape4D(1, 4, 4, 16)
    (wide,) = flat_elementwise_views((_add((1, 6, 10, 8)),))
    assert wide.ofm_shape == Shape4D(1, 5, 6, 16)
    kept = (_add((1, 8, 8, 16)), _add((1, 3, 3, 5)))  # whole bricks already; elements not a multiple of 16
    assert flat_elementwise_views(kept) == kept


def test_a_flat_add_computes_what_litert_computes(tmp_path, monkeypatch):
    import npuplan.api
    monkeypatch.setattr(npuplan.api, "FLAT_ELEMENTWISE_FORMS", True)  # off by default (api's note)
    pytest.importorskip("ai_edge_litert", reason='LiteRT (the "run" extra) is the reference')
    from npuplan.run import CompiledModel, ReferenceModel, compare_runs

    rng = np.random.default_rng(5)
    x, c, s = fm("x", (1, 8, 8, 8)), fm("c", (1, 8, 8, 8), quant=Quantization((0.07,), (2,))), fm("s", (1, 8, 8, 8))
    w = const("w", rng.integers(-30, 30, (8, 1, 1, 8)))
    b = const("b", rng.integers(-40, 40, 8), DataType.INT32, None)
    ops = [op("CONV_2D", [x, w, b], [c], 0, padding="VALID", stride_h=1, stride_w=1, dilation_h_factor=1,
              dilation_w_factor=1, fused_activation_function="NONE"),
           op("ADD", [c, x], [s], 1, fused_activation_function="NONE")]
    g = graph(ops, [x], [s])
    planned, emitted, report = emit_graph(tmp_path, g)
    add = next(o for o in planned.lowered.npu_ops if o.tflite_type == "ADD")
    assert add.ofm_shape == Shape4D(1, 4, 8, 16)  # as fast as the 8-deep add, in half the SRAM
    assert report.npu_operations == emitted.npu_operations
    diffs = compare_runs(CompiledModel(emitted.data), ReferenceModel((tmp_path / f"{g.name}.tflite").read_bytes(),
                                                                  reference_kernels=True),
                         samples=2, seed=0)
    # against LiteRT's reference kernels (TFLite Micro's): its optimised 1x1 conv rounds 2 of these
    # 1,024 elements otherwise, in Vela's file too
    assert all(d.differing == 0 for d in diffs), [str(d) for d in diffs]
