"""TFLite flatbuffer writer: ``write_tflite(model) -> bytes``, the inverse of ``io.tflite``.

The field slots and scalar types come from the published schema bindings (the ``tflite``
package) themselves: each generated accessor reads its field at a vtable offset with a typed
``Get``, and ``_field`` reads both from the accessor's source, so nothing here restates the
schema by hand. Operator options are written back from ``Op.options`` (the reader's snake_case
keys) into the options table the operator type uses.

Used by tests and fuzzers to build models, and by anything that emits a TFLite file.
"""

from __future__ import annotations

import functools
import linecache
import re
from collections.abc import Mapping, Sequence
from typing import Any

import flatbuffers
import numpy as np

from npuplan.io.tflite import binding, option_fields
from npuplan.ir.graph import Graph, Model, Op, Signature, Tensor
from npuplan.ir.types import DataType

_OFFSET = re.compile(r"self\._tab\.Offset\((\d+)\)")
_FLAGS = re.compile(r"number_types\.(\w+)Flags, (?:o|a) \+")

# Operator types whose options table is not named after the operator (CamelCase + "Options").
_OPTIONS_OF = {
    "AVERAGE_POOL_2D": "Pool2DOptions", "MAX_POOL_2D": "Pool2DOptions", "L2_POOL_2D": "Pool2DOptions",
    "MEAN": "ReducerOptions", "SUM": "ReducerOptions", "REDUCE_MAX": "ReducerOptions",
    "REDUCE_MIN": "ReducerOptions", "REDUCE_PROD": "ReducerOptions", "REDUCE_ANY": "ReducerOptions",
    "CONCATENATION": "ConcatenationOptions", "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
    "LOGISTIC": None, "RELU": None, "RELU6": None, "TANH": None, "HARD_SWISH": None, "RELU_N1_TO_1": None,
    "RELU_0_TO_1": None, "EXP": "ExpOptions", "ABS": "AbsOptions", "RSQRT": None, "LOG": None,
    "PRELU": None, "QUANTIZE": None, "DEQUANTIZE": None, "SQUARED_DIFFERENCE": "SquaredDifferenceOptions",
    "ARG_MAX": "ArgMaxOptions", "MIRROR_PAD": "MirrorPadOptions", "PADV2": "PadV2Options",
    "BATCH_MATMUL": "BatchMatMulOptions", "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
    "SVDF": "SVDFOptions", "RNN": "RNNOptions", "UNIDIRECTIONAL_SEQUENCE_RNN": "SequenceRNNOptions",
}
_DTYPE_CODES = {
    DataType.FLOAT32: 0, DataType.FLOAT16: 1, DataType.INT32: 2, DataType.UINT8: 3, DataType.INT64: 4,
    DataType.STRING: 5, DataType.BOOL: 6, DataType.INT16: 7, DataType.INT8: 9, DataType.RESOURCE: 13,
}


def _enum(name: str) -> dict[str, int]:
    return {k: v for k, v in vars(binding(name)).items() if not k.startswith("_") and isinstance(v, int)}


def _source(function: Any) -> str:
    """The lines of ``function``'s source, first to last its code spans (``inspect.getsource``
    tokenizes the whole module to find where the function ends: most of an emit's first table)."""
    code = function.__code__
    last = max(line for _, _, line in code.co_lines() if line is not None)
    return "".join(linecache.getlines(code.co_filename)[code.co_firstlineno - 1:last])


@functools.lru_cache(maxsize=None)
def _field(class_name: str, accessor: str) -> tuple[int, str | None]:
    """The slot of ``class_name.accessor`` and its scalar kind (``Int32``, ``Bool``...; None for
    tables, strings and vectors of tables), read from the generated accessor's source."""
    source = _source(getattr(binding(class_name), accessor))
    offset = _OFFSET.search(source)
    if offset is None:
        raise ValueError(f"{class_name}.{accessor} has no field offset")
    flags = _FLAGS.search(source)
    return (int(offset.group(1)) - 4) // 2, flags.group(1) if flags else None


