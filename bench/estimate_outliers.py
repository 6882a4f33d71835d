"""Why a network's estimate of Vela's file sits outside 10% of Vela's own figure (issue 25, item 2).

Reads a results table of ``bench/estimate_fidelity.py`` and, for each Vela file whose ratio is
outside [0.90, 1.10], times the file again with ``npuplan estimate`` and splits the timeline:
the cycles operations stood waiting for a table (LUT) DMA, for any other DMA (weights), and how
many operations are 1x1 pooling copies one channel deep (a TRANSPOSE or depth multiplier Vela's
default core lowers into many small copies, timing the whole as one memory copy). Each outlier gets
the first cause that accounts for it:

- ``table loads``: without the table-DMA waits the ratio is within 10% (Vela 5.2.0 leaves the load
  of a table fused into an operation out of its figure; the stream waits for it);
- ``weight DMA waits``: without any DMA wait it is within 10% (Vela hides a weight DMA under the
  previous operation even where that operation saturates the same memory, and times a depth-sliced
  operation once);
- ``depth slices``: the file's operations computed in OFM depth slices (consecutive convolutions
  reading the same IFM box into the same OFM rows) joined into one operation each, and no DMA
  wait, brings the ratio within 10% (Vela times such an operation once: its IFM read once, e.g.
  kws_cnn_49x10's first convolution on U65-512, IFM in DRAM: 9118 cycles in Vela's per-layer
  table for two slices that each read the IFM);
- ``decomposed copies``: half the operations or more are 1x1 pooling copies that transpose (one
  channel deep, or OFM rows closer together than its columns); Vela times the TRANSPOSE they
  implement as one memory copy (op_transpose on u55-128: a "Transpose" row of 512 cycles for a
  16x16x8 copy with a 9x16x8 block that the same Vela times at 2976 cycles as a "MemoryCopy" in
  op_resize_bilinear's file, as npuplan does);
- ``OFM over gaps``: the file's convolutions that write every other column and row of their OFM
  (a resize or transpose-convolution piece: x and y strides of two pixels or more) timed as if
  they wrote the dense box over the gaps brings the ratio within 10% (Vela 5.2.0's default core
  counts those MACs: 30752 for a 2x2 depthwise writing 16x16x8 of a 32x32x8 map, 4 x 31 x 31 x 8);
- ``cache maps as DRAM``: Dedicated_Sram only; the estimate is below Vela's, and timing the
  file's feature maps in the cache (region 2) as if they were in the arena's memory (DRAM) brings
  it to 0.90 or above, i.e. Vela's figure lies between the file as placed and that (its per-layer
  NPU cycles for some such operations match the DRAM timing while its own DRAM access cycles for
  them are a few tens: odd_ch_20's 3x3 depthwise on U65-512, NHWC maps, 16992 NPU cycles against
  npuplan's 1914 as placed and 18666 in DRAM, 17 DRAM AC; strip_h1_96's strided convolution on
  U65-256, NHCWB16 maps, 2324 against 1036 and 2231; which operations it so times is its
  scheduler's choice, not the stream's);
- ``Vela higher``: the ratio is below 0.90, none of the above;
- ``other``.

Columns ``gaps`` and ``dram``: the ratio with those two rewrites (the cost model and timeline are
the estimate's own; only the decoded events are rewritten).

Columns ``rows/ops``, ``sum`` and ``match`` set Vela's per-layer CSV for the same file beside the
stream (``--verbose-performance``; compiled again when the cache has no CSV, and used only if the
file comes out byte for byte the same): Vela's NPU rows against the stream's NPU operations (a
depth multiplier on u55-128, dw_mult2_32: 12 rows, 2376 operations, of which 2371 one-channel
copies that Vela prices as 7 "Transpose" rows), Vela's figure over the sum of its rows (1.000:
the figure has no term for a wait, a table load or any DMA the stream waits for), and where the
rows pair with the operations, how many operations npuplan times within 2% of their row (gru_8x12
on u55-128: 81/81, so its whole 1.32x is the table loads its stream waits for). The closing lines
count the same over every Vela file of the table.

The rewrites (``depth slices``, ``OFM over gaps``, ``cache maps as DRAM``) are how Vela's default
core counts; a legacy-core row gets only the timeline's causes (its estimator differs from the cost
model in three terms first, see bench/estimate_legacy_terms.py), the columns all the same.

Trusted side: neither; this splits the difference, it does not say who is right (see docs/run.md).

    python bench/estimate_outliers.py [--table bench/results/estimate_fidelity.txt]
        [--groups public,testdata,zoo] [--work /tmp/estimate_fidelity] [--results FILE]
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import datetime
import statistics
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from estimate_fidelity import ROOT, SCENARIOS, _options, compile_vela, compiled_file, models, vela_file

from npuplan.errors import NpuplanError
from npuplan.estimate import estimate_file
from npuplan.estimate.read import read_compiled
from npuplan.estimate.timeline import time_stream
from npuplan.hw.build import build_architecture
from npuplan.regstream.events import INTERNAL_REGION, DmaEvent, Event, FeatureMapAccess, NpuEvent, Range, WaitEvent

CORES = {"vela-default": "default", "vela-legacy": "legacy"}


@dataclass(frozen=True)
class Split:
    total_cycles: float
    table_wait_cycles: float
    dma_wait_cycles: float
    ops: int
    channel_copies: int
    op_cycles: tuple[float, ...] = ()  # each NPU operation's own cycles (no wait), in stream order


@dataclass(frozen=True)
class VelaLayers:
    """Vela's per-layer CSV for its file: the cycles of each row that runs on the NPU (the rows of
    activations fused into the operation before, 0 cycles, left out), in the file's order."""

    op_cycles: tuple[float, ...]

    def against(self, split: Split, reference: float) -> str:
        """``rows/ops sum match``: Vela's rows against the stream's NPU operations, Vela's figure over
        the sum of its rows (1.000: the figure has no term for waits, table loads or DMAs), and
        where rows and operations pair up, how many operations npuplan times within 2% of their row."""
        total = sum(self.op_cycles)
        text = f"{len(self.op_cycles):5d}/{split.ops:<5d} {reference / total if total else 0.0:6.3f}"
        if len(self.op_cycles) != split.ops:
            return f"{text} {'-':>9}"
        matched = sum(abs(mine - theirs) <= 0.02 * max(theirs, 1.0) for mine, theirs in zip(split.op_cycles,
                                                                                        self.op_cycles))
        return f"{text} {f'{matched}/{split.ops}':>9}"


