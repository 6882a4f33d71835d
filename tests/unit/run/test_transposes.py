"""TRANSPOSEs run on the NPU compute what LiteRT's reference kernels do: a matrix transposed by a
tile convolution (rows in tiles of 3 or 2), one in rows that group in no tile (the 1x1 pool), the
two-step permutations of three axes, and permutations of four to six axes (batched, reversed,
MobileViT's unfold), each emitted into a deployable file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization

_Q = Quantization((0.05,), (-3,))
_CONV = {"padding": "SAME", "stride_h": 1, "stride_w": 1, "dilation_h_factor": 1, "dilation_w_factor": 1,
         "fused_activation_function": "NONE"}


def _const(name: str, values: np.ndarray, dtype: DataType, quant: Quantization | None) -> Tensor:
    values = values.astype(np.dtype(dtype.value))
    values.flags.writeable = False
    return Tensor(name, values.shape, dtype, quant, values)


def _model(shape: tuple[int, ...], perm: tuple[int, ...], dtype: DataType = DataType.INT8) -> Model:
    """x -> TRANSPOSE(perm) -> y, after a 1x1 convolution when ``x`` is a 4-D map (so the transpose
    reads an NPU tensor)."""
    q = _Q if dtype == DataType.INT8 else Quantization((0.05,), (120,))
    x = Tensor("x", shape, dtype, q)
    ops: list[Op] = []
    source = x
    if len(shape) == 4 and shape[0] == 1 and dtype == DataType.INT8:
        rng = np.random.default_rng(3)
        c = shape[-1]
        w = _const("w", rng.integers(-127, 128, (c, 1, 1, c)), DataType.INT8, Quantization((0.01,), (0,)))
        b = _const("b", rng.integers(-300, 300, c), DataType.INT32, Quantization((0.0005,), (0,)))
        source = Tensor("c", shape, dtype, q)
        ops.append(Op("CONV_2D", (x, w, b), (source,), frozen_options(_CONV), 0))
    moved = tuple(shape[p] for p in perm)
    y = Tensor("y", moved, dtype, q)
    perm_tensor = _const("perm", np.array(perm), DataType.INT32, None)
    if len(shape) <= 4:
        ops.append(Op("TRANSPOSE", (source, perm_tensor), (y,), frozen_options({}), len(ops)))
        return Model("transpose", (Graph("main", tuple(ops), (x,), (y,)),))
    # six axes between 4-D maps, as MobileViT's unfold: RESHAPE, TRANSPOSE, RESHAPE
    four = (1, shape[1] * shape[2], shape[3] * shape[4], shape[5])
    x = Tensor("x", four, dtype, q)
    wide, out = Tensor("wide", shape, dtype, q), Tensor("out", moved, dtype, q)
    y = Tensor("y", (1, moved[1] * moved[2], moved[3] * moved[4], moved[5]), dtype, q)
    ops = [Op("RESHAPE", (x, _const("s1", np.array(shape), DataType.INT32, None)), (wide,),
              frozen_options({}), 0),
           Op("TRANSPOSE", (wide, perm_tensor), (out,), frozen_options({}), 1),
           Op("RESHAPE", (out, _const("s2", np.array(y.shape), DataType.INT32, None)), (y,),
              frozen_options({}), 2)]
    return Model("transpose", (Graph("main", tuple(ops), (x,), (y,)),))


CASES = {
    "matrix_12x10": ((12, 10), (1, 0)),  # tiles of 3 rows
    "matrix_8x24": ((8, 24), (1, 0)),  # tiles of 2 rows
    "matrix_7x9": ((7, 9), (1, 0)),  # no tile: the pool
    "hc_8x12x16": ((1, 8, 12, 16), (0, 3, 2, 1)),  # the matrix 8 x 192, then a swap 12, 16
    "wc_6x10x9": ((1, 6, 10, 9), (0, 1, 3, 2)),  # swap 6, 10; then the matrix 10 x 54
    "chw_6x5x8": ((1, 6, 5, 8), (0, 3, 1, 2)),  # the matrix 30 x 8
    "hwc_9x4x6": ((1, 9, 4, 6), (0, 2, 3, 1)),  # the matrix 9 x 24
    "batched_4x6x2x8": ((4, 6, 2, 8), (0, 2, 1, 3)),  # four axes: two swaps
    "reversed_2x3x4x5": ((2, 3, 4, 5), (3, 2, 1, 0)),  # four axes, a matrix step among them
    "unfold_1x4x2x6x2x8": ((1, 4, 2, 6, 2, 8), (0, 2, 4, 1, 3, 5)),  # MobileViT's unfold, six axes
}
UNTILED = {"matrix_7x9", "batched_4x6x2x8", "unfold_1x4x2x6x2x8"}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("accel", ["ethos-u55-128", "ethos-u65-256"])
def test_a_transpose_on_the_npu_computes_what_litert_does(tmp_path: Path, case: str, accel: str) -> None:
    pytest.importorskip("ai_edge_litert", reason="needs LiteRT: pip install 'npuplan[run]'")
    from npuplan.run import check_model

    shape, perm = CASES[case]
    path = tmp_path / f"{case}.tflite"
    path.write_bytes(write_tflite(_model(shape, perm)))
    result = check_model(path, samples=2, seed=0, reference_kernels=True, accelerator_config=accel)
    assert not result.plan.lowered.cpu_ops
    kinds = {o.block_type.value for o in result.plan.lowered.npu_ops if o.tflite_type == "TRANSPOSE"}
    if accel == "ethos-u55-128":  # the tile convolutions are the cheaper form there (bench: sweep in the commit)
        assert ("ConvolutionMxN" in kinds) == (case not in UNTILED), kinds
    assert all(d.agrees for d in result.diffs), [str(d) for d in result.diffs]


def test_a_uint8_matrix_is_transposed_by_the_tile_convolution_too(tmp_path: Path) -> None:
    pytest.importorskip("ai_edge_litert", reason="needs LiteRT: pip install 'npuplan[run]'")
    from npuplan.run import check_model

    path = tmp_path / "u8.tflite"
    path.write_bytes(write_tflite(_model((6, 20), (1, 0), DataType.UINT8)))
    result = check_model(path, samples=2, seed=1, reference_kernels=True, accelerator_config="ethos-u55-128")
    assert [o.block_type.value for o in result.plan.lowered.npu_ops] == ["ConvolutionMxN"]
    assert all(d.agrees for d in result.diffs), [str(d) for d in result.diffs]
