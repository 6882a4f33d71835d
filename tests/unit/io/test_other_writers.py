"""The reader on files other toolchains write (tests/data/zoo10: a litert-torch PT2E export and
rewrites of it by bench/zoo/zoo10_quirks.py, each checked there to run in LiteRT as its source)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from npuplan.io.tflite import read_tflite
from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization

ZOO10 = Path(__file__).resolve().parents[2] / "data" / "zoo10"


def _signature(path: Path) -> list[tuple[str, tuple[tuple[int, ...], ...], bytes]]:
    """Each op's type, input shapes and constant bytes: what a layout quirk must not change."""
    return [(op.type, tuple(tuple(t.shape) for t in op.inputs if t is not None),
             b"".join(np.ascontiguousarray(t.data).tobytes() for t in op.inputs if t is not None and t.data is not None))
            for op in read_tflite(path).main.ops]


@pytest.mark.parametrize("quirk", ["offset_buffers", "deprecated_code", "no_names", "same_names"])
def test_a_rewritten_file_reads_as_its_source(quirk: str) -> None:
    # offset_buffers: constants after the flatbuffer by offset/size; deprecated_code: operator codes
    # in deprecated_builtin_code alone; no_names/same_names: tensors without or with one name
    assert _signature(ZOO10 / f"pt_audio1d_49__{quirk}.tflite") == _signature(ZOO10 / "pt_audio1d_49.tflite")


@pytest.mark.parametrize("quirk", ["no_names", "same_names"])
def test_empty_or_repeated_tensor_names_become_unique(quirk: str, caplog: pytest.LogCaptureFixture) -> None:
    # planning keys tensors by name: a repeated name made two live ranges one ('live range names
    # must be unique', exit 4); the reader now renames them, with a warning
    graph = read_tflite(ZOO10 / f"pt_audio1d_49__{quirk}.tflite").main
    names = [t.name for t in graph.tensors()]
    assert len(set(names)) == len(names) and all(names)
    assert "renamed" in caplog.text


def test_unique_names_are_kept_and_a_rename_avoids_a_name_in_use(tmp_path: Path) -> None:
    q = Quantization((0.1,), (0,))
    x, y, z = (Tensor(n, (1, 4, 4, 2), DataType.INT8, q) for n in ("a", "a_1", "a"))
    ops = (Op("RELU", (x,), (y,), frozen_options({}), 0), Op("RELU", (y,), (z,), frozen_options({}), 1))
    path = tmp_path / "names.tflite"
    path.write_bytes(write_tflite(Model("names", (Graph("main", ops, (x,), (z,)),))))
    graph = read_tflite(path).main
    assert [t.name for t in graph.tensors()] == ["a", "a_1", "a_2"]


def test_signature_defs_are_read_as_positions_and_written_back() -> None:
    # litert-torch's files name their inputs and outputs by signature ('serving_default': args_0 ->
    # output_0); a runtime's signature runner calls them so
    from npuplan.io.tflite import parse_tflite
    from npuplan.ir.graph import Signature

    model = read_tflite(ZOO10 / "pt_audio1d_49.tflite")
    expected = (Signature("serving_default", 0, (("args_0", 0),), (("output_0", 0),)),)
    assert model.signatures == expected
    assert parse_tflite(write_tflite(model)).signatures == expected
    assert read_tflite(ZOO10 / "pt_audio1d_49__no_names.tflite").signatures == ()
