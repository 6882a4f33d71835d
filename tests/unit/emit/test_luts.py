"""LUT activations emitted as Vela emits them: an ADD of zero whose output stage looks the value
up in a table the lowering computed, DMA'd from the flash tensor into a slot of the NPU's
internal memory before the operation (again after an operation that may overwrite it)."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.emit.luts import lut_address
from npuplan.hw.accelerator import accelerator
from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization
from npuplan.regstream.events import INTERNAL_REGION, DmaEvent
from tests.unit.emit._stream import registers_at_kicks
from tests.unit.emit.test_emit import _buffer, _ops
from tests.unit.lowering._build import conv

U55_64 = {"accelerator_config": "ethos-u55-64", "system_config": "Ethos_U55_Deep_Embedded",
          "memory_mode": "Shared_Sram", "optimise": "Size"}
U55_128 = {"accelerator_config": "ethos-u55-128", "system_config": "Ethos_U55_High_End_Embedded",
           "memory_mode": "Shared_Sram"}
TABLE_LOOKUP = 16  # the ACTIVATION register's table-lookup function; slot k adds k


def _tanh_twice(tmp_path) -> str:
    """conv -> TANH -> conv -> TANH, both TANHs with the same quantization (one table)."""
    q = Quantization((0.05,), (3,))
    t = Quantization((1 / 128,), (0,))
    x, a = Tensor("x", (1, 8, 8, 16), DataType.INT8, q), Tensor("a", (1, 8, 8, 16), DataType.INT8, q)
    b, c = Tensor("b", (1, 8, 8, 16), DataType.INT8, t), Tensor("c", (1, 8, 8, 16), DataType.INT8, q)
    y = Tensor("y", (1, 8, 8, 16), DataType.INT8, t)
    ops = (conv(x, a, 1, index=0), Op("TANH", (a,), (b,), frozen_options({}), 1), conv(b, c, 1, index=2),
           Op("TANH", (c,), (y,), frozen_options({}), 3))
    path = tmp_path / "tanh_twice.tflite"
    path.write_bytes(write_tflite(Model("tanh_twice", (Graph("main", ops, (x,), (y,)),))))
    return str(path)


def _lut_dmas(data: bytes):
    from npuplan.regstream import validate_tflite

    return [e for s in validate_tflite(data).streams for e in s.events
            if isinstance(e, DmaEvent) and e.dst.region == INTERNAL_REGION]


@pytest.mark.parametrize(("options", "loads"), [(U55_128, 1), (U55_64, 2)])
def test_a_table_is_loaded_once_where_nothing_else_uses_its_banks(tmp_path, options, loads):
    """Ethos-U55-128 reserves the table banks: the second TANH finds its table loaded. On the
    64-MAC Ethos-U55 the conv between them may use those banks, so the table is loaded again."""
    from npuplan.api import plan_and_emit

    planned, emitted = plan_and_emit(_tanh_twice(tmp_path), **options)
    luts = [o for o in planned.lowered.npu_ops if o.lut is not None]
    assert len(luts) == 2 and not planned.lowered.cpu_ops
    dmas = _lut_dmas(emitted.data)
    assert len(dmas) == loads
    slot0 = lut_address(accelerator(options["accelerator_config"]), 0)
    assert all(d.dst.address == slot0 and d.dst.length == d.src.length == 256 for d in dmas)
    model, ops = _ops(emitted.data)
    flash = _buffer(model, int(ops[0][1].InputsAsNumpy()[1]))
    for d in dmas:  # the table DMA'd is the one the lowering computed, read from the flash tensor
        assert flash[d.src.address:d.src.address + 256] == np.ascontiguousarray(luts[0].lut).tobytes()
    assert registers_at_kicks(emitted.data, "ACTIVATION").count(TABLE_LOOKUP) >= 2


def test_the_lut_operation_does_not_rescale(tmp_path):
    """The table maps input values to output values: the ADD's output stage keeps the IFM's
    quantization (OFM zero point = the IFM's, 3), as Vela forces it."""
    from npuplan.api import plan_and_emit

    _, emitted = plan_and_emit(_tanh_twice(tmp_path), **U55_128)
    acts = registers_at_kicks(emitted.data, "ACTIVATION")
    zero_points = registers_at_kicks(emitted.data, "OFM_ZERO_POINT")
    assert {z for a, z in zip(acts, zero_points) if a == TABLE_LOOKUP} == {3}


class _Api:
    """The two API constructors ``LutSlots`` uses, recording what it builds."""

    @staticmethod
    def NpuAddressRange(region, address, length):  # noqa: N802 - the API's name
        return (region, address, length)

    @staticmethod
    def NpuDmaOperation(src, dest):  # noqa: N802
        class Dma:
            pass
        dma = Dma()
        dma.src, dma.dest = src, dest
        return dma


def _lut_op(name: str) -> object:
    from types import SimpleNamespace

    return SimpleNamespace(name=name, lut=np.zeros(256, dtype=np.int8))


def test_slots_rotate_and_a_loaded_table_is_reused():
    from types import SimpleNamespace

    from npuplan.emit.luts import LutSlots

    u55_128 = accelerator("ethos-u55-128")
    offsets = {f"t{k}": 256 * k for k in range(10)}
    slots = LutSlots(_Api, u55_128, offsets)
    loads = [slots.load(_lut_op(f"t{k}")) for k in range(9)]  # nine tables, eight slots
    assert [slot for _, slot in loads] == [0, 1, 2, 3, 4, 5, 6, 7, 0]
    assert all(len(dmas) == 1 for dmas, _ in loads)
    assert slots.load(_lut_op("t8")) == ([], 0)  # still loaded
    dmas, slot = slots.load(_lut_op("t0"))  # evicted by t8: loaded again, in the next slot
    assert len(dmas) == 1 and slot == 1 and dmas[0].dest == (0x103, lut_address(u55_128, 1), 256)
    slots.load(SimpleNamespace(name="conv", lut=None))  # banks reserved on the 128-MAC Ethos-U55: kept
    assert slots.load(_lut_op("t0")) == ([], 1)


@pytest.mark.parametrize(("options", "priced"), [(U55_128, [True, False]), (U55_64, [True, True])])
def test_the_plan_prices_the_table_loads_the_stream_makes(tmp_path, options, priced):
    """The plan charges a table's DMA to the ops whose stream loads it (``hw.lut_slots``): once on
    the Ethos-U55-128, twice on the U55-64 (the conv between may overwrite it)."""
    from npuplan.api import plan
    from npuplan.cost import Purpose

    planned = plan(_tanh_twice(tmp_path), **options)
    luts = [s for s in planned.schedule.ops if s.op.lut is not None]
    assert [any(p is Purpose.LUT for _, p, _ in s.cost.bytes) for s in luts] == priced
