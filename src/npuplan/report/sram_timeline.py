"""SRAM over the schedule, from a plan's buffers and their lifetimes in the command stream: which
buffers of the fast memory are live at each op step, stacked by what they hold, for the HTML report.

A buffer lives as ``commands.addresses.name_lifetimes`` says, the lifetimes the allocator placed
(from the first command that touches it to the last, a DMA fetched ahead from the stripe it runs
under, network inputs from the start, outputs to the end). Buffers that share addresses while
both are live are one buffer given twice (an elementwise op writing over its input), so they are
counted once. Constants stored in the fast memory are live throughout. An op step's
figure is the command of that op where the most bytes are live (the op's peak).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from npuplan.commands.serial import Layout
from npuplan.commands.types import BufferKind
from npuplan.records import record
from npuplan.units import ALIGN_BYTES, round_up

# What the chart calls each kind of buffer, in stacking order (bottom first).
KIND_LABELS: Mapping[str, str] = {
    str(BufferKind.FEATURE_MAP): "feature maps",
    str(BufferKind.ROLLING): "rolling buffers",
    str(BufferKind.STAGED): "staged copies",
    str(BufferKind.WEIGHT_BUFFER): "weight buffers",
    str(BufferKind.CONSTANT): "constants",
}


@record
class LiveBuffer:
    """One buffer live at a step: its name, kind (a ``BufferKind`` value) and size in bytes
    (rounded up to the 16-byte allocation grain)."""

    name: str
    kind: str
    size_bytes: int


@record
class SramStep:
    """The fast memory at one op step: the buffers live at the op's peak command (largest first)."""

    step: int
    command: int  # index of the op's peak command in the stream, -1 when the op has none
    live: tuple[LiveBuffer, ...]

    @property
    def total_bytes(self) -> int:
        return sum(b.size_bytes for b in self.live)

    def bytes_of(self, kind: str) -> int:
        """Live bytes of one ``BufferKind`` value."""
        return sum(b.size_bytes for b in self.live if b.kind == kind)


@record
class _Span:
    name: str
    kind: str
    start: int
    end: int
    size_bytes: int
    members: tuple[str, ...]


def sram_steps(
    layouts: Mapping[str, Layout], lifetimes: Mapping[str, tuple[int, int]], step_of_command: Sequence[int],
    steps: int, *, area: str,
) -> tuple[SramStep, ...]:
    """One ``SramStep`` per op step ``0..steps-1``: ``layouts`` are the buffers (address, kind),
    ``lifetimes`` their first and last command index, ``step_of_command[k]`` command k's op step and
    ``area`` the memory (a ``MemArea`` value) to chart."""
    count = len(step_of_command)
    spans = _spans(layouts, lifetimes, count, area=area)
    live_bytes = _live_bytes(spans, count)
    peak_command: dict[int, int] = {}
    for k, step in enumerate(step_of_command):
        best = peak_command.get(step)
        if best is None or live_bytes[k] > live_bytes[best]:
            peak_command[step] = k
    live = _live_at(spans, set(peak_command.values()))
    return tuple(_step(s, peak_command.get(s, -1), live) for s in range(steps))


def _live_at(spans: Sequence[_Span], commands: set[int]) -> dict[int, list[_Span]]:
    """The spans live at each of ``commands``, by one sweep over the starts and ends."""
    starts: dict[int, list[_Span]] = {}
    for span in spans:
        starts.setdefault(span.start, []).append(span)
    active: dict[int, _Span] = {}
    out: dict[int, list[_Span]] = {}
    for k in sorted(set(starts) | commands):
        for span in starts.get(k, ()):
            active[id(span)] = span
        if k in commands:
            for key in [key for key, span in active.items() if span.end < k]:
                del active[key]
            out[k] = list(active.values())
    return out


def _step(step: int, command: int, live: Mapping[int, list[_Span]]) -> SramStep:
    buffers = (LiveBuffer(" = ".join(s.members), s.kind, s.size_bytes) for s in live.get(command, ()))
    return SramStep(step, command, tuple(sorted(buffers, key=lambda b: (-b.size_bytes, b.name))))


def _live_bytes(spans: Sequence[_Span], count: int) -> list[int]:
    """Bytes live at each command index (a running sum of starts and ends)."""
    deltas = [0] * (count + 1)
    for s in spans:
        deltas[s.start] += s.size_bytes
        deltas[s.end + 1] -= s.size_bytes
    running, out = 0, []
    for delta in deltas[:count]:
        running += delta
        out.append(running)
    return out


def _spans(layouts: Mapping[str, Layout], lifetimes: Mapping[str, tuple[int, int]], count: int, *,
           area: str) -> list[_Span]:
    """The live spans of ``area``'s buffers, buffers sharing addresses while live merged."""
    last = max(count - 1, 0)
    spans = []
    for name, (address, kind, _, _) in layouts.items():
        if str(address.area) != area or name not in lifetimes:
            continue
        start, end = (0, last) if kind is BufferKind.CONSTANT else lifetimes[name]
        size = round_up(address.size_bytes, ALIGN_BYTES)
        spans.append((address.offset, address.offset + size, _Span(name, str(kind), start, end, size, (name,))))
    return _merge_shared(spans)


def _merge_shared(spans: list[tuple[int, int, _Span]]) -> list[_Span]:
    """Merge spans whose address ranges and lifetimes both overlap (one buffer under two names):
    the merged span covers both lifetimes, is as large as the larger and keeps the first's kind."""
    spans.sort(key=lambda item: (item[0], item[2].start))
    lo = np.array([item[0] for item in spans], dtype=np.int64)
    start = np.array([item[2].start for item in spans], dtype=np.int64)
    end = np.array([item[2].end for item in spans], dtype=np.int64)
    parent = list(range(len(spans)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, (_, hi, a) in enumerate(spans):
        stop = int(np.searchsorted(lo, hi, side="left"))  # spans starting inside this one's addresses
        if stop <= i + 1:
            continue
        shared = np.nonzero((start[i + 1: stop] <= a.end) & (end[i + 1: stop] >= a.start))[0]
        for j in shared:
            parent[root(i + 1 + int(j))] = root(i)
    groups: dict[int, list[_Span]] = {}
    for i, (_, _, span) in enumerate(spans):
        groups.setdefault(root(i), []).append(span)
    return [_merged(group) for group in groups.values()]


def _merged(group: list[_Span]) -> _Span:
    if len(group) == 1:
        return group[0]
    first = min(group, key=lambda s: s.start)
    return _Span(first.name, first.kind, min(s.start for s in group), max(s.end for s in group),
                 max(s.size_bytes for s in group), tuple(s.name for s in sorted(group, key=lambda s: s.start)))
