"""Token ids (integer inputs indexing a GATHER) are sampled within the table they index."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization
from npuplan.run.compare import index_bounds, random_inputs


def _constant(name: str, values: np.ndarray, dtype: DataType, quant: Quantization | None = None) -> Tensor:
    values.flags.writeable = False
    return Tensor(name, values.shape, dtype, quant, values)


def _embedding_graph(vocabulary: int = 7) -> Graph:
    """Keras's Embedding as the converter writes it: ids wrapped (SELECT_V2(LESS(ids, 0), ADD(ids,
    vocabulary), ids)), then GATHER of an int8 table; a second, float input indexes nothing."""
    quant = Quantization((0.1,), (0,))
    ids = Tensor("ids", (1, 5), DataType.INT32, None)
    other = Tensor("other", (1, 3), DataType.INT8, quant)
    zero = _constant("zero", np.array(0, dtype=np.int32), DataType.INT32)
    size = _constant("size", np.array(vocabulary, dtype=np.int32), DataType.INT32)
    table = _constant("table", np.arange(vocabulary * 4, dtype=np.int8).reshape(vocabulary, 4), DataType.INT8, quant)
    negative = Tensor("negative", (1, 5), DataType.BOOL, None)
    wrapped = Tensor("wrapped", (1, 5), DataType.INT32, None)
    chosen = Tensor("chosen", (1, 5), DataType.INT32, None)
    rows = Tensor("rows", (1, 5, 4), DataType.INT8, quant)
    relu = Tensor("relu", (1, 3), DataType.INT8, quant)
    ops = (Op("LESS", (ids, zero), (negative,), frozen_options({}), 0),
           Op("ADD", (ids, size), (wrapped,), frozen_options({"fused_activation_function": "NONE"}), 1),
           Op("SELECT_V2", (negative, wrapped, ids), (chosen,), frozen_options({}), 2),
           Op("GATHER", (table, chosen), (rows,), frozen_options({"axis": 0, "batch_dims": 0}), 3),
           Op("RELU", (other,), (relu,), frozen_options({}), 4))
    return Graph("main", ops, (ids, other), (rows, relu))


def test_an_input_reaching_a_gathers_indices_is_bounded_by_the_table() -> None:
    assert index_bounds(_embedding_graph(7)) == {0: 7}


def test_bounded_inputs_are_sampled_within_the_bound_and_others_over_their_range() -> None:
    specs = [((1, 500), np.dtype(np.int32)), ((1, 500), np.dtype(np.int32))]
    ids, free = random_inputs(specs, np.random.default_rng(0), {0: 7})
    assert ids.min() >= 0 and ids.max() < 7
    assert free.max() > 1 << 20


def test_check_runs_an_embedding_model(tmp_path: Path) -> None:
    # zoo5's embedding models: ids drawn over the whole int32 range made LiteRT's GATHER fail on
    # the original itself ("indices_has_only_positive_elements"), so neither file could be checked
    pytest.importorskip("ai_edge_litert", reason="needs LiteRT: pip install 'npuplan[run]'")
    from npuplan.run import check_model

    path = tmp_path / "embedding.tflite"
    path.write_bytes(write_tflite(Model("embedding", (_embedding_graph(),))))
    result = check_model(path, samples=3, seed=0)
    assert result.agrees, [str(d) for d in result.diffs]
