"""TRANSPOSE_CONV lowering: a stride-1 convolution over the IFM upscaled by the stride."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.cost import BlockChoice, CostQuery, Operand, WeightAccess, op_cost
from npuplan.hw import build_architecture
from npuplan.hw.accelerator import accelerator
from npuplan.hw.block_config import choose_block_config
from npuplan.hw.memory import MemArea
from npuplan.ir.lowered import BlockType, CpuOp, NpuOp, Padding, Resampling
from npuplan.ir.types import DataType
from npuplan.lowering import lower
from npuplan.options import PlanOptions

from ._build import const, fm, graph, model, op

U55_128 = accelerator("ethos-u55-128")


def tconv(ifm_hw: tuple[int, int], ofm_hw: tuple[int, int], k: int, stride: int, padding: str,
          *, cin: int = 8, cout: int = 16) -> tuple[list[NpuOp], list[CpuOp]]:
    x, y = fm("x", (1, *ifm_hw, cin)), fm("y", (1, *ofm_hw, cout))
    weights = const("w", np.arange(cout * k * k * cin).reshape(cout, k, k, cin) % 7 - 3)
    shape = const("shape", [1, *ofm_hw, cout], DataType.INT32, None)
    bias = const("b", np.zeros(cout), DataType.INT32, None)
    t = op("TRANSPOSE_CONV", [shape, weights, x, bias], [y], 0, padding=padding, stride_h=stride, stride_w=stride,
           fused_activation_function="NONE")
    lg = lower(model(graph([t], [x], [y])), U55_128)
    return list(lg.npu_ops), list(lg.cpu_ops)


def test_stride2_same_is_a_conv_over_the_transposed_upscaled_ifm() -> None:
    (npu,), cpu = tconv((16, 16), (32, 32), 3, 2, "SAME")
    assert not cpu
    assert (npu.op_type, npu.block_type, npu.tflite_type) == ("Conv2DBackpropInputSwitchedBias", BlockType.CONV,
                                                               "TRANSPOSE_CONV")
    assert npu.resampling is Resampling.TRANSPOSE and npu.ifm.name == "x" and npu.ofm.name == "y"
    assert (npu.ifm_shape.h, npu.ofm_shape.h) == (16, 32) and (npu.kernel.stride_y, npu.kernel.stride_x) == (1, 1)
    # Vela's upscaled SAME padding: the trailing zeros of the upscaled IFM already pad the bottom
    assert npu.kernel.padding == Padding(top=2, left=2, bottom=0, right=0)
    assert npu.bias is not None and npu.bias_tensor is not None and npu.bias_tensor.name == "b"


def test_weights_are_flipped_in_height_and_width() -> None:
    (npu,), _ = tconv((16, 16), (32, 32), 3, 2, "SAME")
    original = np.arange(16 * 3 * 3 * 8).reshape(16, 3, 3, 8) % 7 - 3
    assert npu.weights is not None
    assert np.array_equal(npu.weights, original[:, ::-1, ::-1, :])


def test_valid_and_stride1_padding() -> None:
    (valid,), _ = tconv((16, 16), (33, 33), 3, 2, "VALID")
    assert valid.kernel.padding == Padding(top=2, left=2, bottom=1, right=1)
    (plain,), _ = tconv((16, 16), (16, 16), 3, 1, "SAME")
    assert plain.resampling is Resampling.NONE and plain.kernel.padding == Padding(1, 1, 1, 1)


@pytest.mark.parametrize("ifm_hw, ofm_hw, k, stride, padding, words", [
    ((16, 16), (48, 48), 3, 3, "SAME", "Stride values WxH must be 1x1 or 2x2"),
    ((16, 16), (32, 32), 3, 2, "VALID", "VALID padding: OFM dimensions"),
    ((16, 16), (33, 33), 3, 2, "SAME", "SAME padding: OFM dimensions"),
])
def test_unsupported_geometry_stays_on_cpu_with_reason(ifm_hw, ofm_hw, k, stride, padding, words) -> None:
    npu, (cpu,) = tconv(ifm_hw, ofm_hw, k, stride, padding)
    assert not npu and words in cpu.reason


def test_datapath_cycles_match_vela_for_the_upscaled_conv() -> None:
    # 16x16x8 -> 32x32x16, 3x3, stride 2 SAME on u55-128: Vela 5.2.0 legacy reports 14880 NPU cycles
    # of which 1568 are the DMA of its buffered 1504-byte weight stream: 13312 datapath cycles, with
    # OFM block 8x16x16 fed by a 5x10 IFM block (ceil((8 - 1 + 3) / 2) rows, ceil((16 - 1 + 3) / 2)
    # columns rounded to the micro-block: the IFM is read at its own resolution)
    (npu,), _ = tconv((16, 16), (32, 32), 3, 2, "SAME")
    arch = build_architecture(PlanOptions("ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                                          memory_mode="Shared_Sram"))
    config = choose_block_config(npu, arch.accelerator)
    assert config.vela_repr == (8, 16, 8, 16) and (config.ifm_block.height, config.ifm_block.width) == (5, 10)
    query = CostQuery(op=npu, block=BlockChoice.of(config), ifm=Operand(npu.ifm_shape, MemArea.SRAM),
                      ofm=Operand(npu.ofm_shape, MemArea.SRAM), weights=WeightAccess(1504, MemArea.OFF_CHIP_FLASH))
    cost = op_cost(query, arch)
    assert cost.op_cycles == 13312
    assert cost.nn_macs == 3 * 3 * 8 * 32 * 32 * 16


def test_a_relu_keeping_the_quantization_fuses_into_the_transpose_conv() -> None:
    x, t, y = fm("x", (1, 8, 8, 4)), fm("t", (1, 16, 16, 4)), fm("y", (1, 16, 16, 4))
    weights = const("w", np.ones((4, 3, 3, 4)))
    shape = const("shape", [1, 16, 16, 4], DataType.INT32, None)
    ops = [op("TRANSPOSE_CONV", [shape, weights, x], [t], 0, padding="SAME", stride_h=2, stride_w=2),
           op("RELU", [t], [y], 1)]
    (npu,) = lower(model(graph(ops, [x], [y])), U55_128).npu_ops
    assert npu.activation.value == "relu" and npu.ofm is y and npu.name == "t"
