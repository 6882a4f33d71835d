"""MEAN emitted as Vela's decomposition: depthwise sums of ones into int32 (scale 1), a Mul by
TFLite's reference multiplier with its shift as the output scale."""

from __future__ import annotations

import struct

import numpy as np

from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering.fixedpoint import mean_scaling
from npuplan.regstream.events import NpuEvent
from tests.unit.emit._stream import registers_at_kicks
from tests.unit.emit.test_emit import _buffer, _ops
from tests.unit.lowering._build import const

U55_128 = {"accelerator_config": "ethos-u55-128", "system_config": "Ethos_U55_High_End_Embedded",
           "memory_mode": "Shared_Sram"}
# op_mean of the zoo: its quantizations, and the multiplier in Vela 5.2.0's file for it
IN_Q, OUT_Q = Quantization((0.03484709933400154,), (10,)), Quantization((0.0016524639213457704,), (20,))


def test_mean_scaling_is_tflites_reference_as_in_vela_file():
    assert mean_scaling(IN_Q.scale[0], OUT_Q.scale[0], 16 * 16) == (1415189294, -3)
    m, s = mean_scaling(1.0, 1.0, 49)  # 1/49: the count folded into the multiplier
    assert abs(m * 2.0 ** (s - 31) - 1 / 49) < 1e-9


def test_a_mean_runs_on_the_npu_with_vela_scaling(tmp_path):
    from npuplan.api import plan_and_emit
    from npuplan.regstream import validate_tflite

    x, y = Tensor("x", (1, 16, 16, 8), DataType.INT8, IN_Q), Tensor("y", (1, 1, 1, 8), DataType.INT8, OUT_Q)
    axes = const("axes", np.array([1, 2]), DataType.INT32, None)
    graph = Graph("main", (Op("MEAN", (x, axes), (y,), frozen_options({"keep_dims": True}), 0),), (x,), (y,))
    path = tmp_path / "mean.tflite"
    path.write_bytes(write_tflite(Model("mean", (graph,))))
    planned, emitted = plan_and_emit(path, **U55_128)
    assert not planned.lowered.cpu_ops
    report = validate_tflite(emitted.data)
    kinds = [e.kind for s in report.streams for e in s.events if isinstance(e, NpuEvent)]
    # the sums in one position, or in parallel rows then added (whichever the plan prices cheaper)
    assert kinds[0] == "DepthWise" and set(kinds[1:]) == {"ElementWise"}
    scale = registers_at_kicks(emitted.data, "OFM_SCALE")[-1]
    assert (scale & 0xFFFFFFFF, scale >> 32) == (1, 31 + 3)  # Vela's shift: 31 - (-3)
    mul = [e for s in report.streams for e in s.events if isinstance(e, NpuEvent)][-1]
    model, ops = _ops(emitted.data)
    flash = _buffer(model, int(ops[0][1].InputsAsNumpy()[1]))
    assert mul.ifm2 is not None and mul.ifm2.region == 0
    assert struct.unpack("<i", flash[mul.ifm2.bases[0]:mul.ifm2.bases[0] + 4])[0] == 1415189294



def test_a_mean_written_into_a_concatenation_scales_by_its_own_window():
    """A MEAN whose output a CONCATENATION reads may write its slice in place (its Mul's OFM is
    the concatenation): the elements averaged are the MEAN's input over the Mul's own OFM view,
    not over the concatenation (a count of 0: 'negative shift count' emitting zoo3/vit_32p8)."""
    from dataclasses import replace

    from npuplan.emit.mean import mean_rescale
    from npuplan.ir.lowered import BlockType, NpuOp
    from npuplan.ir.shape import Shape4D

    x = Tensor("x", (1, 16, 16, 8), DataType.INT8, IN_Q)
    sums = Tensor("sums", (1, 1, 1, 8), DataType.INT32, Quantization((1.0,), (0,)))
    m, cat = Tensor("m", (1, 1, 1, 8), DataType.INT8, OUT_Q), Tensor("cat", (1, 1, 1, 64), DataType.INT8, OUT_Q)
    one = Shape4D(1, 1, 1, 8)
    dw = NpuOp("m_sums", "MEAN", "DepthwiseConv2DBias", BlockType.DEPTHWISE, x, x.shape4d, sums, one, source_index=0)
    mul = NpuOp("m", "MEAN", "Mul", BlockType.ELEMENTWISE, sums, one, m, one, ifm2=sums, ifm2_shape=one,
                elementwise="MUL", source_index=0)
    in_place = replace(mul, ofm=cat, ofm_write_offset=Shape4D(0, 0, 0, 8), ofm_write_shape=one)
    assert mean_rescale(in_place, (dw, in_place)) == mean_rescale(mul, (dw, mul))
