"""Vela 5.2.0's files (``--accelerator-config ethos-u55-128``, default core) of networks exported
with a dynamic batch, whose CPU operators write tensors declared at placeholder shapes (a RESHAPE
to [-1, 256, 8] declared [1, 1, 8], its target computed by SHAPE -> STRIDED_SLICE -> PACK at run
time). ``npuplan run`` gives each the shape TensorFlow Lite computes (``run.layout``); before, each
file stopped with "writes ... as [1, 256, 8] but the file declares [1, 1, 8]".

``tests/data/run/placeholder`` holds the originals (the zoo's generators: bench/zoo) and Vela's
files. Each must reproduce LiteRT's optimised kernels except where measured below: there npuplan's
own file for the same model computes the same values as Vela's, bit for bit, and both differ from
LiteRT at the same elements (the 1x1 convolution before the up-sampling, where LiteRT's optimised
kernels round otherwise than its reference; the originals' TILE v3 has no reference kernel in
LiteRT 2.3, so the reference cannot be asked)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ai_edge_litert", reason='LiteRT (the "run" extra) is the reference')

from npuplan.errors import ModelError  # noqa: E402
from npuplan.run import CompiledModel, ReferenceModel, compare_runs  # noqa: E402
from npuplan.run.layout import read_layout  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data" / "run" / "placeholder"
# model -> per output (largest difference, differing elements) on one sample, seed 0: measured
MEASURED = {
    "keras3_tokens_16": ((0, 0),),
    "op_upsampling2d": ((1, 24),),
    "op_upsample_3x2": ((1, 6),),
    "fpn_add_64": ((1, 1), (1, 54), (0, 0)),
}


def _files(model: str) -> tuple[bytes, bytes]:
    return (DATA / f"{model}_vela.tflite").read_bytes(), (DATA / f"{model}.tflite").read_bytes()


@pytest.mark.parametrize("model", sorted(MEASURED))
def test_vela_files_with_placeholder_shapes_run(model: str) -> None:
    compiled, original = _files(model)
    diffs = compare_runs(CompiledModel(compiled), ReferenceModel(original), samples=1, seed=0)
    assert [(int(d.max_abs_diff), d.differing) for d in diffs] == list(MEASURED[model])


def test_the_computed_shape_replaces_the_placeholder_and_leaves_the_arena() -> None:
    layout = read_layout(_files("keras3_tokens_16")[0])
    shapes = {t.name: t.shape for t in layout.tensors.values()}
    assert shapes["functional_27_1/lambda_1/Reshape"] == (1, 256, 8)  # declared [1, 1, 8], signature [-1, -1, 8]
    fc = next(i for i, t in layout.tensors.items() if t.shape == (256, 24))  # declared [1, 24]: 24 bytes planned
    assert layout.slots[fc].arena_offset is None and layout.slots[fc].size_bytes == 256 * 24


def test_an_operator_that_does_not_fit_its_declared_output_is_refused() -> None:
    # Vela's default core writes ARG_MAX's int64 indices as int32 pairs [16, 16, 2] and keeps the
    # CAST to int32 [1, 16, 16] (signature [-1, 16, 16]): no batch holds its 512 values (its legacy
    # core writes int64 [1, 16, 16, 1] and runs exactly)
    compiled, original = _files("op_argmax")
    model = CompiledModel(compiled)
    x = [np.zeros(shape, dtype) for shape, dtype in ReferenceModel(original).input_specs]
    with pytest.raises(ModelError, match=r"CAST\) writes '[^']+' as \[16, 16, 2\] but the file declares \[1, 16, 16\]"):
        model.invoke(x)
