"""The tenth differential set, part two: files as older converters and other writers lay them out
(issue 25: "files written by other toolchains"), made by rewriting working models with the
TFLite schema's object API (``ai_edge_litert.schema_py_generated``), each checked to load and run
in LiteRT with the same outputs as its source before it is kept.

Quirks (each a file ``<source>__<quirk>.tflite``):
- ``deprecated_code``: operator codes with only ``deprecated_builtin_code`` (schema before 3a), version 1;
- ``no_signature``: no ``shape_signature``, no signature defs (TF1/TOCO files);
- ``offset_buffers``: every constant after the flatbuffer, addressed by ``offset``/``size`` (the >2 GB format);
- ``own_buffers``: every tensor its own buffer, empty for activations, identical constants sharing one (TOCO);
- ``metadata``: metadata entries (``min_runtime_version``, a conversion record) and the old ``metadata_buffer`` list;
- ``two_subgraphs``: a second, unreferenced subgraph (a copy of the first);
- ``no_names`` / ``same_names``: tensors without names, or all named alike;
- ``tf1_quant``: per-tensor quantizations carrying min/max and ``quantized_dimension`` = the last axis;
- ``uint8``: the int8 model as a TF1 uint8 asymmetric one (zero points and values + 128; per-tensor sources only).

Runs in the PyTorch zoo's environment (it has ai_edge_litert; never a dependency of npuplan):
  /work/torchvenv/bin/python bench/zoo/zoo10_quirks.py [--out /tmp/zoo10q] SOURCE.tflite ...
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
from ai_edge_litert import schema_py_generated as schema
from ai_edge_litert.interpreter import Interpreter

Quirk = Callable[[schema.ModelT], schema.ModelT]
_PLACEHOLDER = 1 << 40  # an offset large enough that packing keeps the field, rewritten once laid out


def deprecated_code(m: schema.ModelT) -> schema.ModelT:
    for code in m.operatorCodes:
        builtin = max(code.builtinCode, code.deprecatedBuiltinCode)
        if builtin < 127:
            code.builtinCode, code.deprecatedBuiltinCode = 0, builtin
    return m


def no_signature(m: schema.ModelT) -> schema.ModelT:
    for sg in m.subgraphs:
        for t in sg.tensors:
            t.shapeSignature = None
    m.signatureDefs = None
    return m


def own_buffers(m: schema.ModelT) -> schema.ModelT:
    """Each activation tensor its own empty buffer; constants with the same bytes one buffer."""
    buffers, by_bytes = [schema.BufferT()], {}
    for sg in m.subgraphs:
        for t in sg.tensors:
            data = m.buffers[t.buffer].data if t.buffer < len(m.buffers) else None
            if data is None or len(data) == 0:
                buffers.append(schema.BufferT())
                t.buffer = len(buffers) - 1
                continue
            key = bytes(np.asarray(data, dtype=np.uint8))
            if key not in by_bytes:
                buffers.append(copy.deepcopy(m.buffers[t.buffer]))
                by_bytes[key] = len(buffers) - 1
            t.buffer = by_bytes[key]
    for entry in m.metadata or ():
        buffers.append(m.buffers[entry.buffer])
        entry.buffer = len(buffers) - 1
    m.buffers = buffers
    return m


def metadata(m: schema.ModelT) -> schema.ModelT:
    entries = list(m.metadata or [])
    for name, value in (("min_runtime_version", b"1.5.0\0\0\0\0\0\0\0\0\0\0\0"), ("CONVERSION_METADATA", b"\x10\0\0\0zoo10")):
        buffer = schema.BufferT()
        buffer.data = np.frombuffer(value, dtype=np.uint8)
        m.buffers.append(buffer)
        entry = schema.MetadataT()
        entry.name, entry.buffer = name, len(m.buffers) - 1
        entries.append(entry)
    m.metadata = entries
    m.metadataBuffer = [e.buffer for e in entries]
    return m


def two_subgraphs(m: schema.ModelT) -> schema.ModelT:
    extra = copy.deepcopy(m.subgraphs[0])
    extra.name = "unused_copy"
    m.subgraphs.append(extra)
    return m


def no_names(m: schema.ModelT) -> schema.ModelT:
    for sg in m.subgraphs:
        for t in sg.tensors:
            t.name = None
    m.signatureDefs = None  # signature defs name tensors
    return m


def same_names(m: schema.ModelT) -> schema.ModelT:
    for sg in m.subgraphs:
        for t in sg.tensors:
            t.name = "tensor"
    m.signatureDefs = None
    return m


def tf1_quant(m: schema.ModelT) -> schema.ModelT:
    for sg in m.subgraphs:
        for t in sg.tensors:
            q = t.quantization
            if q is None or q.scale is None or len(q.scale) != 1:
                continue
            scale, zero = float(q.scale[0]), int(q.zeroPoint[0]) if q.zeroPoint is not None else 0
            lo, hi = (-128, 127) if t.type == schema.TensorType.INT8 else (-32768, 32767)
            q.min, q.max = [(lo - zero) * scale], [(hi - zero) * scale]
            q.quantizedDimension = max(len(t.shape) - 1, 0) if t.shape is not None else 0
    return m


def uint8(m: schema.ModelT) -> schema.ModelT:
    """int8 tensors as uint8 with zero point + 128 and constants + 128 (per-tensor only)."""
    for sg in m.subgraphs:
        for t in sg.tensors:
            if t.type != schema.TensorType.INT8:
                continue
            q = t.quantization
            if q is not None and q.scale is not None and len(q.scale) > 1:
                raise ValueError(f"tensor {t.name!r} is per-channel: uint8 has per-tensor quantization only")
            t.type = schema.TensorType.UINT8
            if q is not None and q.zeroPoint is not None:
                q.zeroPoint = [int(z) + 128 for z in q.zeroPoint]
            data = m.buffers[t.buffer].data
            if data is not None and len(data):
                shifted = (np.asarray(data, dtype=np.uint8).view(np.int8).astype(np.int16) + 128).astype(np.uint8)
                buffer = schema.BufferT()
                buffer.data = shifted
                m.buffers.append(buffer)
                t.buffer = len(m.buffers) - 1
    return m


def offset_buffers(m: schema.ModelT) -> bytes:
    """The file with every non-empty buffer after the flatbuffer, 64-byte aligned, by offset/size."""
    payloads = {}
    for i, buffer in enumerate(m.buffers):
        if buffer.data is not None and len(buffer.data):
            payloads[i] = bytes(np.asarray(buffer.data, dtype=np.uint8))
            buffer.data, buffer.offset, buffer.size = None, _PLACEHOLDER, len(payloads[i])
    head = len(_pack(m))
    position, tail = head, bytearray()
    for i, payload in payloads.items():
        pad = -(position + len(tail)) % 64
        tail += b"\0" * pad
        m.buffers[i].offset = position + len(tail)
        tail += payload
    packed = _pack(m)
    assert len(packed) == head, "repacking changed the flatbuffer's size"
    return packed + bytes(tail)


def _pack(m: schema.ModelT) -> bytes:
    import flatbuffers

    builder = flatbuffers.Builder(1 << 16)
    builder.Finish(m.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


QUIRKS: dict[str, Quirk] = {
    "deprecated_code": deprecated_code, "no_signature": no_signature, "own_buffers": own_buffers,
    "metadata": metadata, "two_subgraphs": two_subgraphs, "no_names": no_names, "same_names": same_names,
    "tf1_quant": tf1_quant, "uint8": uint8,
}


def rewrite(data: bytes, quirk: str) -> bytes:
    model = schema.ModelT.InitFromPackedBuf(data, 0)
    if quirk == "offset_buffers":
        return offset_buffers(model)
    return _pack(QUIRKS[quirk](model))


def run(data: bytes, seed: int = 0) -> list[np.ndarray]:
    """LiteRT's outputs of ``data`` on seeded inputs (uniform over each input type's range)."""
    interpreter = Interpreter(model_content=data)
    interpreter.allocate_tensors()
    rng = np.random.default_rng(seed)
    for detail in interpreter.get_input_details():
        dtype = detail["dtype"]
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            value = rng.integers(info.min, info.max, size=detail["shape"], endpoint=True).astype(dtype)
        else:
            value = rng.uniform(-1, 1, size=detail["shape"]).astype(dtype)
        interpreter.set_tensor(detail["index"], value)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]).copy() for d in interpreter.get_output_details()]


def agree(a: list[np.ndarray], b: list[np.ndarray]) -> float:
    """The largest absolute difference between two runs' outputs (as floats; a uint8 output against an
    int8 one less its 128 offset)."""
    def value(x: np.ndarray) -> np.ndarray:
        return x.astype(np.float64) - (128 if x.dtype == np.uint8 else 0)
    return max(float(np.max(np.abs(value(x) - value(y)))) for x, y in zip(a, b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=Path("/tmp/zoo10q"))
    parser.add_argument("--quirk", action="append", choices=[*QUIRKS, "offset_buffers"])
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for source in args.sources:
        data = source.read_bytes()
        expected = run(data)
        for quirk in args.quirk or [*QUIRKS, "offset_buffers"]:
            name = f"{source.stem}__{quirk}"
            try:
                rewritten = rewrite(data, quirk)
                difference = agree(expected, run(rewritten))
            except Exception as error:  # noqa: BLE001 - a rewrite LiteRT refuses is a line, not the end
                print(f"{name}: SKIPPED {type(error).__name__}: {str(error).splitlines()[0][:160]}", flush=True)
                continue
            (args.out / f"{name}.tflite").write_bytes(rewritten)
            print(f"{name}: {len(rewritten)} bytes, LiteRT max |diff| from the source {difference:g}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
