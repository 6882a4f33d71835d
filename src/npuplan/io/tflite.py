"""TFLite flatbuffer reader: ``read_tflite(path) -> ir.Model``.

Decoding goes through the published schema bindings (the ``tflite`` package) on top of
``flatbuffers``, except for the tables a model has thousands of (buffers, subgraphs' tensors,
quantizations and operators' operand lists), read field by field with ``io.flatbuf`` by the
schema's field ids (``_MODEL``, ``_BUFFER``, ``_TENSOR``, ``_QUANT``, ``_OPERATOR``, ``_SUBGRAPH``).
Every failure to read the file becomes a one-line ``ModelError``.
"""

from __future__ import annotations

import functools
import importlib
import logging
import struct
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from string import ascii_lowercase, ascii_uppercase, digits
from typing import Any

import numpy as np

from npuplan.errors import ModelError
from npuplan.io.flatbuf import numbers, scalar, string, sub_table, table_at, tables, vector_span
from npuplan.io.flatbuf import Table
from npuplan.ir.graph import Graph, Model, Op, Signature, Tensor, frozen_options
from npuplan.ir.model_checks import LIMITS
from npuplan.ir.types import DataType, Quantization

_FILE_IDENTIFIER = b"TFL3"
logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=None)
def binding(name: str) -> Any:
    """The generated class ``name`` of the schema bindings, from its own module ``tflite.<name>``.

    Reaching each class through its module works whether or not the ``tflite`` package's
    ``__init__`` (which imports all ~190 generated modules) has run; see ``npuplan.lean_bindings``.
    """
    return getattr(importlib.import_module(f"tflite.{name}"), name)


def _options_class(name: str) -> Any:
    """The generated options class ``name``, or ``None`` if these bindings predate it."""
    try:
        return binding(name)
    except (ImportError, AttributeError):
        return None


def _enum_names(enum_class: type) -> dict[int, str]:
    """``{value: NAME}`` of a flatbuffers-generated enum class."""
    return {v: k for k, v in vars(enum_class).items() if not k.startswith("_") and isinstance(v, int)}


_BUILTIN_NAMES = _enum_names(binding("BuiltinOperator"))
_TENSOR_TYPES = _enum_names(binding("TensorType"))
_PADDING_NAMES = _enum_names(binding("Padding"))
_ACTIVATION_NAMES = _enum_names(binding("ActivationFunctionType"))
_OPTIONS_NAMES = _enum_names(binding("BuiltinOptions"))

_DTYPES: dict[str, tuple[DataType, Any]] = {
    "INT8": (DataType.INT8, np.int8),
    "UINT8": (DataType.UINT8, np.uint8),
    "INT16": (DataType.INT16, np.int16),
    "INT32": (DataType.INT32, np.int32),
    "INT64": (DataType.INT64, np.int64),
    "FLOAT16": (DataType.FLOAT16, np.float16),
    "FLOAT32": (DataType.FLOAT32, np.float32),
    "BOOL": (DataType.BOOL, np.bool_),
    "STRING": (DataType.STRING, None),
    "RESOURCE": (DataType.RESOURCE, None),
}

# Field ids of the schema's tables read with ``io.flatbuf`` (their order in schema.fbs)
_MODEL = {"buffers": 4}
_BUFFER = {"data": 0, "offset": 1, "size": 2}
_SUBGRAPH = {"tensors": 0, "inputs": 1, "outputs": 2, "operators": 3}
_TENSOR = {"shape": 0, "type": 1, "buffer": 2, "name": 3, "quantization": 4, "is_variable": 5, "shape_signature": 7}
_QUANT = {"scale": 2, "zero_point": 3, "quantized_dimension": 6}
_OPERATOR = {"opcode_index": 0, "inputs": 1, "outputs": 2, "custom_options": 5, "intermediates": 8,
             "large_custom_options_offset": 9, "large_custom_options_size": 10}
