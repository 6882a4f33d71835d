"""Read a compiled Ethos-U file for estimating: its decoded command streams (``regstream``), which
tensor each stream's regions are, and the operators left to the CPU.

The file is untrusted: ``regstream.validate_tflite`` checks its structure and replays every stream
over the memory model first, so a corrupt or foreign file is refused with one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from npuplan.errors import ModelError
from npuplan.io.tflite import parse_tflite
from npuplan.ir.graph import Tensor
from npuplan.regstream.tflite_file import NpuStream, validate_tflite

ETHOS_U = "CUSTOM:ethos-u"


@dataclass(frozen=True, slots=True)
class FileOperator:
    """One operator of the file in execution order: its type (``CUSTOM:ethos-u`` for an NPU stream)
    and its first output tensor's name."""

    type: str
    name: str


@dataclass(frozen=True)
class CompiledFile:
    """A compiled file: its ethos-u streams in order, the name of the tensor each stream's region
    is (one mapping per stream), every operator, and the flash (region 0) bytes."""

    network: str
    streams: tuple[NpuStream, ...]
    region_names: tuple[dict[int, str], ...]
    operators: tuple[FileOperator, ...]
    flash_bytes: int

    @property
    def cpu_operators(self) -> tuple[FileOperator, ...]:
        return tuple(op for op in self.operators if op.type != ETHOS_U)


def read_compiled(path: str | Path) -> CompiledFile:
    """The streams and operators of the compiled file at ``path``; ``ModelError`` (unreadable, not
    TFLite) or ``ValidationError`` (no ethos-u operator, a stream that does not replay), one line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ModelError(f"cannot read '{path}': {error.strerror}") from None
    graph = parse_tflite(data, name=path.stem, label=f"'{path}'").main
    report = validate_tflite(data, label=f"'{path}'")
    operators = tuple(FileOperator(op.type, op.outputs[0].name if op.outputs else f"operator {k}")
                      for k, op in enumerate(graph.ops))
    names = tuple(_region_names(graph.ops[s.operator].inputs, graph.ops[s.operator].outputs) for s in report.streams)
    # a flash tensor two streams share is counted once
    flash = {s.region_tensors.get(0): s.region_bytes.get(0, 0) for s in report.streams}
    return CompiledFile(_network_name(path), report.streams, names, operators, sum(flash.values()))


def _region_names(inputs: tuple[Tensor | None, ...], outputs: tuple[Tensor, ...]) -> dict[int, str]:
    """Region -> tensor name of an ethos-u operator: regions 0-2 its inputs 1-3, then 3 on its
    further inputs and its outputs (the TensorFlow Lite Micro kernel's convention)."""
    tensors = [*inputs[1:], *outputs]
    return {region: t.name for region, t in enumerate(tensors) if t is not None}


def _network_name(path: Path) -> str:
    """The network's name: the file's stem without the compilers' suffix (``_vela``, ``_npuplan``)."""
    stem = path.stem
    for suffix in ("_vela", "_npuplan"):
        if stem.endswith(suffix):
            return stem[: -len(suffix)]
    return stem
