"""A buffer stored by offset that lies outside the file is an error only for a tensor that uses it:
Vela 5.2.0, compiling a file whose buffers are stored by offset, copies the metadata buffers
(``min_runtime_version``, ``CONVERSION_METADATA``) with their old offsets past its shorter output;
TensorFlow Lite Micro never reads them and npuplan refused the whole file (so ``npuplan estimate``
and the zoo report could not read Vela's file of bench/zoo/zoo10_quirks.py's offset_buffers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from npuplan.errors import ModelError
from npuplan.io.tflite import parse_tflite

schema = pytest.importorskip("ai_edge_litert.schema_py_generated", reason="the schema's object API writes the file")
import flatbuffers  # noqa: E402

SSD = Path(__file__).resolve().parents[2] / "data" / "zoo12" / "ssd_det_tiny_16.tflite"


def _with_outside_buffer(*, used_by_tensor: bool) -> bytes:
    data = SSD.read_bytes()
    model = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(data, 0))
    outside = schema.BufferT()
    outside.offset, outside.size = 1 << 24, 16
    model.buffers.append(outside)
    entry = schema.MetadataT()
    entry.name, entry.buffer = b"stale", len(model.buffers) - 1
    model.metadata = [*(model.metadata or []), entry]
    if used_by_tensor:
        anchors = next(t for t in model.subgraphs[0].tensors if t.name == b"anchors")
        anchors.buffer = len(model.buffers) - 1
    builder = flatbuffers.Builder(len(data))
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def test_a_metadata_buffer_outside_the_file_is_not_read() -> None:
    assert len(parse_tflite(_with_outside_buffer(used_by_tensor=False)).main.ops) == 21


def test_a_tensor_whose_buffer_lies_outside_the_file_is_refused_in_one_line() -> None:
    with pytest.raises(ModelError, match=r"tensor 'anchors': buffer \d+ \(offset 16777216, 16 bytes\) lies outside"):
        parse_tflite(_with_outside_buffer(used_by_tensor=True))