def vela_layers(tflite: Path, source: Path, work: Path, scenario: str, core: str, *,
                compile_missing: bool = True) -> VelaLayers | None:
    """Vela's per-layer CSV for its file ``tflite`` of ``source``: written beside it by
    ``estimate_fidelity.py``, or (``compile_missing``) compiled again with ``--verbose-performance``
    under ``work``/per-layer when the file comes out byte for byte the same; None if neither."""
    table = tflite.parent / f"{source.stem}_per-layer.csv"
    if not table.exists() and not compile_missing:
        return None
    if not table.exists():
        out = work / "per-layer" / core / scenario
        again = out / tflite.name
        if not again.exists() and compile_vela(source, scenario, core, out):
            return None
        table = out / f"{source.stem}_per-layer.csv"
        if not again.exists() or again.read_bytes() != tflite.read_bytes() or not table.exists():
            return None
    return VelaLayers(tuple(c for c in map(_npu_cycles, csv.DictReader(table.open())) if c > 0))


def _npu_cycles(row: dict[str, str]) -> float:
    """A per-layer row's op cycles if it runs on the NPU (the legacy core's table has no Target
    column, only NPU rows, and repeats its header per command stream), else 0."""
    try:
        return float(row["Op Cycles"]) if row.get("Target", "NPU") == "NPU" else 0.0
    except (TypeError, ValueError):
        return 0.0


def is_transposing_copy(event: NpuEvent) -> bool:
    """A 1x1 pooling copy of one channel, or one whose OFM rows lie closer together than its
    columns (a TRANSPOSE's copy: Vela 5.2.0's default core times the TRANSPOSE as a memory copy)."""
    if event.kind != "Pooling" or event.kernel[:2] != (1, 1):
        return False
    return event.ofm.depth == 1 or (not event.ofm.nhcwb16 and 0 <= event.ofm.stride_y < event.ofm.stride_x)


