"""A REDUCE_MAX over depth as a tree of MAXIMUMs of channel boxes (``lowering.reduce_max``)."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.api import PreparedModel, make_options, plan_prepared
from npuplan.hw.accelerator import accelerator
from npuplan.ir.lowered import BlockType
from npuplan.ir.types import DataType
from npuplan.lowering import lower

from ._build import conv, const, fm, graph, model, op

U55_128 = accelerator("ethos-u55-128")


def _reduce_max_model(depth: int, *, keep_dims: bool = True):
    x, y = fm("x", (1, 20, 20, 4)), fm("y", (1, 20, 20, depth))
    z = fm("z", (1, 20, 20, 1) if keep_dims else (1, 20, 20))
    axes = const("axes", [3], DataType.INT32, None)
    return model(graph([conv(x, y, 1), op("REDUCE_MAX", [y, axes], [z], 1, keep_dims=keep_dims)], [x], [z]))


def _run_tree(ops, source: np.ndarray) -> np.ndarray:
    """The tree's MAXIMUMs evaluated on ``source`` (H x W x C) box by box, as the NPU reads them."""
    values = {}
    current = source
    for o in ops:
        first, second = o.ifm_read_offset.c, o.ifm2_read_offset.c
        depth = o.ofm_shape.c
        data = values.get(o.ifm.name, current)
        out = np.maximum(data[..., first:first + depth], data[..., second:second + depth])
        values[o.ofm.name] = out
        current = out
    return current


@pytest.mark.parametrize("depth", [2, 3, 6, 7, 16, 33])
def test_tree_computes_the_maximum_over_depth(depth):
    plain = lower(_reduce_max_model(depth), U55_128)
    tree = lower(_reduce_max_model(depth), U55_128, max_trees=True)
    assert [o.op_type for o in plain.npu_ops] == ["Conv2DBias", "MaxPool"]
    ops = tree.npu_ops[1:]
    assert all(o.block_type is BlockType.ELEMENTWISE and o.elementwise == "MAXIMUM" for o in ops)
    assert len(ops) == int(np.ceil(np.log2(depth)))
    assert ops[-1].ofm.name == plain.npu_ops[1].ofm.name == "z" and ops[-1].ofm_shape.c == 1
    source = np.random.default_rng(depth).integers(-128, 128, size=(20, 20, depth))
    np.testing.assert_array_equal(_run_tree(ops, source), source.max(axis=-1, keepdims=True))


def test_other_reductions_keep_their_pool():
    x, y, z = fm("x", (1, 20, 20, 4)), fm("y", (1, 20, 20, 6)), fm("z", (1, 1, 1, 6))
    axes = const("axes", [1, 2], DataType.INT32, None)
    m = model(graph([conv(x, y, 1), op("REDUCE_MAX", [y, axes], [z], 1, keep_dims=True)], [x], [z]))
    assert [o.op_type for o in lower(m, U55_128, max_trees=True).npu_ops] == ["Conv2DBias", "MaxPool"]


def test_the_planner_prices_the_tree_against_the_pool():
    """A 20x20x6 depth reduction: the pool's 1 x 6 kernel over a map one element deep and wide
    wastes most of each micro-block; on U55-128 three MAXIMUMs are cheaper and chosen."""
    prepared = PreparedModel(_reduce_max_model(6), "rmax.tflite")
    result = plan_prepared(prepared, make_options(accelerator_config="ethos-u55-128"))
    assert [o.op_type for o in result.lowered.npu_ops] == ["Conv2DBias", "Maximum", "Maximum", "Maximum"]
