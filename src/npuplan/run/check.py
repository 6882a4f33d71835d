"""``npuplan check``: plan and emit a model, then run the compiled file and the original model
(LiteRT) on the same seeded inputs and compare their outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from npuplan.errors import ModelError
from npuplan.records import record
from npuplan.run.compare import OutputDiff, merge, output_diffs, random_inputs
from npuplan.run.litert import ReferenceModel
from npuplan.run.runner import CompiledModel


@record(slots=False)
class CheckResult:
    """The plan, the compiled file (``emit.Emitted``) and per output how it differs from LiteRT's."""

    plan: Any
    emitted: Any
    diffs: tuple[OutputDiff, ...]
    samples: int

    @property
    def agrees(self) -> bool:
        return all(d.agrees for d in self.diffs)


def compare_runs(compiled: CompiledModel, reference: ReferenceModel, *, samples: int, seed: int) -> list[OutputDiff]:
    """Both models on ``samples`` seeded inputs (in turn, so variable tensors evolve alike): per
    output, the compiled file's largest difference from the reference and its differing elements."""
    rng = np.random.default_rng(seed)
    total: list[OutputDiff] | None = None
    for _ in range(samples):
        inputs = random_inputs(reference.input_specs, rng, reference.index_bounds)
        shaped = [x.reshape(shape) if x.size == int(np.prod(shape, dtype=np.int64)) else x
                  for x, (shape, _) in zip(inputs, compiled.input_specs)]
        total = merge(total, output_diffs(compiled.invoke(shaped), reference.invoke(inputs)))
    return total or []


def check_model(path: str | Path, *, samples: int, seed: int, backend: str = "npuplan", reference_kernels: bool = False,
                **options: Any) -> CheckResult:
    """Plan and emit ``path`` with the plan ``options`` and the emit ``backend``, and compare the
    compiled file with the original on ``samples`` inputs drawn from ``seed`` (``reference_kernels``:
    LiteRT's reference kernels for the original and the CPU operators)."""
    from npuplan.api import plan_and_emit
    from npuplan.emit.backend import EmitBackend

    try:
        original = Path(path).read_bytes()
    except OSError as error:
        raise ModelError(f"cannot read '{path}': {error.strerror}") from None
    planned, emitted = plan_and_emit(path, backend=EmitBackend(backend), **options)
    reference = ReferenceModel(original, label=f"'{path}'", reference_kernels=reference_kernels)
    compiled = CompiledModel(emitted.data, label=f"the compiled '{Path(path).name}'",
                             reference_kernels=reference_kernels)
    diffs = compare_runs(compiled, reference, samples=samples, seed=seed)
    return CheckResult(planned, emitted, tuple(diffs), samples)
