"""The estimate's driver: the file read, each stream timed, the report built."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from npuplan.estimate.read import CompiledFile, FileStream, read_compiled
from npuplan.estimate.report import estimate_report
from npuplan.estimate.timeline import TimedStream, time_stream
from npuplan.hw.build import build_architecture
from npuplan.hw.memory import Architecture
from npuplan.options import PlanOptions
from npuplan.regstream.events import NpuEvent
from npuplan.report.model import Report


@dataclass(frozen=True)
class Estimate:
    """The estimate of one compiled file on one target: the file, its timed streams, the report."""

    compiled: CompiledFile
    arch: Architecture
    streams: tuple[TimedStream, ...]
    report: Report

    def cycles_by_source(self) -> dict[int, float] | None:
        """The estimate's cycles per source operator (index in the source network's main subgraph;
        -1 an operation of no known operator), when the file records where each NPU operation came
        from (``CompiledFile.sources``); they add up to ``report.cycles_total``. None otherwise."""
        if self.compiled.sources is None:
            return None
        out: dict[int, float] = {}
        indices = (index for stream in self.compiled.sources for index in stream)
        for index, layer in zip(indices, self.report.layers, strict=True):
            out[index] = out.get(index, 0.0) + layer.op_cycles
        return out


def _op_names(compiled: CompiledFile, k: int, stream: FileStream) -> list[str]:
    """A name for each NPU operation of stream ``k``: its index (and the stream's when the file
    has several), the tensor it writes when that is one of the operator's outputs, and the source
    operator it came from when the file records it (``[source 12]``: the source network's
    operator 12)."""
    prefix = f"npu{k}." if len(compiled.streams) > 1 else ""
    names = stream.region_names
    sources = compiled.sources[k] if compiled.sources is not None else None
    out: list[str] = []
    for event in stream.events:
        if isinstance(event, NpuEvent):
            written = names.get(event.ofm.region) if event.ofm.region >= 3 else None
            source = f" [source {sources[len(out)]}]" if sources is not None else ""
            out.append(f"{prefix}op{len(out)}" + (f" {written}" if written else "") + source)
    return out


def estimate_file(path: str | Path, options: PlanOptions) -> Estimate:
    """The estimate of the compiled file at ``path`` on the target of ``options`` (accelerator,
    system config, memory mode, config files; the rest unused). Raises ``ModelError``,
    ``ValidationError`` or ``ConfigError`` (one line) on bad input."""
    started = time.perf_counter()
    arch = build_architecture(options)
    compiled = read_compiled(path)
    streams = tuple(time_stream(s.events, arch, names=_op_names(compiled, k, s))
                    for k, s in enumerate(compiled.streams))
    report = estimate_report(compiled, streams, arch, seconds=time.perf_counter() - started)
    return Estimate(compiled, arch, streams, report)
