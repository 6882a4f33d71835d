"""Emitted files that once computed otherwise than TFLite, now bit-exact (checked against LiteRT's
reference kernels, the ones TensorFlow Lite Micro runs: a reference npuplan did not write)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("ai_edge_litert", reason="needs LiteRT: pip install 'npuplan[run]'")

from npuplan.run import check_model  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data"


def test_a_global_average_pool_averages_raw_values_as_tflite() -> None:
    # resnet8_cifar's 8x8 AVERAGE_POOL_2D: with its zero points taken out first, the division's
    # rounding saw other signs than TFLite's and 4 of 64 channels were off by one
    result = check_model(DATA / "resnet8_cifar.tflite", samples=2, seed=0, reference_kernels=True,
                         accelerator_config="ethos-u55-128")
    assert all(d.agrees for d in result.diffs), [str(d) for d in result.diffs]


def _shape_output_model() -> bytes:
    """x -> RELU -> y, and SHAPE(y) as a second graph output (int32 sizes)."""
    from npuplan.io.tflite_write import write_tflite
    from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
    from npuplan.ir.types import DataType, Quantization

    quant = Quantization((0.05,), (3,))
    x = Tensor("x", (1, 8, 8, 4), DataType.INT8, quant)
    y = Tensor("y", (1, 8, 8, 4), DataType.INT8, quant)
    sizes = Tensor("sizes", (4,), DataType.INT32, None)
    ops = (Op("RELU", (x,), (y,), frozen_options({}), 0),
           Op("SHAPE", (y,), (sizes,), frozen_options({"out_type": 2}), 1))  # 2: TFLite's INT32
    return write_tflite(Model("shape_output", (Graph("main", ops, (x,), (y, sizes)),)))


def test_a_shape_operator_output_as_network_output_emits_and_runs(tmp_path: Path) -> None:
    # the SHAPE was folded to a constant that no operator wrote: writing the file raised KeyError
    # (exit 4); it stays a CPU operator now, as constant folding leaves graph outputs alone
    path = tmp_path / "shape_output.tflite"
    path.write_bytes(_shape_output_model())
    result = check_model(path, samples=1, seed=0, reference_kernels=True)
    assert all(d.agrees for d in result.diffs), [str(d) for d in result.diffs]
    assert len(result.diffs) == 2


def _leaky_by_hand_model() -> bytes:
    """``max(x, x * 0.3)`` written as MUL by an int8 scalar then MAXIMUM (a Keras leaky ReLU by
    hand, as zoo's op_maximum)."""
    import numpy as np

    from npuplan.io.tflite_write import write_tflite
    from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
    from npuplan.ir.types import DataType, Quantization

    quant = Quantization((0.02104760706424713,), (-71,))
    x = Tensor("x", (1, 16, 16, 8), DataType.INT8, quant)
    alpha_values = np.array(127, dtype=np.int8)
    alpha_values.flags.writeable = False
    alpha = Tensor("alpha", (), DataType.INT8, Quantization((0.0011764706578105688,), (-128,)), alpha_values)
    product = Tensor("product", (1, 16, 16, 8), DataType.INT8, quant)
    y = Tensor("y", (1, 16, 16, 8), DataType.INT8, quant)
    ops = (Op("MUL", (x, alpha), (product,), frozen_options({"fused_activation_function": "NONE"}), 0),
           Op("MAXIMUM", (x, product), (y,), frozen_options({}), 1))
    return write_tflite(Model("leaky_by_hand", (Graph("main", ops, (x,), (y,)),)))


def test_a_mul_then_maximum_computes_tflites_mul_not_leaky_relus_rounding(tmp_path: Path) -> None:
    # lowering.mul_max makes the pair one LEAKY_RELU table; its entries were LEAKY_RELU's own
    # rounding of the float alpha, off by one on 4% of op_maximum's elements (Vela's file: none)
    path = tmp_path / "leaky_by_hand.tflite"
    path.write_bytes(_leaky_by_hand_model())
    result = check_model(path, samples=2, seed=0, reference_kernels=True)
    assert all(d.agrees for d in result.diffs), [str(d) for d in result.diffs]
