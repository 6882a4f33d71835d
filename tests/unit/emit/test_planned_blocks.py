"""The emitted stream runs the block config the plan priced when the hardware's rules accept it
(``emit.blocks``), and reads a constant scalar IFM2 from its register, as the block rules and Vela
size the shared buffer for it."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.hw.accelerator import accelerator
from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Tensor
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering import lower
from tests.unit.emit._stream import registers_at_kicks
from tests.unit.lowering._build import conv, fm, graph, model, op

U55_128 = {"accelerator_config": "ethos-u55-128", "system_config": "Ethos_U55_High_End_Embedded",
           "memory_mode": "Shared_Sram"}
SCALAR_BIT = 1 << 7  # IFM2_BROADCAST: IFM2 is the IFM2_SCALAR register


def _conv_op():
    x, y = fm("x", (1, 16, 16, 8)), fm("y", (1, 16, 16, 16))
    (npu,) = lower(model(graph([conv(x, y)], [x], [y])), accelerator("ethos-u55-128"), deployable=True).npu_ops
    return npu


class _NoApi:
    """A backend that must not be asked: the plan's block is kept without the listing."""

    def __getattr__(self, name):  # type: ignore[no-untyped-def]
        raise AssertionError(f"the backend's {name} was called")


def test_a_one_high_block_of_a_row_stripe_is_emitted_as_planned_on_u55_128():
    """The Ethos-U55-128's micro-block is 1 x 2: a 1-high block is valid though the backend's
    listing starts at 2 x 2; a block of no micro-block multiple, or too large, goes to the listing."""
    from npuplan.emit.blocks import hardware_accepts, resolve_block

    npu, u55_128 = _conv_op(), accelerator("ethos-u55-128")
    assert hardware_accepts(npu, (1, 16, 16), u55_128, part_kernel_first=False)
    assert resolve_block(_NoApi(), None, npu, (1, 16, 16), part_kernel_first=False, hardware=u55_128) == (1, 16, 16)
    assert not hardware_accepts(npu, (1, 16, 16), accelerator("ethos-u65-256"), part_kernel_first=False)  # 2 x 2
    assert not hardware_accepts(npu, (1, 15, 16), u55_128, part_kernel_first=False)
    with pytest.raises(AssertionError, match="backend"):
        resolve_block(_NoApi(), None, npu, (1, 15, 16), part_kernel_first=False, hardware=u55_128)


def test_a_constant_scalar_operand_is_read_from_its_register(tmp_path):
    from npuplan.api import plan_and_emit
    from npuplan.ir.graph import Model

    q = Quantization((0.05,), (-3,))
    x, y = fm("x", (1, 8, 8, 16), quant=q), fm("y", (1, 8, 8, 16), quant=Quantization((0.1,), (2,)))
    two = Tensor("two", (), DataType.INT8, Quantization((0.02,), (1,)), np.array(51, dtype=np.int8))
    row = Tensor("row", (1, 1, 1, 16), DataType.INT8, q, np.ones((1, 1, 1, 16), dtype=np.int8))
    z = fm("z", (1, 8, 8, 16), quant=Quantization((0.1,), (2,)))
    g = graph([op("ADD", [x, two], [y], 0, fused_activation_function="NONE"),
               op("ADD", [y, row], [z], 1, fused_activation_function="NONE")], [x], [z])
    path = tmp_path / "scalar.tflite"
    path.write_bytes(write_tflite(Model("scalar", (g,))))
    _, emitted = plan_and_emit(str(path), **U55_128)
    broadcast = registers_at_kicks(emitted.data, "IFM2_BROADCAST")
    scalars = registers_at_kicks(emitted.data, "IFM2_SCALAR")
    assert broadcast[0] & SCALAR_BIT and scalars[0] == 51  # the scalar: its own integer, in its quantization
    assert not broadcast[-1] & SCALAR_BIT  # a 16-element constant is read from memory