@functools.lru_cache(maxsize=None)
def _options_accessors(class_name: str) -> tuple[tuple[str, str], ...]:
    """``(accessor, snake key)`` of each scalar or vector field of an options table."""
    return tuple((accessor, key) for accessor, key, _ in option_fields(class_name))


def options_table_name(op_type: str) -> str | None:
    """The options table an operator type writes (None: it has none we write)."""
    if op_type in _OPTIONS_OF:
        return _OPTIONS_OF[op_type]
    camel = "".join(part.capitalize() if not part[0].isdigit() else part.upper() for part in op_type.split("_"))
    name = camel + "Options"
    return name if name in _enum("BuiltinOptions") else None


class _Writer:
    """One model being written: the builder and the buffers gathered so far."""

    def __init__(self, initial_bytes: int = 1 << 16) -> None:
        self.b = flatbuffers.Builder(initial_bytes)  # it doubles when full, copying what it holds
        self.buffers: list[bytes | memoryview | None] = [None]  # buffer 0 is the empty buffer, by convention
        self.buffer_of: dict[int, int] = {}
        self.io_indices: list[tuple[list[int], list[int]]] = []  # per subgraph, its inputs' and outputs' tensors

    # ---- primitives
    def scalars(self, values: Sequence[Any] | np.ndarray, kind: str) -> int:
        np_type = {"Int32": np.int32, "Int64": np.int64, "Float32": np.float32, "Uint8": np.uint8,
                   "Int8": np.int8, "Bool": np.bool_, "Int16": np.int16, "Uint32": np.uint32}[kind]
        return int(self.b.CreateNumpyVector(np.asarray(values, dtype=np_type)))

    def aligned_bytes(self, data: bytes | memoryview) -> int:
        """A byte vector whose first byte sits at a 16-byte aligned offset from the buffer's end."""
        self.b.StartVector(1, len(data), 16)
        self.b.head = self.b.head - len(data)
        self.b.Bytes[self.b.head:self.b.head + len(data)] = data
        return int(self.b.EndVector())  # the element count StartVector recorded

    def tables(self, offsets: Sequence[int]) -> int:
        self.b.StartVector(4, len(offsets), 4)
        for o in reversed(offsets):
            self.b.PrependUOffsetTRelative(o)
        return int(self.b.EndVector())

    def table(self, class_name: str, fields: Mapping[str, Any]) -> int:
        """A table of ``class_name`` with ``fields`` (accessor -> int offset of a child, or a scalar)."""
        slots = {accessor: _field(class_name, accessor) for accessor in fields}
        self.b.StartObject(max((s for s, _ in slots.values()), default=-1) + 1)
        for accessor, value in fields.items():
            slot, kind = slots[accessor]
            if kind is None or isinstance(value, _Ref):
                self.b.PrependUOffsetTRelativeSlot(slot, int(value), 0)
            else:
                getattr(self.b, f"Prepend{kind}Slot")(slot, _scalar(value, kind), _default(kind))
        return int(self.b.EndObject())

    # ---- model parts
    def tensor(self, t: Tensor) -> int:
        name = self.b.CreateString(t.name)
        shape = self.scalars(list(t.shape), "Int32")
        fields: dict[str, Any] = {"Shape": _Ref(shape), "Type": _DTYPE_CODES.get(t.dtype, 9), "Name": _Ref(name),
                                  "Buffer": self.buffer_for(t), "IsVariable": t.is_variable}
        if t.signature is not None:
            fields["ShapeSignature"] = _Ref(self.scalars(list(t.signature), "Int32"))
        if t.quant is not None:
            q = t.quant
            scale = self.scalars(q.scale, "Float32")
            zero = self.scalars(q.zero_point, "Int64")
            fields["Quantization"] = _Ref(self.table("QuantizationParameters", {
                "Scale": _Ref(scale), "ZeroPoint": _Ref(zero), "QuantizedDimension": q.axis}))
        return self.table("Tensor", fields)

    def buffer_for(self, t: Tensor) -> int:
        if t.data is None:
            return 0
        if id(t.data) not in self.buffer_of:  # tensors sharing one array share one buffer
            self.buffer_of[id(t.data)] = len(self.buffers)
            self.buffers.append(_raw(t.data))
        return self.buffer_of[id(t.data)]

    def options(self, op: Op) -> tuple[int, int]:
        """``(BuiltinOptions type, table offset)`` for ``op`` (0, 0 when it has none)."""
        name = options_table_name(op.type)
        if name is None or not op.options:
            return 0, 0
        enums = {"padding": _enum("Padding"), "fused_activation_function": _enum("ActivationFunctionType")}
        fields: dict[str, Any] = {}
        for accessor, key in _options_accessors(name):
            if key not in op.options:
                continue
            value = op.options[key]
            slot_kind = _field(name, accessor)[1]
            if isinstance(value, tuple):
                fields[accessor] = _Ref(self.scalars(value, slot_kind or "Int32"))
            elif isinstance(value, str):
                if key in enums and value in enums[key]:
                    fields[accessor] = enums[key][value]
                elif slot_kind is None:
                    fields[accessor] = _Ref(self.b.CreateString(value))
            elif slot_kind is not None:
                fields[accessor] = value
        return _enum("BuiltinOptions")[name], self.table(name, fields)

    def operator(self, op: Op, code_index: int, index_of: Mapping[int, int]) -> int:
        inputs = self.scalars([index_of[id(t)] if t is not None else -1 for t in op.inputs], "Int32")
        outputs = self.scalars([index_of[id(t)] for t in op.outputs], "Int32")
        fields: dict[str, Any] = {"OpcodeIndex": code_index, "Inputs": _Ref(inputs), "Outputs": _Ref(outputs)}
        if op.intermediates:
            fields["Intermediates"] = _Ref(self.scalars([index_of[id(t)] for t in op.intermediates], "Int32"))
        if op.type.startswith("CUSTOM:"):  # custom options are raw bytes (format 0: FlexBuffers)
            raw = op.options.get("custom_options", b"")
            if raw:
                fields["CustomOptions"] = _Ref(self.scalars(np.frombuffer(bytes(raw), dtype=np.uint8), "Uint8"))
            return self.table("Operator", fields)
        options_type, options = self.options(op)
        if options_type:
            fields["BuiltinOptionsType"] = options_type
            fields["BuiltinOptions"] = _Ref(options)
        return self.table("Operator", fields)

    def subgraph(self, g: Graph, codes: Mapping[str, int]) -> int:
        tensors = g.tensors()
        index_of = {id(t): i for i, t in enumerate(tensors)}
        tensor_offsets = [self.tensor(t) for t in tensors]
        op_offsets = [self.operator(op, codes[op.type], index_of) for op in g.ops]
        self.io_indices.append(([index_of[id(t)] for t in g.inputs], [index_of[id(t)] for t in g.outputs]))
        fields = {
            "Tensors": _Ref(self.tables(tensor_offsets)),
            "Inputs": _Ref(self.scalars(self.io_indices[-1][0], "Int32")),
            "Outputs": _Ref(self.scalars(self.io_indices[-1][1], "Int32")),
            "Operators": _Ref(self.tables(op_offsets)),
            "Name": _Ref(self.b.CreateString(g.name)),
        }
        return self.table("SubGraph", fields)

    def signature(self, sig: Signature) -> int:
        """A signature def, its positions turned into the tensor indices ``subgraph`` wrote."""
        inputs, outputs = self.io_indices[sig.subgraph]

        def maps(entries: tuple[tuple[str, int], ...], tensors: list[int]) -> int:
            return self.tables([self.table("TensorMap", {"Name": _Ref(self.b.CreateString(name)),
                                                         "TensorIndex": tensors[position]})
                                for name, position in entries if position < len(tensors)])

        return self.table("SignatureDef", {"Inputs": _Ref(maps(sig.inputs, inputs)),
                                           "Outputs": _Ref(maps(sig.outputs, outputs)),
                                           "SignatureKey": _Ref(self.b.CreateString(sig.key)),
                                           "SubgraphIndex": sig.subgraph})

    def operator_code(self, op_type: str) -> int:
        builtins = _enum("BuiltinOperator")
        fields: dict[str, Any] = {"Version": 1}
        if op_type.startswith("CUSTOM:"):
            fields["CustomCode"] = _Ref(self.b.CreateString(op_type[len("CUSTOM:"):]))
            code = builtins["CUSTOM"]
        else:
            code = builtins[op_type]
        fields["DeprecatedBuiltinCode"] = min(code, 127)
        fields["BuiltinCode"] = code
        return self.table("OperatorCode", fields)