def split_timeline(path: Path, scenario: str) -> Split:
    """The estimate of ``path`` and the parts of its timeline this bench attributes."""
    estimate = estimate_file(path, _options(scenario))
    table = other = 0.0
    ops = copies = 0
    cycles: list[float] = []
    for timed, stream in zip(estimate.streams, estimate.compiled.streams):
        after_table_dma = False
        timed_ops = iter(timed.ops)
        for event in stream.events:
            if isinstance(event, DmaEvent):
                after_table_dma = event.dst.region == INTERNAL_REGION  # into the NPU's table memory
            elif isinstance(event, NpuEvent):
                op = next(timed_ops)
                ops += 1
                cycles.append(float(op.cost.total_cycles))
                if is_transposing_copy(event):
                    copies += 1
                if after_table_dma:
                    table += op.wait_cycles
                else:
                    other += op.wait_cycles
                after_table_dma = False
    return Split(estimate.report.cycles_total, table, other, ops, copies, tuple(cycles))


def over_gaps(fm: FeatureMapAccess) -> FeatureMapAccess:
    """``fm`` as the dense box over its gaps when it is written every other column and row (x stride
    of two pixels or more, y stride of two such rows or more); else ``fm`` itself."""
    pixel = fm.depth * fm.element_bytes
    if fm.nhcwb16 or pixel <= 0 or fm.stride_x < 2 * pixel or fm.stride_x % pixel:
        return fm
    step_x, step_y = fm.stride_x // pixel, fm.stride_y // max(fm.width * fm.stride_x, 1)
    if step_y < 2:  # a slice of a deeper map (a concatenation): its rows are adjacent
        return fm
    return dataclasses.replace(fm, width=(fm.width - 1) * step_x + 1, height=(fm.height - 1) * step_y + 1,
                               height_0=(fm.height_0 - 1) * step_y + 1, stride_x=pixel,
                               stride_y=pixel * ((fm.width - 1) * step_x + 1))


def _in_arena(fm: FeatureMapAccess) -> FeatureMapAccess:
    """``fm`` moved from the cache (region 2) to the arena (region 1)."""
    return dataclasses.replace(fm, region=1) if fm.region == 2 else fm


def _gaps(event: NpuEvent) -> NpuEvent:
    if event.kind not in ("Conv2D", "DepthWise"):
        return event
    return dataclasses.replace(event, ofm=over_gaps(event.ofm))


def _cache_in_dram(event: NpuEvent) -> NpuEvent:
    ifm2 = None if event.ifm2 is None else _in_arena(event.ifm2)
    return dataclasses.replace(event, ifm=_in_arena(event.ifm), ofm=_in_arena(event.ofm), ifm2=ifm2)


def _is_slice_of(event: NpuEvent, first: NpuEvent) -> bool:
    """Whether ``event`` computes more OFM channels of the operation ``first`` began: same kind,
    IFM box and kernel, the same OFM rows and columns, weights of its own."""
    return (event.kind == first.kind and event.kind in ("Conv2D", "DepthWise") and event.ifm == first.ifm
            and event.kernel == first.kernel and event.weights is not None and first.weights is not None
            and (event.ofm.region, event.ofm.height, event.ofm.width) == (first.ofm.region, first.ofm.height,
                                                                         first.ofm.width))


def _joined(first: NpuEvent, event: NpuEvent) -> NpuEvent:
    def join(a: Range | None, b: Range | None) -> Range | None:
        return a if a is None or b is None else Range(a.region, a.address, a.length + b.length)
    return dataclasses.replace(first, ofm=dataclasses.replace(first.ofm, depth=first.ofm.depth + event.ofm.depth),
                               weights=join(first.weights, event.weights), scales=join(first.scales, event.scales))


def slices_joined(events: tuple[Event, ...], *, keep_dma_waits: bool = False) -> tuple[Event, ...]:
    """``events`` without waits (but the DMA waits if ``keep_dma_waits``: they count DMAs, which
    joining leaves as they are), each run of an operation's OFM depth slices one operation (as Vela
    5.2.0's default core times a depth-sliced operation: once, its IFM read once, no DMA wait)."""
    out: list[Event] = []
    last: int | None = None  # index in ``out`` of the last NPU operation
    for event in events:
        if isinstance(event, WaitEvent) and not (keep_dma_waits and event.kind == "dma"):
            continue
        if isinstance(event, NpuEvent):
            previous = out[last] if last is not None else None
            if isinstance(previous, NpuEvent) and _is_slice_of(event, previous):
                out[last] = _joined(previous, event)  # type: ignore[index]
                continue
            last = len(out)
        out.append(event)
    return tuple(out)


