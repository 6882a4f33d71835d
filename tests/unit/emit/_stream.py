"""Read an emitted file's register commands back (for tests that check what a stream sets)."""

from __future__ import annotations

import tflite

from npuplan.regstream.words import Word, decode_words, payload_words


def command_words(data: bytes) -> list[Word]:
    """Every register command of every ethos-u operator in the file, in order."""
    model = tflite.Model.GetRootAsModel(data, 0)
    sg = model.Subgraphs(0)
    out: list[Word] = []
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        code = model.OperatorCodes(op.OpcodeIndex())
        if not code.CustomCode() or code.CustomCode() != b"ethos-u":
            continue
        stream = sg.Tensors(int(op.InputsAsNumpy()[0]))
        out += decode_words(payload_words(bytes(model.Buffers(stream.Buffer()).DataAsNumpy())).words)
    return out


def registers_at_kicks(data: bytes, name: str) -> list[int]:
    """The value register ``name`` holds at each NPU operation (``NPU_OP_CONV``/``POOL``/...)."""
    value, out = 0, []
    for w in command_words(data):
        if w.name == name:
            value = w.value
        elif w.name in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE", "NPU_OP_POOL", "NPU_OP_ELEMENTWISE"):
            out.append(value)
    return out
