"""Which source operators each NPU operation of a compiled file came from: npuplan's emitter writes
it in the file's metadata, ``npuplan estimate`` reads it to attribute each operation's cycles to
operators of the source network (Vela's files carry no such record).

The metadata entry ``npuplan_operation_sources`` is little-endian int32 words:
``[1 (version), streams, then per ethos-u operator in file order: runs, (source, lut source, count) * runs]``:
each run is ``count`` consecutive NPU operations of that operator's command stream lowered from
the source network's operator ``source`` (its position in the main subgraph; -1 unknown), with
the LUT activation of operator ``lut source`` fused into them (-1: none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from npuplan.records import record

SOURCES_METADATA = "npuplan_operation_sources"
_VERSION = 1


@record
class OperationSource:
    """The source operators of one NPU operation: the one it was lowered from, and the LUT
    activation fused into it (indices in the source network's main subgraph; -1: none)."""

    index: int
    lut_index: int = -1


def encode_sources(streams: Sequence[Sequence[OperationSource]]) -> bytes:
    """The metadata's bytes for ``streams``: per ethos-u operator, each NPU operation's sources in order."""
    words = [_VERSION, len(streams)]
    for sources in streams:
        runs: list[list[int]] = []
        for source in sources:
            if runs and runs[-1][:2] == [source.index, source.lut_index]:
                runs[-1][2] += 1
            else:
                runs.append([source.index, source.lut_index, 1])
        words.append(len(runs))
        words.extend(w for run in runs for w in run)
    return np.array(words, dtype="<i4").tobytes()


def decode_sources(data: bytes) -> tuple[tuple[OperationSource, ...], ...] | None:
    """Per ethos-u operator, each NPU operation's sources; None when ``data`` is not a record this
    module wrote (another version, truncated, a negative count)."""
    if len(data) % 4:
        return None
    words = np.frombuffer(data, dtype="<i4").tolist()
    if len(words) < 2 or words[0] != _VERSION or words[1] < 0:
        return None
    streams: list[tuple[OperationSource, ...]] = []
    at = 2
    for _ in range(words[1]):
        if at >= len(words) or words[at] < 0 or at + 1 + 3 * words[at] > len(words):
            return None
        runs = words[at + 1: at + 1 + 3 * words[at]]
        if any(count < 0 for count in runs[2::3]):
            return None
        streams.append(tuple(OperationSource(index, lut) for index, lut, count in zip(runs[::3], runs[1::3], runs[2::3])
                             for _ in range(count)))
        at += 1 + 3 * words[at]
    return tuple(streams) if at == len(words) else None


def file_sources(model: Any) -> tuple[tuple[OperationSource, ...], ...] | None:
    """The record in ``model`` (the flatbuffer binding's ``Model``), or None when it has none."""
    for i in range(model.MetadataLength()):
        meta = model.Metadata(i)
        if meta.Name() == SOURCES_METADATA.encode():
            buffer = model.Buffers(meta.Buffer())
            return decode_sources(bytes(buffer.DataAsNumpy()) if buffer.DataLength() else b"")
    return None
