"""Which source operator each NPU operation of a compiled file came from: npuplan's emitter writes
it in the file's metadata, ``npuplan estimate`` reads it to attribute each operation's cycles to
an operator of the source network (Vela's files carry no such record).

The metadata entry ``npuplan_operation_sources`` is little-endian int32 words:
``[1 (version), streams, then per ethos-u operator in file order: runs, (source index, count) * runs]``:
each run is ``count`` consecutive NPU operations of that operator's command stream lowered from
the source network's operator ``source index`` (its position in the main subgraph; -1 unknown).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

SOURCES_METADATA = "npuplan_operation_sources"
_VERSION = 1


def encode_sources(streams: Sequence[Sequence[int]]) -> bytes:
    """The metadata's bytes for ``streams``: per ethos-u operator, the source index of each NPU
    operation in order."""
    words = [_VERSION, len(streams)]
    for sources in streams:
        runs: list[list[int]] = []
        for index in sources:
            if runs and runs[-1][0] == index:
                runs[-1][1] += 1
            else:
                runs.append([index, 1])
        words.append(len(runs))
        words.extend(w for run in runs for w in run)
    return np.array(words, dtype="<i4").tobytes()


def decode_sources(data: bytes) -> tuple[tuple[int, ...], ...] | None:
    """Per ethos-u operator, the source index of each NPU operation; None when ``data`` is not a
    record this module wrote (another version, truncated, a negative count)."""
    if len(data) % 4:
        return None
    words = np.frombuffer(data, dtype="<i4").tolist()
    if len(words) < 2 or words[0] != _VERSION or words[1] < 0:
        return None
    streams: list[tuple[int, ...]] = []
    at = 2
    for _ in range(words[1]):
        if at >= len(words) or words[at] < 0 or at + 1 + 2 * words[at] > len(words):
            return None
        runs = words[at + 1: at + 1 + 2 * words[at]]
        if any(count < 0 for count in runs[1::2]):
            return None
        streams.append(tuple(index for index, count in zip(runs[::2], runs[1::2]) for _ in range(count)))
        at += 1 + 2 * words[at]
    return tuple(streams) if at == len(words) else None


def file_sources(model: Any) -> tuple[tuple[int, ...], ...] | None:
    """The record in ``model`` (the flatbuffer binding's ``Model``), or None when it has none."""
    for i in range(model.MetadataLength()):
        meta = model.Metadata(i)
        if meta.Name() == SOURCES_METADATA.encode():
            buffer = model.Buffers(meta.Buffer())
            return decode_sources(bytes(buffer.DataAsNumpy()) if buffer.DataLength() else b"")
    return None
