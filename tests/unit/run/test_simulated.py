"""Compiled files through the NPU simulator (``npuplan.sim.execute_stream``): a DMA stream moves the
bytes the runner laid out, and a file whose operators are all on the NPU runs without LiteRT."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from npuplan.errors import NpuplanError
from npuplan.run import CompiledModel

from ._files import SHAPE, add_relu_model, cpu_npu_cpu_file, dma_payload, npu_only_file

X = np.arange(-8, 8, dtype=np.int8).reshape(SHAPE) * 9


@pytest.mark.parametrize("stream", [dict(src_region=1, src=16, dst_region=1, dst=32),  # through the arena
                                    dict(src_region=3, dst_region=4)])  # through the operator's own regions
def test_a_dma_between_cpu_operators_moves_the_feature_map(stream: dict[str, int]) -> None:
    pytest.importorskip("ai_edge_litert", reason='LiteRT (the "run" extra) runs the CPU operators')
    from npuplan.run import ReferenceModel

    model = CompiledModel(cpu_npu_cpu_file(dma_payload(length=16, **stream)))
    assert (model.invoke([X])[0] == ReferenceModel(add_relu_model()).invoke([X])[0]).all()


def test_a_file_all_on_the_npu_runs_without_litert(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ai_edge_litert", None)  # importing it fails
    monkeypatch.setitem(sys.modules, "ai_edge_litert.interpreter", None)
    model = CompiledModel(npu_only_file(dma_payload(src_region=0, dst_region=1, dst=16, length=16)))
    assert bytes(model.invoke([X])[0].view(np.uint8).ravel()) == bytes(range(100, 116))  # the flash's bytes
    with pytest.raises(NpuplanError, match=r'pip install "npuplan\[run\]"'):
        CompiledModel(add_relu_model())


def test_a_dma_out_of_its_region_is_a_violation() -> None:
    from npuplan.errors import ValidationError

    model = CompiledModel(npu_only_file(dma_payload(src_region=0, dst_region=1, dst=40, length=16)))
    with pytest.raises(ValidationError, match="ethos-u operator 0"):
        model.invoke([X])
