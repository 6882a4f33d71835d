"""Write tiny TFLite flatbuffers for tests (schema field slots from tensorflow/lite/schema.fbs).

Only what the tests need: elementwise ops over same-shaped tensors of one dtype.
"""

from __future__ import annotations

import flatbuffers

FLOAT32, INT8 = 0, 9
ADD, RELU = 0, 19


def _ints(builder: flatbuffers.Builder, values: list[int]) -> int:
    builder.StartVector(4, len(values), 4)
    for v in reversed(values):
        builder.PrependInt32(v)
    return builder.EndVector()


def _offsets(builder: flatbuffers.Builder, offsets: list[int]) -> int:
    builder.StartVector(4, len(offsets), 4)
    for o in reversed(offsets):
        builder.PrependUOffsetTRelative(o)
    return builder.EndVector()


def elementwise_model(*, opcode: int = ADD, dtype: int = FLOAT32, shape: tuple[int, ...] = (1, 8, 8, 4),
                      signature: tuple[int, ...] | None = None) -> bytes:
    """A model computing ``out = op(a, b)`` (ADD) or ``out = op(a)`` (RELU) on ``shape`` tensors
    (``signature``: every tensor's shape signature, -1 for an open axis)."""
    b = flatbuffers.Builder(1024)
    binary = opcode == ADD
    names = ["a", "b", "out"] if binary else ["a", "out"]
    tensors = []
    for name in names:
        name_off = b.CreateString(name)
        shape_off = _ints(b, list(shape))
        signature_off = _ints(b, list(signature)) if signature is not None else None
        quant = None
        if dtype == INT8:
            b.StartVector(4, 1, 4)
            b.PrependFloat32(0.05)
            scale = b.EndVector()
            b.StartVector(8, 1, 8)
            b.PrependInt64(0)
            zero = b.EndVector()
            b.StartObject(7)
            b.PrependUOffsetTRelativeSlot(2, scale, 0)
            b.PrependUOffsetTRelativeSlot(3, zero, 0)
            quant = b.EndObject()
        b.StartObject(8)
        b.PrependUOffsetTRelativeSlot(0, shape_off, 0)
        b.PrependInt8Slot(1, dtype, 0)
        b.PrependUint32Slot(2, 0, 0)
        b.PrependUOffsetTRelativeSlot(3, name_off, 0)
        if quant is not None:
            b.PrependUOffsetTRelativeSlot(4, quant, 0)
        if signature_off is not None:
            b.PrependUOffsetTRelativeSlot(7, signature_off, 0)
        tensors.append(b.EndObject())
    inputs = list(range(len(names) - 1))
    op_inputs = _ints(b, inputs)
    op_outputs = _ints(b, [len(names) - 1])
    b.StartObject(5)
    b.PrependUint32Slot(0, 0, 0)
    b.PrependUOffsetTRelativeSlot(1, op_inputs, 0)
    b.PrependUOffsetTRelativeSlot(2, op_outputs, 0)
    operator = b.EndObject()

    tensors_vec = _offsets(b, tensors)
    sg_inputs = _ints(b, inputs)
    sg_outputs = _ints(b, [len(names) - 1])
    ops_vec = _offsets(b, [operator])
    sg_name = b.CreateString("main")
    b.StartObject(5)
    b.PrependUOffsetTRelativeSlot(0, tensors_vec, 0)
    b.PrependUOffsetTRelativeSlot(1, sg_inputs, 0)
    b.PrependUOffsetTRelativeSlot(2, sg_outputs, 0)
    b.PrependUOffsetTRelativeSlot(3, ops_vec, 0)
    b.PrependUOffsetTRelativeSlot(4, sg_name, 0)
    subgraph = b.EndObject()

    b.StartObject(4)
    b.PrependInt8Slot(0, min(opcode, 127), 0)
    b.PrependInt32Slot(2, 1, 0)
    b.PrependInt32Slot(3, opcode, 0)
    opcode_off = b.EndObject()

    b.StartObject(1)
    empty_buffer = b.EndObject()

    codes = _offsets(b, [opcode_off])
    subgraphs = _offsets(b, [subgraph])
    buffers = _offsets(b, [empty_buffer])
    desc = b.CreateString("npuplan test model")
    b.StartObject(5)
    b.PrependUint32Slot(0, 3, 0)
    b.PrependUOffsetTRelativeSlot(1, codes, 0)
    b.PrependUOffsetTRelativeSlot(2, subgraphs, 0)
    b.PrependUOffsetTRelativeSlot(3, desc, 0)
    b.PrependUOffsetTRelativeSlot(4, buffers, 0)
    model = b.EndObject()
    b.Finish(model, file_identifier=b"TFL3")
    return bytes(b.Output())