def rewritten_cycles(path: Path, scenario: str, rewrite: Callable[[NpuEvent], NpuEvent] | None = None, *,
                     stream_rewrite: Callable[[tuple[Event, ...]], tuple[Event, ...]] | None = None) -> float:
    """The estimate of ``path`` with each decoded NPU operation rewritten by ``rewrite``, or each
    stream's events by ``stream_rewrite``."""
    arch = build_architecture(_options(scenario))
    total = 0.0
    for stream in read_compiled(path).streams:
        events: tuple[Event, ...] = stream.events
        if rewrite is not None:
            events = tuple(rewrite(e) if isinstance(e, NpuEvent) else e for e in events)
        if stream_rewrite is not None:
            events = stream_rewrite(events)
        names = [f"op{k}" for k in range(sum(isinstance(e, NpuEvent) for e in events))]
        total += time_stream(events, arch, names=names).total_cycles
    return total


def as_vela_counts(events: tuple[Event, ...]) -> tuple[Event, ...]:
    """``events`` as Vela 5.2.0's default core counts them where the stream alone says how: strided
    OFMs over their gaps, no table DMAs, each run of depth slices one operation (DMA waits kept)."""
    kept = tuple(_gaps(e) if isinstance(e, NpuEvent) else e for e in events
                 if not (isinstance(e, DmaEvent) and e.dst.region == INTERNAL_REGION))
    return slices_joined(kept, keep_dma_waits=True)


def table_lines(table: Path) -> list[str]:
    """The lines of an ``estimate_fidelity.py`` table before its summary (the per-network one-clock
    table after it has rows of its own, whose columns are not a ratio)."""
    lines = table.read_text().splitlines()
    return lines[:next((k for k, line in enumerate(lines) if line.startswith("# summary")), len(lines))]


def counted_summary(table: Path, work: Path) -> list[str]:
    """Per scenario, every default-core file of ``table`` timed ``as_vela_counts``: median and how
    many within 3% and 10% of Vela's figure."""
    ratios: dict[str, list[float]] = {}
    for line in table_lines(table):
        parts = line.split()
        if line.startswith("#") or len(parts) < 6 or parts[2] != "vela-default" or parts[5] == "-":
            continue
        scenario = next((s for s in SCENARIOS if s.startswith(parts[0])), parts[0])
        path = compiled_file(work, parts[0], parts[1], parts[2])
        if path is None:
            continue
        try:
            cycles = rewritten_cycles(path, scenario, stream_rewrite=as_vela_counts)
        except NpuplanError:
            continue
        ratios.setdefault(scenario, []).append(cycles / float(parts[3]))
    out = []
    for scenario, values in ratios.items():
        within3 = sum(abs(v - 1) <= 0.03 for v in values)
        within10 = sum(abs(v - 1) <= 0.10 for v in values)
        out.append(f"{scenario:34} vela-default n={len(values)} median {statistics.median(values):.3f} "
                   f"within 3%: {within3}/{len(values)} within 10%: {within10}/{len(values)}")
    return out


@dataclass(frozen=True)
class PairedOps:
    """One Vela file whose per-layer rows pair with its stream's NPU operations: each operation's
    registers (``op_signature``), Vela's row cycles and npuplan's cycles for it."""

    signatures: tuple[tuple[object, ...], ...]
    vela_cycles: tuple[float, ...]
    npuplan_cycles: tuple[float, ...]


def op_signature(event: NpuEvent) -> tuple[object, ...]:
    """What the hardware does in ``event``, without addresses: kind, maps (region, box, strides,
    element size, format), kernel, block, weight stream length, precision and upscaling."""
    fm = lambda f: None if f is None else (f.region, f.height, f.width, f.depth, f.stride_y,  # noqa: E731
                                           f.stride_x, f.stride_c, f.element_bytes, f.nhcwb16)
    return (event.kind, event.mode, fm(event.ifm), fm(event.ifm2), fm(event.ofm), event.kernel, event.block,
            event.dilation, event.part_kernel_first, event.acc_format, event.upscale,
            None if event.weights is None else event.weights.length)


def _near(mine: float, theirs: float) -> bool:
    return abs(mine - theirs) <= 0.02 * max(theirs, 1.0)


