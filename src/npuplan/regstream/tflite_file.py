"""Validate a deployable TFLite file (``npuplan validate MODEL_npuplan.tflite``, or Vela's output).

Every ``ethos-u`` custom operator's driver payload is decoded and its command stream replayed over
the memory model (``regstream.memory``), with the regions the TensorFlow Lite Micro kernel gives
the driver: region 0 the operator's input 1 (flash), 1 its input 2 (scratch), 2 its input 3 (fast
scratch; the same bytes when it is the same tensor), 3 on its further inputs then outputs. Tensors
the offline memory plan places in the arena are the scratch tensor's bytes at their offsets: the
network's inputs start written, CPU operators read their inputs and write their outputs there,
every output of an ethos-u operator must be written when its stream ends, every network output
at the end.

Variable tensors (an LSTM's or SVDF's state, ``is_variable``) hold what the previous invocation
left: as TensorFlow Lite Micro does (it resets them when the tensors are allocated and gives an
offline-planned one its offset for the whole invocation, as Vela's live ranges do), they start
written, and their bytes are reserved: only the operators that take the variable may write them,
and only inside it. A file with no ethos-u operator (every operator left on the CPU, as Vela writes
a network it cannot map) has nothing to replay and is valid.
"""

from __future__ import annotations

import struct
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from npuplan.errors import ModelError, ValidationError
from npuplan.records import record
from npuplan.regstream.events import DmaEvent, Event, NpuEvent, NpuStream, WaitEvent, stream_events
from npuplan.regstream.memory import Region, Replay
from npuplan.regstream.words import Payload, payload_words

if TYPE_CHECKING:  # the weight-stream check (and the decoder it loads) only when asked for
    from npuplan.regstream.weight_streams import WeightReport

_SIZES = {0: 4, 1: 2, 2: 4, 3: 1, 4: 8, 6: 1, 7: 2, 9: 1, 10: 8, 11: 16, 15: 4, 16: 8}  # TensorType -> bytes


@record(slots=False)
class FileReport:
    """What validating a file replayed, and what checking its weight streams decoded (None: not asked)."""

    streams: tuple[NpuStream, ...]
    weights: WeightReport | None = None

    @property
    def npu_operations(self) -> int:
        return sum(isinstance(e, NpuEvent) for s in self.streams for e in s.events)

    @property
    def dma_operations(self) -> int:
        return sum(isinstance(e, DmaEvent) for s in self.streams for e in s.events)

    @property
    def waits(self) -> int:
        return sum(isinstance(e, WaitEvent) for s in self.streams for e in s.events)


def _model(data: bytes) -> Any:
    from npuplan.io.tflite import binding  # works under the program's lean bindings too

    try:
        return binding("Model").GetRootAsModel(data, 0)
    except Exception as error:  # noqa: BLE001 - a corrupt file is bad input
        raise ModelError(f"not a TFLite flatbuffer: {error}") from None


def _tensor_bytes(t: Any) -> int:
    shape = t.ShapeAsNumpy() if t.ShapeLength() else np.array([1])
    return int(np.prod([max(int(d), 1) for d in shape])) * _SIZES.get(t.Type(), 1)


def _offline_offsets(model: Any, count: int) -> list[int]:
    for i in range(model.MetadataLength()):
        meta = model.Metadata(i)
        if meta.Name() == b"OfflineMemoryAllocation":
            words = np.frombuffer(bytes(model.Buffers(meta.Buffer()).DataAsNumpy()), dtype="<i4")
            return [int(v) for v in words[3:3 + count]]
    return [-1] * count


def _is_ethos_u(model: Any, op: Any) -> bool:
    return model.OperatorCodes(op.OpcodeIndex()).CustomCode() == b"ethos-u"


def ethos_u_payloads(data: bytes) -> list[tuple[bytes, bytes]]:
    """Each ethos-u operator's driver payload and flash tensor bytes, in operator order (the file's
    structure trusted: for reports and comparisons, not for validating untrusted files)."""
    model = _model(data)
    sg = model.Subgraphs(0)
    out = []
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        if _is_ethos_u(model, op):
            stream, flash = (sg.Tensors(int(k)) for k in op.InputsAsNumpy()[:2])
            out.append((bytes(model.Buffers(stream.Buffer()).DataAsNumpy()),
                        bytes(model.Buffers(flash.Buffer()).DataAsNumpy())))
    return out


