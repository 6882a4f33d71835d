"""The static copy of a model exported with a dynamic batch, for Vela's default core.

A Keras model converted with a dynamic batch (input signature [-1, 16, 32]) computes some RESHAPE
targets at run time (SHAPE -> GATHER -> REDUCE_PROD -> PACK, SHAPE -> STRIDED_SLICE -> PACK).
Vela 5.2.0's default core refuses such a model ("RESHAPE ... Does not have valid TFLite
Semantics": a non-constant target); its legacy core folds each SHAPE into a constant whose bytes are
numpy's int64 under the tensor's INT32 type (``convert_shape_op_to_constant_tensor``), so every
runtime reads [1, 0, 16] for the shape [1, 16, 64] and the file fails or computes wrongly. The
static copy is the same network with the batch planned as 1 (as npuplan and TFLite Micro run it):
every shape resolved, each SHAPE and the arithmetic on it folded into constants (npuplan's own
passes, ``lowering.dynamic_shapes``, ``shape_ops``, ``constants``), written by npuplan's writer.
Whoever uses it must check, with LiteRT, that it reproduces the original bit for bit
(bench/run_diff.py does, on its seeded inputs) before trusting a file compiled from it.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from npuplan.io.tflite import parse_tflite  # noqa: E402
from npuplan.io.tflite_write import write_tflite  # noqa: E402
from npuplan.ir.graph import Model  # noqa: E402
from npuplan.lowering._util import replace_tensors  # noqa: E402
from npuplan.lowering.constants import fold_constants  # noqa: E402
from npuplan.lowering.dynamic_shapes import is_dynamic, resolve_dynamic_shapes  # noqa: E402
from npuplan.lowering.shape_ops import fold_shape_ops  # noqa: E402


def static_copy(data: bytes) -> bytes | None:
    """The static copy of TFLite ``data``'s model, or None when it has no dynamic dimension."""
    model = parse_tflite(data)
    if not any(is_dynamic(t) for t in model.main.tensors()):
        return None
    graph, _ = resolve_dynamic_shapes(model.main)
    graph, _ = fold_shape_ops(graph)
    graph, _ = fold_constants(graph)
    graph = replace_tensors(graph, {id(t): replace(t, signature=None) for t in graph.tensors() if is_dynamic(t)})
    return write_tflite(Model(model.name, (graph, *model.subgraphs[1:])))