def op_agreement(table: Path, work: Path, paths: dict[str, Path]) -> list[str]:
    """Per scenario and core, over every Vela file of ``table`` with a per-layer CSV beside it (none is
    compiled again here): how many files'
    figures are the sum of their rows (no term for waits or DMAs), and over the files whose rows
    pair with the stream's operations, how many operations (and what share of Vela's cycles in
    them) npuplan times within 2% of their row; then the operations with the same registers in
    both cores' files of a network: how often Vela's two cores price them alike, and npuplan
    like each."""
    found: dict[tuple[str, str], list[int]] = {}
    paired: dict[tuple[str, str, str], PairedOps] = {}
    for line in table_lines(table):
        parts = line.split()
        if line.startswith("#") or len(parts) < 6 or parts[2] not in CORES or parts[5] == "-" or parts[1] not in paths:
            continue
        scenario = next((s for s in SCENARIOS if s.startswith(parts[0])), parts[0])
        path = compiled_file(work, parts[0], parts[1], parts[2])
        layers = (vela_layers(path, paths[parts[1]], work, scenario, CORES[parts[2]], compile_missing=False)
                  if path is not None else None)
        if path is None or layers is None or not layers.op_cycles:
            continue
        split = split_timeline(path, scenario)
        counts = found.setdefault((scenario, parts[2]), [0] * 7)
        counts[0] += 1
        counts[1] += abs(float(parts[3]) - sum(layers.op_cycles)) <= 0.001 * float(parts[3])
        if len(layers.op_cycles) == split.ops:
            near = [_near(m, t) for m, t in zip(split.op_cycles, layers.op_cycles)]
            counts[2:] = [counts[2] + 1, counts[3] + sum(near), counts[4] + split.ops,
                          counts[5] + round(sum(t for t, ok in zip(layers.op_cycles, near) if ok)),
                          counts[6] + round(sum(layers.op_cycles))]
            events = [e for stream in read_compiled(path).streams for e in stream.events if isinstance(e, NpuEvent)]
            paired[scenario, parts[1], parts[2]] = PairedOps(tuple(map(op_signature, events)), layers.op_cycles,
                                                             split.op_cycles)
    lines = [f"{scenario:34} {side:12} files {c[0]}: figure = sum of rows {c[1]}; rows pair with operations {c[2]}: "
             f"operations within 2% {c[3]}/{c[4]} ({c[5] / max(c[6], 1):.1%} of Vela's cycles in them)"
             for (scenario, side), c in found.items()]
    return lines + _cores_alike(paired)


def _cores_alike(paired: dict[tuple[str, str, str], PairedOps]) -> list[str]:
    """Per scenario: the operations of a legacy-core file with the same registers as one of the
    default-core file of the same network, each file's rows paired with its operations."""
    counts: dict[str, list[int]] = {}
    for (scenario, model, side), legacy in paired.items():
        default = paired.get((scenario, model, "vela-default"))
        if side != "vela-legacy" or default is None:
            continue
        theirs = dict(zip(default.signatures, default.vela_cycles))
        c = counts.setdefault(scenario, [0, 0, 0, 0])
        for signature, vela, mine in zip(legacy.signatures, legacy.vela_cycles, legacy.npuplan_cycles):
            if signature in theirs:
                c[0] += 1
                c[1] += _near(vela, theirs[signature])
                c[2] += _near(mine, theirs[signature])
                c[3] += _near(mine, vela)
    return [f"{scenario:34} same registers in both cores' files: {c[0]} operations; Vela's legacy row within 2% of "
            f"its default row {c[1]}; npuplan within 2% of the default row {c[2]}, of the legacy row {c[3]}"
            for scenario, c in counts.items()]


def cause(ratio: float, split: Split, reference: float, *, gaps_cycles: float, dram_cycles: float | None,
          slices_cycles: float, default_core: bool = True) -> str:
    """The first cause that accounts for the row (see the module's note); the rewrites are how Vela's
    default core counts, so a legacy-core row gets only the timeline's causes (its estimator differs
    in three terms first: bench/estimate_legacy_terms.py)."""
    within = lambda cycles: 0.90 <= cycles / reference <= 1.10  # noqa: E731
    if ratio > 1.10 and within(split.total_cycles - split.table_wait_cycles):
        return "table loads"
    if ratio > 1.10 and within(split.total_cycles - split.table_wait_cycles - split.dma_wait_cycles):
        return "weight DMA waits"
    if default_core and ratio > 1.10 and within(slices_cycles):
        return "depth slices"
    if split.channel_copies * 2 >= split.ops:
        return "decomposed copies"
    if default_core and gaps_cycles != split.total_cycles and within(gaps_cycles):
        return "OFM over gaps"
    if default_core and ratio < 0.90 and dram_cycles is not None and dram_cycles / reference >= 0.90:
        return "cache maps as DRAM"
    return "Vela higher" if ratio < 0.90 else "other"


