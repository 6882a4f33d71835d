"""Placeholder shapes of a network exported with a dynamic batch, planned at batch 1."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from npuplan.hw.accelerator import accelerator
from npuplan.ir.graph import Tensor
from npuplan.ir.types import DataType
from npuplan.lowering import lower
from npuplan.lowering.dynamic_shapes import resolve_dynamic_shapes

from ._build import const, conv, fm, graph, model, op


def _dynamic(name: str, declared: tuple[int, ...], signature: tuple[int, ...]) -> Tensor:
    return replace(fm(name, declared), signature=signature)


def _tokens_dense() -> tuple[list, Tensor, Tensor]:
    """Keras's Dense on [batch, 16, 32] tokens: reshape to [-1, 32], FULLY_CONNECTED, reshape back;
    the flattened tensors are declared with one row."""
    x = _dynamic("x", (1, 16, 32), (-1, 16, 32))
    r = _dynamic("r", (1, 32), (-1, 32))
    f = _dynamic("f", (1, 24), (-1, 24))
    y = _dynamic("y", (1, 16, 24), (-1, 16, 24))
    w = const("w", np.ones((24, 32)))
    ops = [op("RESHAPE", [x, const("to_rows", [-1, 32], DataType.INT32, None)], [r], 0),
           op("FULLY_CONNECTED", [r, w, None], [f], 1, fused_activation_function="NONE", keep_num_dims=False),
           op("RESHAPE", [f, const("to_tokens", [1, 16, 24], DataType.INT32, None)], [y], 2)]
    return ops, x, y


def test_flattened_tokens_get_their_rows() -> None:
    ops, x, y = _tokens_dense()
    resolved, changed = resolve_dynamic_shapes(graph(ops, [x], [y]))
    shapes = {t.name: t.shape for t in resolved.tensors()}
    assert shapes["r"] == (16, 32) and shapes["f"] == (16, 24) and shapes["y"] == (1, 16, 24)
    assert {name for name, _, _ in changed} == {"r", "f"}
    assert all(t.signature is None for t in resolved.tensors() if t.name != "x")


def test_a_shape_of_a_placeholder_is_folded_only_once_resolved() -> None:
    """SHAPE(r) must give [16, 32], not the declared [1, 32]: the RESHAPE reading it then keeps
    all 512 values."""
    x = _dynamic("x", (1, 16, 32), (-1, 16, 32))
    r = _dynamic("r", (1, 32), (-1, 32))
    s = fm("s", (2,), DataType.INT32, None)
    y = _dynamic("y", (1, 32), (-1, 32))
    ops = [op("RESHAPE", [x, const("to_rows", [-1, 32], DataType.INT32, None)], [r], 0),
           op("SHAPE", [r], [s], 1), op("RESHAPE", [r, s], [y], 2)]
    resolved, _ = resolve_dynamic_shapes(graph(ops, [x], [y]))
    assert resolved.outputs[0].shape == (16, 32)


def test_a_static_network_is_left_alone() -> None:
    x, y = fm("x", (1, 4, 4, 8)), fm("y", (1, 4, 4, 8))
    g = graph([op("RELU", [x], [y], 0)], [x], [y])
    assert resolve_dynamic_shapes(g) == (g, ())


def test_the_second_dense_of_a_dynamic_network_reads_every_row() -> None:
    """Planned on the declared placeholders, the second FULLY_CONNECTED read one row of 16."""
    ops, x, y = _tokens_dense()
    z = _dynamic("z", (1, 8), (-1, 8))
    ops.append(op("FULLY_CONNECTED", [ops[1].outputs[0], const("w2", np.ones((8, 24))), None], [z], 3,
                  fused_activation_function="NONE", keep_num_dims=False))
    npu = lower(model(graph(ops, [x], [y, z])), accelerator("ethos-u55-128")).npu_ops
    assert [o.ofm_shape.elements for o in npu if o.tflite_type == "FULLY_CONNECTED"] == [16 * 24, 16 * 8]


def test_a_batch_matmul_keeps_reading_the_rank_it_was_given() -> None:
    """A dense's rows reshaped back to [1, 16, 32] for a BATCH_MATMUL: the reshape may go (the
    FULLY_CONNECTED writes the reshaped tensor), but the CPU op must read the tensor it declares
    (a constant right operand: kept on the CPU, ``lowering.batch_matmul``)."""
    ops, x, _ = _tokens_dense()
    f, y = ops[1].outputs[0], _dynamic("y", (1, 16, 24), (-1, 16, 24))
    back = _dynamic("back", (1, 16, 24), (-1, 16, 24))
    ops[2] = op("RESHAPE", [f, const("to_tokens", [1, 16, 24], DataType.INT32, None)], [back], 2)
    ops.append(op("BATCH_MATMUL", [back, const("rhs", np.ones((1, 24, 24)))], [y], 3, adj_x=False, adj_y=False))
    lowered = lower(model(graph(ops, [x], [y])), accelerator("ethos-u55-128"), deployable=True)
    (cpu,) = lowered.cpu_ops
    assert cpu.op.type == "BATCH_MATMUL" and cpu.op.inputs[0].shape == (1, 16, 24)


def test_space_to_batch_moves_the_blocks_into_the_batch_and_back() -> None:
    """A dynamic-batch SPACE_TO_BATCH_ND -> CONV_2D -> BATCH_TO_SPACE_ND (zoo6 cpu_space_batch_16):
    the file declares the blocked tensors with batch 1; TensorFlow Lite computes batch 4 for both."""
    x = _dynamic("x", (1, 16, 16, 8), (-1, 16, 16, 8))
    s, c = _dynamic("s", (1, 8, 8, 8), (-1, 8, 8, 8)), _dynamic("c", (1, 8, 8, 8), (-1, 8, 8, 8))
    y = _dynamic("y", (1, 16, 16, 8), (-1, 16, 16, 8))
    block = const("block", [2, 2], DataType.INT32, None)
    edges = const("edges", [[0, 0], [0, 0]], DataType.INT32, None)
    ops = [op("SPACE_TO_BATCH_ND", [x, block, edges], [s], 0), conv(s, c, index=1),
           op("BATCH_TO_SPACE_ND", [c, block, edges], [y], 2)]
    resolved, _ = resolve_dynamic_shapes(graph(ops, [x], [y]))
    shapes = {t.name: t.shape for t in resolved.tensors()}
    assert shapes["s"] == (4, 8, 8, 8) and shapes["c"] == (4, 8, 8, 8) and shapes["y"] == (1, 16, 16, 8)