_INT8 = struct.Struct("<b")
_UINT8 = struct.Struct("<B")
_INT32 = struct.Struct("<i")
_UINT32 = struct.Struct("<I")
_UINT64 = struct.Struct("<Q")

# Option fields whose integer value is an enum we name.
_ENUM_FIELDS: dict[str, dict[int, str]] = {
    "padding": _PADDING_NAMES,
    "fused_activation_function": _ACTIVATION_NAMES,
}


def read_tflite(path: str | Path) -> Model:
    """Read a ``.tflite`` file into an ``ir.Model`` (all subgraphs, first is the entry point).

    Raises ``ModelError`` (one line) if the file is missing, unreadable, not a TFLite flatbuffer,
    truncated or corrupt.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"model file not found: {path}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelError(f"cannot read model file {path}: {exc.strerror or exc}") from None
    return parse_tflite(data, name=path.stem, label=str(path))


def parse_tflite(data: bytes, *, name: str = "model", label: str | None = None) -> Model:
    """Parse TFLite flatbuffer bytes; see ``read_tflite``. Errors start with ``label`` (the path)."""
    where = label or f"'{name}'"
    if len(data) < 8 or data[4:8] != _FILE_IDENTIFIER:
        raise ModelError(f"{where} is not a TFLite flatbuffer (file identifier is not 'TFL3')")
    try:
        return _parse_model(data, name)
    except ModelError as exc:
        raise ModelError(f"{where}: {exc}") from None
    except Exception as exc:  # any decoding failure means a truncated or corrupt file
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ModelError(f"{where} is truncated or corrupt ({detail})") from None


def _parse_model(data: bytes, name: str) -> Model:
    fb = binding("Model").GetRootAsModel(data, 0)
    op_types = [_op_type_name(fb.OperatorCodes(i)) for i in range(fb.OperatorCodesLength())]
    root = table_at(data, fb._tab.Pos)
    buffers = [_buffer_bytes(b, data, i) for i, b in enumerate(tables(root, _MODEL["buffers"]))]
    subgraphs = tuple(
        _parse_subgraph(fb.Subgraphs(i), op_types, buffers, i) for i in range(fb.SubgraphsLength())
    )
    if not subgraphs:
        raise ModelError(f"'{name}' has no subgraphs")
    description = (fb.Description() or b"").decode("utf-8", errors="replace")
    signatures = tuple(_signature(fb, k, len(subgraphs)) for k in range(fb.SignatureDefsLength()))
    return Model(name=name, subgraphs=subgraphs, description=description, signatures=signatures)


def _signature(fb: Any, k: int, count: int) -> Signature:
    """Signature def ``k``, its tensor indices as positions in its subgraph's inputs and outputs (an
    entry naming a tensor that is neither is left out: nothing could be passed through it)."""
    sig = fb.SignatureDefs(k)
    index = int(sig.SubgraphIndex())
    if not 0 <= index < count:
        raise ModelError(f"signature def {k} refers to subgraph {index} but the model has {count}")
    sg = fb.Subgraphs(index)
    ends = ([int(i) for i in sg.InputsAsNumpy()] if sg.InputsLength() else [],
            [int(i) for i in sg.OutputsAsNumpy()] if sg.OutputsLength() else [])

    def entries(maps: list[Any], tensors: list[int]) -> tuple[tuple[str, int], ...]:
        named = (((m.Name() or b"").decode("utf-8", errors="replace"), int(m.TensorIndex())) for m in maps)
        return tuple((name, tensors.index(t)) for name, t in named if t in tensors)

    return Signature((sig.SignatureKey() or b"").decode("utf-8", errors="replace"), index,
                     entries([sig.Inputs(i) for i in range(sig.InputsLength())], ends[0]),
                     entries([sig.Outputs(i) for i in range(sig.OutputsLength())], ends[1]))


def _op_type_name(code: Any) -> str:
    builtin = max(int(code.BuiltinCode()), int(code.DeprecatedBuiltinCode()))
    type_name = _BUILTIN_NAMES.get(builtin, f"UNKNOWN_{builtin}")
    if type_name == "CUSTOM":
        custom = (code.CustomCode() or b"").decode("utf-8", errors="replace")
        return f"CUSTOM:{custom}"
    return type_name


class _Outside(str):
    """Why a buffer cannot be read (it lies outside the file): an error for the tensor that uses
    it, none for a buffer only metadata names (Vela 5.2.0 copies an input's metadata buffers
    stored by offset with their old offsets; TensorFlow Lite Micro never reads them)."""


def _buffer_bytes(buffer: Table, data: bytes, index: int) -> bytes | _Outside | None:
    """The bytes of one buffer, checked to lie inside the file; ``None`` when empty."""
    offset = int(scalar(buffer, _BUFFER["offset"], _UINT64))
    if offset > 1:  # large models keep buffers after the flatbuffer, addressed by offset/size
        size = int(scalar(buffer, _BUFFER["size"], _UINT64))
        if offset + size > len(data):
            return _Outside(f"buffer {index} (offset {offset}, {size} bytes) lies outside the file")
        return data[offset : offset + size]
    start, length = vector_span(buffer, _BUFFER["data"])
    if length == 0:
        return None
    if start + length > len(data):
        return _Outside(f"buffer {index} ({length} bytes) runs past the end of the file")
    return data[start : start + length]


def _parse_subgraph(sg: Any, op_types: list[str], buffers: list[bytes | _Outside | None], index: int) -> Graph:
    _check_counts(sg, index)
    table = table_at(sg._tab.Bytes, sg._tab.Pos)
    tensors = _unique_names([_parse_tensor(t, buffers) for t in tables(table, _SUBGRAPH["tensors"])], index)

    def pick(owner: Table, field: int, what: str) -> tuple[Tensor | None, ...]:
        indices = numbers(owner, field, np.int32)
        if indices is None:
            return ()
        found = []
        for i in indices.tolist():
            if not -1 <= i < len(tensors):
                raise ModelError(f"subgraph {index}: {what} refers to tensor {i} but the subgraph has "
                                 f"{len(tensors)} tensors")
            found.append(tensors[i] if i >= 0 else None)
        return tuple(found)

    ops = []
    operator = binding("Operator")
    for i, op_table in enumerate(tables(table, _SUBGRAPH["operators"])):
        code = int(scalar(op_table, _OPERATOR["opcode_index"], _UINT32))
        if not 0 <= code < len(op_types):
            raise ModelError(f"subgraph {index}: op {i} has operator code {code} but the model has {len(op_types)}")
        op_type = op_types[code]
        op_inputs = pick(op_table, _OPERATOR["inputs"], f"op {i} ({op_type}) input")
        op_outputs = tuple(t for t in pick(op_table, _OPERATOR["outputs"], f"op {i} ({op_type}) output") if t is not None)
        intermediates = tuple(t for t in pick(op_table, _OPERATOR["intermediates"], f"op {i} ({op_type}) intermediate")
                              if t is not None)
        fb_op = operator()
        fb_op.Init(op_table.data, op_table.pos)
        options = (_parse_options(fb_op) if not op_type.startswith("CUSTOM:")
                   else frozen_options({"custom_options": _custom_options(op_table, f"subgraph {index}: op {i}")}))
        ops.append(Op(op_type, op_inputs, op_outputs, options, index=i, intermediates=intermediates))
    inputs = tuple(t for t in pick(table, _SUBGRAPH["inputs"], "an input") if t is not None)
    outputs = tuple(t for t in pick(table, _SUBGRAPH["outputs"], "an output") if t is not None)
    name = (sg.Name() or b"").decode("utf-8", errors="replace") or f"subgraph_{index}"
    return Graph(name=name, ops=tuple(ops), inputs=inputs, outputs=outputs)


def _custom_options(op_table: Table, label: str) -> bytes:
    """A custom operator's options (FlexBuffers bytes the CPU kernel parses; empty when none),
    kept so that a written file still runs it: in the operator, or after the flatbuffer at
    ``large_custom_options_offset`` (the >2 GB format)."""
    start, length = vector_span(op_table, _OPERATOR["custom_options"])
    if length:
        return bytes(op_table.data[start : start + length])
    offset = int(scalar(op_table, _OPERATOR["large_custom_options_offset"], _UINT64))
    if offset <= 1:
        return b""
    size = int(scalar(op_table, _OPERATOR["large_custom_options_size"], _UINT64))
    if offset + size > len(op_table.data):
        raise ModelError(f"{label}: custom options (offset {offset}, {size} bytes) lie outside the file")
    return bytes(op_table.data[offset : offset + size])


def _unique_names(tensors: list[Tensor], index: int) -> list[Tensor]:
    """``tensors`` with names unique in their subgraph: a writer may leave names empty or repeat
    them (LiteRT runs such files), but planning keys tensors by name. An empty name becomes
    ``tensor_<i>`` and a repeat ``<name>_<i>`` (i: the tensor's index in the file)."""
    seen = {t.name for t in tensors if t.name}
    if len(seen) == len(tensors):
        return tensors
    taken: set[str] = set()
    renamed = []
    for i, t in enumerate(tensors):
        name = t.name or f"tensor_{i}"
        while name in taken or (name != t.name and name in seen):
            name = f"{name}_{i}"
        taken.add(name)
        renamed.append(t if name == t.name else replace(t, name=name))
    logger.warning("subgraph %d: %d tensor(s) with an empty or repeated name renamed (e.g. '%s')", index,
                   sum(a is not b for a, b in zip(tensors, renamed)),
                   next(b.name for a, b in zip(tensors, renamed) if a is not b))
    return renamed


def _check_counts(sg: Any, index: int) -> None:
    """Refuse absurd operator and tensor counts before decoding them (each costs Python objects)."""
    if sg.OperatorsLength() > LIMITS.max_ops:
        raise ModelError(f"subgraph {index} has {sg.OperatorsLength()} operators; npuplan plans at most {LIMITS.max_ops}")
    if sg.TensorsLength() > LIMITS.max_tensors:
        raise ModelError(f"subgraph {index} has {sg.TensorsLength()} tensors; npuplan plans at most {LIMITS.max_tensors}")


def _parse_tensor(t: Table, buffers: list[bytes | _Outside | None]) -> Tensor:
    type_name = _TENSOR_TYPES.get(int(scalar(t, _TENSOR["type"], _INT8)), "UNKNOWN")
    dtype, np_dtype = _DTYPES.get(type_name, (DataType.UNKNOWN, None))
    dims = numbers(t, _TENSOR["shape"], np.int32)
    shape = dims.tolist() if dims is not None else []
    dims = numbers(t, _TENSOR["shape_signature"], np.int32)
    signature = dims.tolist() if dims is not None else []
    if signature and signature[0] == -1 and shape:
        shape[0] = 1  # dynamic batch is planned as batch 1
    name = (string(t, _TENSOR["name"]) or b"").decode("utf-8", errors="replace")
    buffer = int(scalar(t, _TENSOR["buffer"], _UINT32))
    if buffer >= len(buffers) and (buffer != 0 or buffers):
        raise ModelError(f"tensor '{name}' refers to buffer {buffer} but the model has {len(buffers)} buffers")
    raw = buffers[buffer] if buffer < len(buffers) else None
    if isinstance(raw, _Outside):
        raise ModelError(f"tensor '{name}': {raw}")
    values = None
    if raw is not None and np_dtype is not None:
        if len(raw) % np.dtype(np_dtype).itemsize:
            raise ModelError(f"tensor '{name}': buffer {buffer} holds {len(raw)} bytes, not a whole number of "
                             f"{type_name.lower()} values")
        values = np.frombuffer(raw, dtype=np_dtype)
        values = values.reshape(shape) if values.size == int(np.prod(shape, dtype=np.int64)) else values
        values.flags.writeable = False
    return Tensor(
        name=name,
        shape=tuple(shape),
        dtype=dtype,
        quant=_parse_quant(sub_table(t, _TENSOR["quantization"])),
        data=values,
        is_variable=bool(scalar(t, _TENSOR["is_variable"], _UINT8)),
        signature=tuple(signature) if -1 in signature else None,
    )


def _parse_quant(q: Table | None) -> Quantization | None:
    scale = None if q is None else numbers(q, _QUANT["scale"], np.float32)
    if scale is None or not len(scale):
        return None
    zero_point = numbers(q, _QUANT["zero_point"], np.int64)  # type: ignore[arg-type]
    return Quantization(
        scale=tuple(scale.tolist()),  # tolist: Python floats and ints, as float()/int() give
        zero_point=tuple(zero_point.tolist()) if zero_point is not None and len(zero_point) else (0,) * len(scale),
        axis=int(scalar(q, _QUANT["quantized_dimension"], _INT32)),  # type: ignore[arg-type]
    )


_SKIP_SUFFIXES = ("AsNumpy", "IsNone", "Length", "BufferHasIdentifier")
_UPPER, _LOWER = frozenset(ascii_uppercase), frozenset(ascii_lowercase)
_LOWER_OR_DIGIT = _LOWER | frozenset(digits)


def _snake(name: str) -> str:
    """``StrideW`` -> ``stride_w``, ``ABCDef`` -> ``abc_def``: '_' before a capital that follows a lower-case
    letter or digit, or that follows a capital and comes before a lower-case letter (ASCII). By hand:
    a regular expression's compile costs more than the few dozen names read (~0.6 M instructions)."""
    cut = [i for i in range(1, len(name)) if name[i] in _UPPER and (
        name[i - 1] in _LOWER_OR_DIGIT or (name[i - 1] in _UPPER and i + 1 < len(name) and name[i + 1] in _LOWER))]
    return "_".join(name[i:j] for i, j in zip([0, *cut], [*cut, len(name)])).lower()


@functools.lru_cache(maxsize=None)
def option_fields(class_name: str) -> tuple[tuple[str, str, bool], ...]:
    """``(accessor, snake_case key, is a vector)`` of each field of a generated options class (the
    reader's and the writer's one list: ``Init`` is the table's initialiser, ``InitSubgraphIndex``
    CALL_ONCE's field)."""
    options_class = _options_class(class_name)
    return tuple(
        (method, _snake(method), hasattr(options_class, method + "AsNumpy"))
        for method in dir(options_class)
        if not (method.startswith("_") or method == "Init" or method.startswith("GetRootAs")
                or method.endswith(_SKIP_SUFFIXES))
    )


def _parse_options(fb_op: Any) -> Mapping[str, Any]:
    """Builtin options as a frozen snake_case mapping, enums as names, vectors as tuples."""
    options_type = int(fb_op.BuiltinOptionsType())
    table = fb_op.BuiltinOptions()
    class_name = _OPTIONS_NAMES.get(options_type, "NONE")
    options_class = _options_class(class_name) if options_type != 0 and table is not None else None
    if options_class is None:
        return frozen_options({})
    options = options_class()
    options.Init(table.Bytes, table.Pos)
    decoded: dict[str, Any] = {}
    for method, key, is_vector in option_fields(class_name):
        if is_vector:
            empty = getattr(options, method + "IsNone")()
            decoded[key] = () if empty else tuple(int(v) for v in getattr(options, method + "AsNumpy")())
            continue
        value = getattr(options, method)()
        if key in _ENUM_FIELDS:
            value = _ENUM_FIELDS[key].get(int(value), str(value))
        elif isinstance(value, bytes):
            value = value.decode("utf-8", errors="replace")
        decoded[key] = value
    return frozen_options(decoded)
