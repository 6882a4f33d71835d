"""Vela's register command stream as the oracle of the native output stage.

``captured_partitions`` plans and emits a model while recording each NPU partition's API
operations and the driver payload Vela's generator made of them; ``output_stage_mismatches``
compares ``output_stage_registers`` of every block operation with the registers the stream holds
when that operation is kicked off (registers keep their values, so the snapshot at the kick is
what the operation runs with). Used by the unit tests and ``bench/native_outstage_compare.py``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

from npuplan.api import plan_and_emit
from npuplan.emit.backend import EmitBackend
from npuplan.emit import emitter
from npuplan.emit.native.output_stage import output_stage_registers
from npuplan.regstream.words import decode_words, payload_words

KICKS = frozenset({"NPU_OP_CONV", "NPU_OP_DEPTHWISE", "NPU_OP_POOL", "NPU_OP_ELEMENTWISE"})


@dataclass(frozen=True)
class Partition:
    """One NPU partition: its number in the emit, the API operations (DMAs included), its
    accelerator's name and the driver payload Vela made of them."""

    number: int
    operations: list[Any]
    accelerator: str
    payload: bytes


@dataclass(frozen=True)
class Mismatch:
    """A register whose native value differs from Vela's at a block operation (``index``: among the
    partition's block operations); ``ours``/``vela`` None when one side does not set it."""

    index: int
    name: str
    register: str
    ours: int | None
    vela: int | None

    def __str__(self) -> str:
        return f"op {self.index} '{self.name}' {self.register}: ours {_hex(self.ours)}, Vela {_hex(self.vela)}"


def _hex(value: int | None) -> str:
    return "unset" if value is None else hex(value)


@contextmanager
def recording() -> Iterator[list[Partition]]:
    """Record every partition ``npuplan.emit`` hands to Vela's generator while the block runs."""
    partitions: list[Partition] = []
    original = emitter._payload

    def payload(api: Any, acc: Any, operations: list[Any], partition: int) -> bytes:
        data = original(api, acc, operations, partition)
        partitions.append(Partition(partition, list(operations), acc.name, data))
        return data

    with mock.patch.object(emitter, "_payload", payload):
        yield partitions


def captured_partitions(path: str | Path, **options: Any) -> list[Partition]:
    """The partitions of the last emit of ``path`` planned deployably with ``options`` (an
    emit after a CPU fallback replaces the earlier ones)."""
    with recording() as partitions:
        plan_and_emit(path, backend=EmitBackend.VELA, **options)  # Vela's objects, for Vela's generator
    return _last_emit(partitions)


def _last_emit(partitions: list[Partition]) -> list[Partition]:
    """The partitions from the last one numbered 0 on (each emit numbers its partitions from 0)."""
    firsts = [k for k, p in enumerate(partitions) if p.number == 0]
    return partitions[firsts[-1]:] if firsts else []


def kick_snapshots(words: list[int]) -> list[dict[str, int]]:
    """The register values (as ``regstream`` decodes them) at each NPU block operation's kick."""
    registers: dict[str, int] = {}
    out: list[dict[str, int]] = []
    for w in decode_words(words):
        if w.name in KICKS:
            out.append(dict(registers))
        elif not w.name.startswith("NPU_OP_"):
            registers[w.name] = w.value
    return out


def block_operations(operations: Sequence[Any]) -> list[Any]:
    """The operations that kick the NPU (not DMAs)."""
    return [op for op in operations if op.op_type.name != "Dma"]


def output_stage_mismatches(partition: Partition) -> tuple[int, list[Mismatch]]:
    """How many block operations the partition has and each register the native output stage
    gets wrong (or sets when Vela's stream does not hold it)."""
    ops = block_operations(partition.operations)
    snapshots = kick_snapshots(payload_words(partition.payload).words)
    assert len(snapshots) == len(ops), (len(snapshots), len(ops))
    mismatches = []
    for k, (op, snapshot) in enumerate(zip(ops, snapshots)):
        for register, ours in output_stage_registers(op, partition.accelerator).items():
            vela = snapshot.get(register)
            if ours != vela:
                mismatches.append(Mismatch(k, str(op.name), register, ours, vela))
    return len(ops), mismatches
