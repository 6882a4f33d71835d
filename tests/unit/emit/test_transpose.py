"""TRANSPOSE emitted as Vela emits it: a 1x1 average pool walking the IFM, writing its OFM with
the height and width strides swapped (the transposed map laid out W x H x C)."""

from __future__ import annotations

import pytest

from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization
from tests.unit.emit._stream import registers_at_kicks
from tests.unit.lowering._build import const

U55_128 = {"accelerator_config": "ethos-u55-128", "system_config": "Ethos_U55_High_End_Embedded",
           "memory_mode": "Shared_Sram"}
U65_DEDICATED = {"accelerator_config": "ethos-u65-256", "system_config": "Ethos_U65_High_End",
                 "memory_mode": "Dedicated_Sram_384KB"}


def _transpose_model(tmp_path) -> str:
    q = Quantization((0.05,), (3,))
    x, y = Tensor("x", (1, 8, 4, 16), DataType.INT8, q), Tensor("y", (1, 4, 8, 16), DataType.INT8, q)
    perm = const("perm", [0, 2, 1, 3], DataType.INT32, None)
    graph = Graph("main", (Op("TRANSPOSE", (x, perm), (y,), frozen_options({}), 0),), (x,), (y,))
    path = tmp_path / "transpose.tflite"
    path.write_bytes(write_tflite(Model("transpose", (graph,))))
    return str(path)


@pytest.mark.parametrize("options", [U55_128, U65_DEDICATED])
def test_a_transpose_writes_with_swapped_strides(vela_api, tmp_path, options):
    from npuplan.emit import plan_and_emit
    from npuplan.regstream import validate_tflite

    planned, emitted = plan_and_emit(_transpose_model(tmp_path), **options)
    assert not planned.lowered.cpu_ops and [o.tflite_type for o in planned.lowered.npu_ops] == ["TRANSPOSE"]
    assert validate_tflite(emitted.data).npu_operations == emitted.npu_operations
    # walking the 8 x 4 x 16 input: one row down is one column of the 4 x 8 x 16 output (16 bytes),
    # one column right is one row of it (8 * 16 bytes)
    assert set(registers_at_kicks(emitted.data, "OFM_STRIDE_Y")) == {16}
    assert set(registers_at_kicks(emitted.data, "OFM_STRIDE_X")) == {128}
    assert set(registers_at_kicks(emitted.data, "OFM_STRIDE_C")) == {1}
