"""Batched FULLY_CONNECTED: rows laid out so OFM blocks span them, many rows as a 1x1 conv."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.lowering.convert import convert_fully_connected
from tests.unit.lowering._build import const, fm, op


def _fc(ifm_shape: tuple[int, ...], out_channels: int) -> NpuOp:
    depth = ifm_shape[-1]
    x, y = fm("x", ifm_shape), fm("y", (*ifm_shape[:-1], out_channels))
    w = const("w", np.ones((out_channels, depth)))
    (lowered,) = convert_fully_connected(op("FULLY_CONNECTED", [x, w, None], [y], fused_activation_function="NONE"))
    return lowered


@pytest.mark.parametrize(
    ("ifm_shape", "op_type", "ifm4d"),
    [
        ((1, 96), "FullyConnected", Shape4D(1, 1, 1, 96)),
        ((3, 96), "FullyConnected", Shape4D(1, 1, 3, 96)),  # 2-D input, batch 3
        ((1, 4, 96), "FullyConnected", Shape4D(1, 2, 2, 96)),
        ((1, 16, 96), "FullyConnected", Shape4D(1, 4, 4, 96)),  # MLP-mixer tokens: a 4x4 map
        ((1, 5, 96), "Conv2DBias", Shape4D(1, 1, 5, 96)),
        ((1, 64, 96), "Conv2DBias", Shape4D(1, 1, 64, 96)),  # transformer tokens: a 1x1 conv over 1x64
        ((64, 96), "Conv2DBias", Shape4D(1, 1, 64, 96)),
    ],
)
def test_rows_layout(ifm_shape: tuple[int, ...], op_type: str, ifm4d: Shape4D) -> None:
    lowered = _fc(ifm_shape, 192)
    assert lowered.op_type == op_type and lowered.ifm_shape == ifm4d
    assert lowered.ofm_shape == ifm4d.with_c(192)
    assert lowered.block_type is (BlockType.CONV if op_type == "Conv2DBias" else BlockType.VECTOR_PRODUCT)
    assert lowered.weights is not None and lowered.weights.shape == (192, 1, 1, 96)
    assert (lowered.kernel.height, lowered.kernel.width, lowered.kernel.stride_y) == (1, 1, 1)
