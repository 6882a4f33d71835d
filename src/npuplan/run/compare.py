"""Seeded inputs and the comparison of two runs' outputs (``npuplan check``, bench/run_diff.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from npuplan.ir.graph import Graph, Tensor
from npuplan.ir.types import DataType
from npuplan.records import record

InputSpec = tuple[tuple[int, ...], np.dtype]

# Operators an index input passes through on its way to a GATHER: Keras's Embedding wraps negative
# ids (SELECT_V2(LESS(ids, 0), ADD(ids, vocabulary), ids)), a reshape or cast may come first.
_INDEX_TYPES = frozenset({DataType.INT16, DataType.INT32, DataType.INT64})
_INDEX_PATH = frozenset({"LESS", "ADD", "SELECT", "SELECT_V2", "CAST", "RESHAPE", "EXPAND_DIMS", "SQUEEZE"})


def _indexed_size(graph: Graph, start: Tensor) -> int | None:
    """The smallest axis size that ``start`` indexes, following it through ``_INDEX_PATH``
    operators to GATHERs' indices or EMBEDDING_LOOKUPs' ids (None: it indexes nothing)."""
    consumers = graph.consumers()
    sizes: list[int] = []
    frontier, seen = [start], {id(start)}
    while frontier:
        tensor = frontier.pop()
        for op in consumers.get(tensor, []):
            params = op.inputs[0] if op.type == "GATHER" else op.inputs[1] if op.type == "EMBEDDING_LOOKUP" else None
            if params is not None and op.inputs.index(tensor) == (1 if op.type == "GATHER" else 0):
                axis = int(op.options.get("axis", 0)) % max(len(params.shape), 1) if op.type == "GATHER" else 0
                sizes.append(int(params.shape[axis]))
            elif op.type in _INDEX_PATH:
                frontier += [t for t in op.outputs if id(t) not in seen]
                seen.update(id(t) for t in op.outputs)
    return min(sizes) if sizes else None


def index_bounds(graph: Graph) -> dict[int, int]:
    """``{input position: size}`` of the integer inputs that index a GATHER or EMBEDDING_LOOKUP (token
    ids): sampled over the whole int32 range they would make TFLite's kernel fail."""
    bounds = {}
    for k, tensor in enumerate(graph.inputs):
        size = _indexed_size(graph, tensor) if tensor.dtype in _INDEX_TYPES else None
        if size:
            bounds[k] = size
    return bounds


def random_inputs(specs: Sequence[InputSpec], rng: np.random.Generator,
                  bounds: Mapping[int, int] | None = None) -> list[np.ndarray]:
    """One array per ``(shape, dtype)``: integers uniform over the whole range of their type (those
    in ``bounds``, indices, over ``[0, bound)``), booleans uniform, floats uniform in [-1, 1)."""
    out: list[np.ndarray] = []
    for k, (shape, dtype) in enumerate(specs):
        dtype = np.dtype(dtype)
        if dtype == np.bool_:
            out.append(rng.integers(0, 2, size=shape).astype(np.bool_))
        elif bounds and k in bounds and np.issubdtype(dtype, np.integer):
            out.append(rng.integers(0, bounds[k], size=shape, dtype=dtype))
        elif np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            out.append(rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True))
        else:
            out.append(rng.uniform(-1.0, 1.0, size=shape).astype(dtype))
    return out


@record
class OutputDiff:
    """How one output of a run differs from the reference's over the samples compared: the largest
    absolute difference, the number of differing elements (summed over samples) and of elements."""

    output: int
    max_abs_diff: float
    differing: int
    elements: int

    @property
    def agrees(self) -> bool:
        return self.differing == 0

    def merged(self, other: "OutputDiff") -> "OutputDiff":
        return OutputDiff(self.output, max(self.max_abs_diff, other.max_abs_diff), self.differing + other.differing,
                          self.elements + other.elements)


def output_diffs(got: Sequence[np.ndarray], reference: Sequence[np.ndarray]) -> list[OutputDiff]:
    """Per output, ``got`` against ``reference`` (one sample); a shape mismatch counts every element."""
    diffs = []
    for k, (a, b) in enumerate(zip(got, reference)):
        if a.shape != b.shape and a.size == b.size:
            a = a.reshape(b.shape)
        if a.shape != b.shape:
            diffs.append(OutputDiff(k, float("inf"), max(a.size, b.size), max(a.size, b.size)))
            continue
        wide = np.float64 if np.issubdtype(a.dtype, np.floating) or np.issubdtype(b.dtype, np.floating) else np.int64
        delta = np.abs(a.astype(wide) - b.astype(wide))
        diffs.append(OutputDiff(k, float(delta.max(initial=0)), int(np.count_nonzero(delta)), int(a.size)))
    return diffs


def merge(total: list[OutputDiff] | None, sample: list[OutputDiff]) -> list[OutputDiff]:
    """``total`` with one more sample's differences."""
    return sample if total is None else [t.merged(s) for t, s in zip(total, sample)]


def format_diff(d: OutputDiff) -> str:
    """``max |diff| 3, 12 of 4000 elements differ`` (integers shown as integers)."""
    finite = np.isfinite(d.max_abs_diff)
    value = int(d.max_abs_diff) if finite and d.max_abs_diff == int(d.max_abs_diff) else d.max_abs_diff
    return f"max |diff| {value}, {d.differing} of {d.elements} elements differ"
