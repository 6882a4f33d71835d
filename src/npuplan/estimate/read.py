"""Read a compiled Ethos-U file for estimating: each ethos-u operator's command stream decoded
into operations, DMAs and waits (``regstream``: the decoder ``npuplan validate`` and ``npuplan
run`` use), which tensor each of its regions is, and the operators left to the CPU.

The file is untrusted: npuplan's reader checks its structure (``ModelError``), and a driver
payload or command stream that does not decode is a ``ValidationError``, one line each. Whether
the streams keep every memory invariant is ``npuplan validate``'s question, not the estimate's
(a time is owed to any stream the hardware would run).
"""

from __future__ import annotations

import struct
from pathlib import Path

from npuplan.errors import ModelError, ValidationError
from npuplan.io.tflite import binding, parse_tflite
from npuplan.ir.graph import Op, Tensor
from npuplan.records import record
from npuplan.regstream.events import Event, NpuEvent, stream_events
from npuplan.regstream.sources import OperationSource, file_sources
from npuplan.regstream.tflite_file import has_offline_plan
from npuplan.regstream.words import payload_words

ETHOS_U = "CUSTOM:ethos-u"


@record
class FileOperator:
    """One operator of the file in execution order: its type (``CUSTOM:ethos-u`` for an NPU stream)
    and its first output tensor's name."""

    type: str
    name: str


@record(slots=False)
class FileStream:
    """One ethos-u operator's decoded stream (``operator``: its index over every subgraph's operators,
    the main one's first) and, per region, the tensor it is (name) and its bytes (region 0: the flash
    tensor's data)."""

    operator: int
    events: tuple[Event, ...]
    region_names: dict[int, str]
    region_bytes: dict[int, int]


@record(slots=False)
class CompiledFile:
    """A compiled file: its ethos-u streams in order, every operator, the flash bytes (each flash
    tensor once). ``sources``: per stream, the source network's operators (indices in its main
    subgraph) each NPU operation came from, when the file records it (npuplan's files,
    ``regstream.sources``) and the record matches the streams; None otherwise (Vela's files)."""

    network: str
    streams: tuple[FileStream, ...]
    operators: tuple[FileOperator, ...]
    flash_bytes: int
    sources: tuple[tuple[OperationSource, ...], ...] | None = None

    @property
    def cpu_operators(self) -> tuple[FileOperator, ...]:
        return tuple(op for op in self.operators if op.type != ETHOS_U)


def read_compiled(path: str | Path) -> CompiledFile:
    """The streams and operators of the compiled file at ``path``; ``ModelError`` (unreadable, not
    TFLite, no ethos-u operator) or ``ValidationError`` (a stream that does not decode), one line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ModelError(f"cannot read '{path}': {error.strerror}") from None
    # every subgraph's operators, the main one's first: Vela compiles the branches of an IF (and a
    # WHILE's body) to ethos-u operators of their own subgraphs, and counts them all in its figure
    ops = [op for graph in parse_tflite(data, name=path.stem, label=f"'{path}'").subgraphs for op in graph.ops]
    npu = [(k, op) for k, op in enumerate(ops) if op.type == ETHOS_U]
    streams = tuple(_stream(k, op, path) for k, op in npu)
    if not streams and not has_offline_plan(data):  # a compiled file may leave everything on the CPU
        raise ModelError(f"'{path}' has no ethos-u operator: not a compiled file (compile it first: "
                         f"npuplan {path})")
    operators = tuple(FileOperator(op.type, op.outputs[0].name if op.outputs else f"operator {k}")
                      for k, op in enumerate(ops))
    flash = {id(op.inputs[1]): s.region_bytes.get(0, 0) for (_, op), s in zip(npu, streams)}
    return CompiledFile(_network_name(path), streams, operators, sum(flash.values()), _sources(data, streams))


def _sources(data: bytes, streams: tuple[FileStream, ...]) -> tuple[tuple[OperationSource, ...], ...] | None:
    """The file's record of each NPU operation's source operator, if it has one that counts as
    many operations per stream as the streams hold (a record that does not match is ignored)."""
    found = file_sources(binding("Model").GetRootAsModel(data, 0))
    counts = [sum(isinstance(e, NpuEvent) for e in s.events) for s in streams]
    if found is None or [len(s) for s in found] != counts:
        return None
    return found


def _stream(index: int, op: Op, path: Path) -> FileStream:
    inputs = op.inputs
    if len(inputs) < 4 or any(t is None for t in inputs[:2]) or inputs[0].data is None:  # type: ignore[union-attr]
        raise ValidationError(f"'{path}' operator {index}: an ethos-u operator needs [command stream, flash, scratch, "
                              f"fast scratch, ...] inputs")
    try:
        payload = payload_words(inputs[0].data.tobytes())  # type: ignore[union-attr]
        events = tuple(stream_events(payload.words))
    except ValidationError as error:
        raise ValidationError(f"'{path}' operator {index}: {error}") from None
    except (struct.error, ValueError, IndexError, OverflowError) as error:
        raise ValidationError(f"'{path}' operator {index}: corrupt command stream ({type(error).__name__})") from None
    tensors: list[Tensor | None] = [*inputs[1:], *op.outputs]
    names = {region: t.name for region, t in enumerate(tensors) if t is not None}
    sizes = {region: _bytes(t, constant=region == 0) for region, t in enumerate(tensors) if t is not None}
    return FileStream(index, events, names, sizes)


def _bytes(tensor: Tensor, *, constant: bool) -> int:
    if constant and tensor.data is not None:
        return int(tensor.data.nbytes)
    return tensor.size_bytes


def _network_name(path: Path) -> str:
    """The network's name: the file's stem without the compilers' suffix (``_vela``, ``_npuplan``)."""
    stem = path.stem
    for suffix in ("_vela", "_npuplan"):
        if stem.endswith(suffix):
            return stem[: -len(suffix)]
    return stem
