"""A custom operator's options (the FlexBuffers its CPU kernel parses) survive reading and writing:
tests/data/zoo12/ssd_det_tiny_16.tflite ends in TFLite_Detection_PostProcess (bench/zoo/zoo12_models.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from npuplan.errors import ModelError
from npuplan.io.tflite import parse_tflite, read_tflite
from npuplan.io.tflite_write import write_tflite

SSD = Path(__file__).resolve().parents[2] / "data" / "zoo12" / "ssd_det_tiny_16.tflite"
POSTPROCESS = "CUSTOM:TFLite_Detection_PostProcess"


def _custom_options(data: bytes) -> bytes:
    (op,) = [op for op in parse_tflite(data).main.ops if op.type == POSTPROCESS]
    return bytes(op.options["custom_options"])


def test_the_reader_keeps_a_custom_operators_options() -> None:
    options = _custom_options(SSD.read_bytes())
    # the FlexBuffers map the generator wrote: its keys are stored as strings
    assert len(options) > 200 and b"max_detections" in options and b"nms_iou_threshold" in options


def test_the_writer_writes_them_back() -> None:
    model = read_tflite(SSD)
    assert _custom_options(write_tflite(model)) == _custom_options(SSD.read_bytes())


def test_custom_options_stored_after_the_flatbuffer_are_read_and_checked() -> None:
    from ai_edge_litert import schema_py_generated as schema  # the schema's object API writes the >2 GB form
    import flatbuffers

    data = SSD.read_bytes()
    options = _custom_options(data)
    model = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(data, 0))
    (op,) = [op for op in model.subgraphs[0].operators if model.operatorCodes[op.opcodeIndex].customCode]
    op.customOptions = None

    def packed(offset: int) -> bytes:
        op.largeCustomOptionsOffset, op.largeCustomOptionsSize = offset, len(options)
        builder = flatbuffers.Builder(len(data))
        builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
        return bytes(builder.Output())

    head = packed(1 << 20)  # the same size whatever the offset: the real one is its length
    moved = packed(len(head)) + options
    assert _custom_options(moved) == options
    with pytest.raises(ModelError, match="custom options .* lie outside the file"):
        parse_tflite(packed(len(head) + 8) + options)


def test_a_builtin_operator_has_no_custom_options() -> None:
    assert all("custom_options" not in op.options for op in read_tflite(SSD).main.ops if op.type != POSTPROCESS)