def _raw(data: object) -> memoryview:
    """A constant's bytes (native order, C order) without copying them when its array is contiguous
    (a flash tensor of tens of megabytes is copied once, into the builder)."""
    array = np.ascontiguousarray(data)
    if array.dtype.hasobject:  # no raw bytes to view: what tobytes makes of them, as before
        return memoryview(array.tobytes())
    return array.reshape(-1).view(np.uint8).data


class _Ref(int):
    """An offset to a child object (as opposed to a scalar field value)."""


def _default(kind: str) -> Any:
    return False if kind == "Bool" else (0.0 if kind.startswith("Float") else 0)


def _scalar(value: Any, kind: str) -> Any:
    if kind == "Bool":
        return bool(value)
    if kind.startswith("Float"):
        return float(value)
    return int(value)


def _size_hint(model: Model, metadata: Mapping[str, bytes]) -> int:
    """Bytes enough for the constants and metadata, and 64 KiB for the rest: the builder starts that
    large, so a model with tens of megabytes of weights is not copied at every doubling."""
    constants = {id(t.data): t.data for g in model.subgraphs for t in g.tensors() if t.data is not None}
    return (1 << 16) + sum(np.asarray(d).nbytes + 16 for d in constants.values()) + sum(
        len(d) + 16 for d in metadata.values())


