"""Seeded inputs and the comparison of two runs' outputs (``npuplan check``, bench/run_diff.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

InputSpec = tuple[tuple[int, ...], np.dtype]


def random_inputs(specs: Sequence[InputSpec], rng: np.random.Generator) -> list[np.ndarray]:
    """One array per ``(shape, dtype)``: integers uniform over the whole range of their type, booleans
    uniform, floats uniform in [-1, 1)."""
    out: list[np.ndarray] = []
    for shape, dtype in specs:
        dtype = np.dtype(dtype)
        if dtype == np.bool_:
            out.append(rng.integers(0, 2, size=shape).astype(np.bool_))
        elif np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            out.append(rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True))
        else:
            out.append(rng.uniform(-1.0, 1.0, size=shape).astype(dtype))
    return out


@dataclass(frozen=True, slots=True)
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