def outliers(table: Path) -> list[tuple[str, str, str, float, float]]:
    """(scenario, model, side, reference, ratio) of each Vela row outside 10%."""
    found = []
    for line in table_lines(table):
        parts = line.split()
        if line.startswith("#") or len(parts) < 6 or parts[2] not in CORES or parts[5] == "-":
            continue
        ratio = float(parts[5])
        if not 0.90 <= ratio <= 1.10:
            scenario = next((s for s in SCENARIOS if s.startswith(parts[0])), parts[0])
            found.append((scenario, parts[1], parts[2], float(parts[3]), ratio))
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, default=ROOT / "bench/results/estimate_fidelity.txt")
    parser.add_argument("--groups", default="public,testdata,zoo")
    parser.add_argument("--work", type=Path, default=Path("/tmp/estimate_fidelity"))
    parser.add_argument("--results", type=Path, default=None, help="also write the table to this file")
    args = parser.parse_args(argv)
    paths = {p.stem: p for p in models(args.groups.split(","), 1)}
    lines = [f"{'scenario':34} {'model':28} {'side':12} {'ratio':>6} {'ops':>5} {'copies':>6} "
             f"{'table':>6} {'dma':>6} {'slices':>6} {'gaps':>6} {'dram':>6} {'rows/ops':>11} {'sum':>6} "
             f"{'match':>9}  cause  (table, dma: waits as a share of Vela's figure; slices, gaps, dram: the ratio "
             "with the rewrites above; rows/ops, sum, match: Vela's per-layer rows, see VelaLayers.against)"]
    counts: Counter[tuple[str, str, str]] = Counter()
    for scenario, model, side, reference, ratio in outliers(args.table):
        found = vela_file(paths[model], scenario, CORES[side], args.work) if model in paths else "model not found"
        if isinstance(found, str):
            lines.append(f"{scenario:34} {model:28} {side:12} {ratio:6.3f} {found}")
            continue
        try:
            split = split_timeline(found[0], scenario)
        except NpuplanError as error:
            lines.append(f"{scenario:34} {model:28} {side:12} {ratio:6.3f} estimate failed: {str(error)[:60]}")
            continue
        gaps = rewritten_cycles(found[0], scenario, _gaps)
        dedicated = SCENARIOS[scenario][2].startswith("Dedicated")
        dram = rewritten_cycles(found[0], scenario, _cache_in_dram) if dedicated else None
        slices = rewritten_cycles(found[0], scenario, stream_rewrite=slices_joined)
        why = cause(ratio, split, reference, gaps_cycles=gaps, dram_cycles=dram, slices_cycles=slices,
                    default_core=side == "vela-default")
        counts[scenario, side, why] += 1
        dram_text = f"{dram / reference:6.3f}" if dram is not None else f"{'-':>6}"
        layers = vela_layers(found[0], paths[model], args.work, scenario, CORES[side])
        layers_text = layers.against(split, reference) if layers is not None else f"{'-':>11} {'-':>6} {'-':>9}"
        lines.append(f"{scenario:34} {model:28} {side:12} {ratio:6.3f} {split.ops:5d} {split.channel_copies:6d} "
                     f"{split.table_wait_cycles / reference:6.3f} {split.dma_wait_cycles / reference:6.3f} "
                     f"{slices / reference:6.3f} {gaps / reference:6.3f} {dram_text} {layers_text}  {why}")
        print(lines[-1], flush=True)
    lines.append("# summary: outliers by cause")
    for (scenario, side, why), n in sorted(counts.items()):
        lines.append(f"{scenario:34} {side:12} {why:18} {n}")
    print("\n".join(lines[-len(counts) - 1:]))
    lines.append("# every Vela file's per-layer rows against the stream's operations (npuplan's cycles per "
                 "operation, waits left out)")
    agreement = op_agreement(args.table, args.work, paths)
    lines += agreement
    print("\n".join(agreement))
    lines.append("# every default-core file timed as Vela counts it (strided OFMs over their gaps, no table DMAs, "
                 "depth slices joined)")
    lines += counted_summary(args.table, args.work)
    print("\n".join(lines[-3:]))
    if args.results:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        header = [f"# command: python bench/estimate_outliers.py {' '.join(argv)}".rstrip(), f"# commit: {commit}",
                  "# Vela: 5.2.0", f"# date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
                  f"# table: {args.table.resolve().relative_to(ROOT) if args.table.resolve().is_relative_to(ROOT) else args.table}"]
        args.results.write_text("\n".join(header + lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