def write_tflite(model: Model, *, metadata: Mapping[str, bytes] | None = None) -> bytes:
    """``model`` as TFLite flatbuffer bytes (file identifier ``TFL3``, schema version 3).

    Tensors are numbered in each graph's ``tensors()`` order; each constant gets a buffer of its own,
    16-byte aligned (the Ethos-U driver needs its command stream there). ``metadata`` entries (name ->
    bytes) are written as the model's metadata, each in a buffer of its own. An op of type
    ``"CUSTOM:<code>"`` writes ``options["custom_options"]`` (bytes) as its custom options.
    """
    w = _Writer(_size_hint(model, metadata or {}))
    op_types = sorted({op.type for g in model.subgraphs for op in g.ops})
    codes = {t: i for i, t in enumerate(op_types)}
    subgraphs = [w.subgraph(g, codes) for g in model.subgraphs]
    signatures = [w.signature(sig) for sig in model.signatures if sig.subgraph < len(model.subgraphs)]
    code_offsets = [w.operator_code(t) for t in op_types]
    metadata_buffers = {}
    for name, data in (metadata or {}).items():
        metadata_buffers[name] = len(w.buffers)
        w.buffers.append(bytes(data))
    buffer_offsets = []
    for content in w.buffers:
        fields: dict[str, Any] = {}
        if content:
            fields["Data"] = _Ref(w.aligned_bytes(content))
        buffer_offsets.append(w.table("Buffer", fields))
    metadata_offsets = [w.table("Metadata", {"Name": _Ref(w.b.CreateString(name)), "Buffer": index})
                        for name, index in metadata_buffers.items()]
    fields = {
        "Version": 3,
        "OperatorCodes": _Ref(w.tables(code_offsets)),
        "Subgraphs": _Ref(w.tables(subgraphs)),
        "Description": _Ref(w.b.CreateString(model.description)),
        "Buffers": _Ref(w.tables(buffer_offsets)),
    }
    if metadata_offsets:
        fields["Metadata"] = _Ref(w.tables(metadata_offsets))
    if signatures:
        fields["SignatureDefs"] = _Ref(w.tables(signatures))
    root = w.table("Model", fields)
    w.b.Finish(root, file_identifier=b"TFL3")
    return bytes(memoryview(w.b.Bytes)[w.b.Head():])  # the builder's output, copied once
