"""Dilated convolutions run in phases over strided views (``lowering.dilation_phases``), emitted and
run on the simulator: the same outputs as the kernel spread with zero taps, bit for bit, and as
LiteRT's within the output stage's rounding, for rates 2-6, odd sizes, SAME/VALID, strides,
depthwise (a multiplier keeps the spread kernel)."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.ir.graph import Graph, Model
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.lower import Form
from tests.unit.lowering._build import const, fm, op

U55_128 = {"accelerator_config": "ethos-u55-128", "system_config": "Ethos_U55_High_End_Embedded",
           "memory_mode": "Shared_Sram"}
IN_Q = Quantization(scale=(0.05,), zero_point=(-3,))
OUT_Q = Quantization(scale=(0.4,), zero_point=(5,))


def _graph(*, size: tuple[int, int], depth: int, rate: int, kernel: int, stride: int, padding: str,
           depthwise: bool, multiplier: int = 1) -> Graph:
    rng = np.random.default_rng(rate * 31 + size[0] * 7 + stride)
    h, w = size
    extent = (kernel - 1) * rate + 1
    out_h, out_w = ((-(-h // stride), -(-w // stride)) if padding == "SAME"
                    else ((h - extent) // stride + 1, (w - extent) // stride + 1))
    out_depth = depth * multiplier if depthwise else 8
    x, y = fm("x", (1, h, w, depth), quant=IN_Q), fm("y", (1, out_h, out_w, out_depth), quant=OUT_Q)
    shape = (1, kernel, kernel, out_depth) if depthwise else (out_depth, kernel, kernel, depth)
    weights = const("w", rng.integers(-127, 128, shape), quant=Quantization(scale=(0.01,), zero_point=(0,)))
    bias = const("b", rng.integers(-500, 500, out_depth), DataType.INT32, None)
    options = dict(padding=padding, stride_h=stride, stride_w=stride, dilation_h_factor=rate, dilation_w_factor=rate,
                   fused_activation_function="NONE")
    if depthwise:
        options["depth_multiplier"] = multiplier
    conv = op("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", [x, weights, bias], [y], 0, **options)
    return Graph("main", (conv,), (x,), (y,))


def _outputs(monkeypatch, path, inputs, *, phases: bool):
    """The emitted file's ops and outputs on the simulator with only the phased (or the spread) lowering
    planned (the graph's one operator, index 0, in phases or not)."""
    from npuplan import api, plan_forms
    from npuplan.run.runner import CompiledModel

    def variants(self, accel, *, concat_in_place, deployable=False, cpu_ops=frozenset(), staged_forms=True):
        return [self.lowered(accel, deployable=deployable, cpu_ops=cpu_ops,
                             other_forms=frozenset({(0, Form('phased'))}) if phases else frozenset())]

    with monkeypatch.context() as patch:
        patch.setattr(api.PreparedModel, "variants", variants)
        patch.setattr(plan_forms, "_other_forms_where_cheaper", lambda model, variants, arch, options: variants)
        planned, emitted = api.plan_and_emit(path, **U55_128)
    assert not planned.lowered.cpu_ops
    ops = planned.lowered.npu_ops
    return list(ops), CompiledModel(emitted.data).invoke(inputs)


CASES = [  # size, depth, rate, kernel, stride, padding, depthwise, multiplier
    ((13, 11), 5, 3, 3, 1, "SAME", False, 1),
    ((17, 15), 8, 4, 3, 1, "VALID", False, 1),
    ((19, 9), 3, 5, 2, 2, "SAME", False, 1),
    ((20, 21), 16, 6, 3, 1, "SAME", True, 1),
    ((11, 14), 7, 3, 3, 2, "VALID", True, 1),
    ((12, 12), 4, 2, 3, 1, "SAME", False, 1),
    ((14, 13), 3, 3, 3, 1, "SAME", True, 2),
]


@pytest.mark.parametrize("size,depth,rate,kernel,stride,padding,depthwise,multiplier", CASES)
def test_phases_run_as_the_spread_kernel_and_litert(tmp_path, monkeypatch, size, depth, rate, kernel, stride, padding,
                                                    depthwise, multiplier):
    from npuplan.io.tflite_write import write_tflite
    from npuplan.run.litert import ReferenceModel

    graph = _graph(size=size, depth=depth, rate=rate, kernel=kernel, stride=stride, padding=padding,
                   depthwise=depthwise, multiplier=multiplier)
    path = tmp_path / "dilated.tflite"
    data = write_tflite(Model("dilated", (graph,)))
    path.write_bytes(data)
    x = np.random.default_rng(7).integers(-128, 128, (1, *size, depth), dtype=np.int8)
    phased_ops, phased = _outputs(monkeypatch, path, [x], phases=True)
    spread_ops, spread = _outputs(monkeypatch, path, [x], phases=False)
    splits = rate > 2 and multiplier == 1
    assert all(o.strided_views for o in phased_ops) == splits
    step = rate // (2 if rate % 2 == 0 else 1)
    assert len(phased_ops) == (step * step if splits else 1)
    assert len(spread_ops) == 1 or multiplier > 1
    assert np.array_equal(phased[0], spread[0])
    expected = ReferenceModel(data, label="the model").invoke([x])[0]
    assert np.abs(phased[0].astype(np.int32) - expected.astype(np.int32)).max() <= 1


@pytest.mark.parametrize("size,rate,phased", [((48, 48), 3, True), ((6, 6), 5, False)])
def test_the_planner_keeps_the_phases_where_the_cost_model_finds_them_cheaper(tmp_path, size, rate, phased):
    """A 3x3 at rate 3 over a 48x48 map: 9 taps in 9 phases beat 49 taps; at rate 5 over a 6x6 map
    25 phases of 2x2 maps, each reading all the weights, do not (aspp_48's branches)."""
    from npuplan.api import plan
    from npuplan.io.tflite_write import write_tflite

    path = tmp_path / "dilated.tflite"
    path.write_bytes(write_tflite(Model("dilated", (_graph(size=size, depth=24, rate=rate, kernel=3, stride=1,
                                                           padding="SAME", depthwise=False),))))
    planned = plan(path, **U55_128)
    assert any(o.strided_views for o in planned.lowered.npu_ops) == phased


def test_identical_weight_records_are_stored_once_in_the_flash():
    """Each phase reads the layer's weights: one record in the flash, not one per phase."""
    from npuplan.emit.layout import _Flash, _place_records
    from npuplan.emit.weights import EncodedOp, EncodedSlice

    def encoded(name: str, data: bytes) -> EncodedOp:
        return EncodedOp(name, (EncodedSlice(0, 0, 16, data, ()),), False, 16)

    flash = _Flash()
    offsets = _place_records(flash, [encoded("y_phase_0_0", b"w" * 48), encoded("y_phase_0_1", b"w" * 48),
                                     encoded("z", b"v" * 32)])
    assert offsets[("y_phase_0_0", 0)] == offsets[("y_phase_0_1", 0)] != offsets[("z", 0)]
    assert len(flash.joined()) == 48 + 32