class _FileReplay:
    """The regions of a file: one byte model per tensor that is a region, the arena for the rest."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.sg = model.Subgraphs(0)
        self.offsets = _offline_offsets(model, self.sg.TensorsLength())
        self.states: dict[int, Region] = {}
        self.arena: int | None = None  # the tensor whose bytes the offline plan addresses (offset 0)

    def region_of(self, tensor: int, *, constant: bool) -> Region:
        if tensor not in self.states:
            t = self.sg.Tensors(tensor)
            size = _tensor_bytes(t) if not constant else int(self.model.Buffers(t.Buffer()).DataLength())
            self.states[tensor] = Region.empty(t.Name().decode(errors="replace"), size, written=constant)
        return self.states[tensor]

    def in_arena(self, tensor: int) -> tuple[int, int] | None:
        """``(offset, bytes)`` of a tensor the offline plan places in the arena."""
        offset = self.offsets[tensor] if tensor < len(self.offsets) else -1
        if offset < 0 or self.arena is None or tensor == self.arena:
            return None
        return offset, _tensor_bytes(self.sg.Tensors(tensor))

    def touch(self, replay: Replay, tensor: int, *, write: bool, label: str) -> None:
        placed = self.in_arena(tensor)
        if placed is not None:
            replay.touch(1, placed[0], placed[1], write=write, label=label)


def _stream(model: Any, op: Any, index: int) -> tuple[list[Event], Payload]:
    inputs = [int(i) for i in op.InputsAsNumpy()]
    t = model.Subgraphs(0).Tensors(inputs[0])
    payload = payload_words(bytes(model.Buffers(t.Buffer()).DataAsNumpy()))
    try:
        return stream_events(payload.words), payload
    except ValidationError as error:
        raise ValidationError(f"ethos-u operator {index}: {error}") from None


def validate_tflite(data: bytes, *, label: str = "the file", weights: bool = False) -> FileReport:
    """Replay every ethos-u operator of a TFLite file; ``ValidationError`` (one line) on a violation.
    With ``weights``, also decode every convolution's weight streams and check their sizes against
    the registers (``regstream.weight_streams``).

    The file is untrusted: its structure is checked by npuplan's own reader first
    (``ModelError``, one line, on a corrupt file), and data the replay cannot decode (a payload or
    tensor that ends early, a value out of its field's range) is a violation, not a crash."""
    from npuplan.io.tflite import parse_tflite

    parse_tflite(data, label=label)  # every index and buffer in range (scratch tensors have no writer)
    try:
        report = _validate(data)
        if weights:
            from npuplan.regstream.weight_streams import check_weight_streams

            report = replace(report, weights=check_weight_streams(report.streams, _constants(data, report.streams)))
        return report
    except (struct.error, ValueError, TypeError, IndexError, OverflowError, KeyError) as error:
        raise ValidationError(f"{label}: corrupt ethos-u operator data ({type(error).__name__}: {error})") from None


def _validate(data: bytes) -> FileReport:
    model = _model(data)
    f = _FileReplay(model)
    sg = f.sg
    ops = [sg.Operators(i) for i in range(sg.OperatorsLength())]
    npu = [(k, op) for k, op in enumerate(ops) if _is_ethos_u(model, op)]
    if not npu:
        return FileReport(())
    f.arena = int(npu[0][1].InputsAsNumpy()[2])
    arena_region = f.region_of(f.arena, constant=False)
    replay = Replay({1: arena_region}, where="file")
    variables = _variables(f)
    for tensor, name in variables.items():
        f.touch(replay, tensor, write=True, label=f"variable tensor {name} (from the previous invocation)")
        lo, size = f.in_arena(tensor)  # type: ignore[misc]
        replay.reserved[name] = (1, lo, lo + size)
    for tensor in sg.InputsAsNumpy():
        f.touch(replay, int(tensor), write=True, label=f"network input {int(tensor)}")
    streams = []
    for k, op in enumerate(ops):
        replay.where = f"operator {k}"
        outputs = [int(i) for i in op.OutputsAsNumpy()]
        inputs = [int(i) for i in op.InputsAsNumpy()]
        replay.writable = frozenset(variables[t] for t in inputs + outputs if t in variables)
        if not _is_ethos_u(model, op):
            _cpu_op(f, replay, inputs, outputs, variables)
            continue
        if len(inputs) < 4:
            raise ValidationError(f"operator {k}: an ethos-u operator needs [command stream, flash, scratch, "
                                  f"fast scratch, ...] inputs, it has {len(inputs)}")
        stream, payload = _stream(model, op, k)
        replay.product = payload.product
        tensors = {0: inputs[1], 1: inputs[2], 2: inputs[3]} | {3 + n: t for n, t in enumerate(inputs[4:] + outputs)}
        regions = {r: f.region_of(t, constant=r == 0) for r, t in tensors.items()}
        replay.regions = regions
        replay.run(stream)
        for tensor in outputs:
            placed = f.in_arena(tensor)
            if placed is not None and not arena_region.written[placed[0]:placed[0] + placed[1]].all():
                replay.fail(f"output tensor {tensor} is not completely written by the stream")
        streams.append(NpuStream(k, tuple(stream), {r: s.size for r, s in regions.items()}, payload.config, tensors))
    replay.where = "end"
    replay.regions = {1: arena_region}
    for tensor in sg.OutputsAsNumpy():
        placed = f.in_arena(int(tensor))
        if placed is not None and not arena_region.written[placed[0]:placed[0] + placed[1]].all():
            replay.fail(f"network output tensor {int(tensor)} is not completely written")
    return FileReport(tuple(streams))


def _variables(f: _FileReplay) -> dict[int, str]:
    """The variable tensors the offline plan places in the arena, by index, with their names."""
    out = {}
    for tensor in range(f.sg.TensorsLength()):
        t = f.sg.Tensors(tensor)
        if t.IsVariable() and f.in_arena(tensor) is not None:
            out[tensor] = f"{tensor} ('{t.Name().decode(errors='replace')}')"
    return out


def _cpu_op(f: _FileReplay, replay: Replay, inputs: list[int], outputs: list[int], variables: dict[int, str]) -> None:
    """A CPU operator reads its inputs and writes its outputs, and updates its variable inputs in
    place (TFLite's LSTM, SVDF and RNN kernels write their state back to the variable tensor)."""
    for tensor in inputs:
        if tensor >= 0:
            f.touch(replay, tensor, write=False, label=f"CPU input tensor {tensor}")
    for tensor in [t for t in inputs if t in variables] + outputs:
        f.touch(replay, tensor, write=True, label=f"CPU output tensor {tensor}")


def _constants(data: bytes, streams: tuple[NpuStream, ...]) -> dict[int, bytes]:
    """The bytes of every tensor a stream's region is that holds data in the file (the flash)."""
    model = _model(data)
    sg = model.Subgraphs(0)
    out = {}
    for tensor in {t for s in streams for t in s.region_tensors.values()}:
        buffer = model.Buffers(sg.Tensors(tensor).Buffer())
        if buffer.DataLength():
            out[tensor] = bytes(buffer.DataAsNumpy())
    return out


def validate_tflite_file(path: str | Path, *, weights: bool = False) -> FileReport:
    """``validate_tflite`` of the file at ``path`` (``weights``: its weight streams too)."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise ModelError(f"cannot read '{path}': {error.strerror}") from None
    return validate_tflite(data, label=f"'{path}'", weights=weights)


# The file's structure for the runner (npuplan.run), which lays out the same memory to execute it:
# one reader of the flatbuffer, the offline memory plan and tensor sizes.
def flatbuffer_model(data: bytes) -> Any:
    """The schema bindings' root ``Model`` of TFLite bytes; ``ModelError`` (one line) if it is none."""
    return _model(data)


def offline_offsets(model: Any) -> list[int]:
    """Each tensor's arena offset in the first subgraph's ``OfflineMemoryAllocation`` plan (-1: the
    runtime places it itself; all -1 when the file has no plan)."""
    return _offline_offsets(model, model.Subgraphs(0).TensorsLength())


def has_offline_plan(data: bytes) -> bool:
    """Whether TFLite bytes hold an ``OfflineMemoryAllocation`` plan: a compiler (Vela, npuplan) wrote
    them, even where it left every operator on the CPU."""
    model = _model(data)
    return any(model.Metadata(i).Name() == b"OfflineMemoryAllocation" for i in range(model.MetadataLength()))


def tensor_bytes(t: Any) -> int:
    """The bytes a (bindings) tensor of its declared shape and type takes."""
    return _tensor_bytes(t)


def is_ethos_u(model: Any, op: Any) -> bool:
    """Whether a (bindings) operator is an ``ethos-u`` custom operator."""
    return _is_ethos_u(model, op)
