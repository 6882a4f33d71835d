"""The estimate's driver: the file read, each stream timed, the report built."""

from __future__ import annotations

import time
from itertools import islice
from dataclasses import replace
from pathlib import Path

from npuplan.cost import op_cost
from npuplan.estimate.queries import cost_query
from npuplan.estimate.read import CompiledFile, FileStream, read_compiled
from npuplan.estimate.report import estimate_report
from npuplan.estimate.timeline import TimedOp, TimedStream, time_stream
from npuplan.hw.build import build_architecture
from npuplan.hw.memory import Architecture
from npuplan.ir.lowered import Activation
from npuplan.options import PlanOptions
from npuplan.records import record
from npuplan.regstream.events import NpuEvent
from npuplan.regstream.sources import OperationSource
from npuplan.report.model import Report


@record(slots=False)
class Estimate:
    """The estimate of one compiled file on one target: the file, its timed streams, the report."""

    compiled: CompiledFile
    arch: Architecture
    streams: tuple[TimedStream, ...]
    report: Report

    def cycles_by_source(self) -> dict[int, float] | None:
        """The estimate's cycles per source operator (index in the source network's main subgraph;
        -1 an operation of no known operator), when the file records where each NPU operation came
        from (``CompiledFile.sources``); they add up to ``report.cycles_total``. None otherwise.
        An operation with a LUT activation fused into it gives that activation's operator what the
        table costs it (``_lut_cycles``), the rest to the operator it was lowered from."""
        if self.compiled.sources is None:
            return None
        out: dict[int, float] = {}
        layers = iter(self.report.layers)  # the streams' rows, in order
        for sources, stream in zip(self.compiled.sources, self.streams, strict=True):
            previous_end = 0.0
            for source, op, layer in zip(sources, stream.ops, islice(layers, len(stream.ops)), strict=True):
                lut = min(_lut_cycles(op, stream, previous_end, self.arch), layer.op_cycles) \
                    if source.lut_index >= 0 else 0.0
                out[source.index] = out.get(source.index, 0.0) + layer.op_cycles - lut
                if lut:
                    out[source.lut_index] = out.get(source.lut_index, 0.0) + lut
                previous_end = op.end_cycles
        return out


def _lut_cycles(op: TimedOp, stream: TimedStream, previous_end: float, arch: Architecture) -> float:
    """What the LUT activation costs ``op``: its cycles less those of the same operation with no
    activation, and the time it waited for a table to load (a DMA into the NPU's internal memory
    ending after the previous operation ended: ``previous_end``)."""
    query = cost_query(op.event, op.name, arch)
    plain = op_cost(replace(query, op=replace(query.op, activation=Activation.NONE)), arch)
    loads = [d for d in stream.dmas if d.dst_area is None and previous_end < d.end_cycles <= op.start_cycles]
    waited = min(op.wait_cycles, op.start_cycles - min(d.start_cycles for d in loads)) if loads else 0.0
    return max(0.0, float(op.cost.total_cycles) - float(plain.total_cycles)) + max(0.0, waited)


def _source_text(source: OperationSource) -> str:
    return f"{source.index}" + (f" + LUT {source.lut_index}" if source.lut_index >= 0 else "")


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
            source = f" [source {_source_text(sources[len(out)])}]" if sources is not None else ""
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
