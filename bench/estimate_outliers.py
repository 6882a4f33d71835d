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
- ``decomposed copies``: half the operations or more are one-channel 1x1 pooling copies;
- ``Vela higher``: the ratio is below 0.90 (Vela times buffered-weight operations with its reference
  schedule's estimate, feature maps in permanent storage; strided OFM writes over their gaps);
- ``other``.

Trusted side: neither; this splits the difference, it does not say who is right (see docs/run.md).

    python bench/estimate_outliers.py [--table bench/results/estimate_fidelity.txt]
        [--groups public,testdata,zoo] [--work /tmp/estimate_fidelity] [--results FILE]
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from estimate_fidelity import ROOT, SCENARIOS, _options, models, vela_file

from npuplan.errors import NpuplanError
from npuplan.estimate import estimate_file
from npuplan.regstream.events import INTERNAL_REGION, DmaEvent, NpuEvent

CORES = {"vela-default": "default", "vela-legacy": "legacy"}


@dataclass(frozen=True)
class Split:
    total_cycles: float
    table_wait_cycles: float
    dma_wait_cycles: float
    ops: int
    channel_copies: int


def split_timeline(path: Path, scenario: str) -> Split:
    """The estimate of ``path`` and the parts of its timeline this bench attributes."""
    estimate = estimate_file(path, _options(scenario))
    table = other = 0.0
    ops = copies = 0
    for timed, stream in zip(estimate.streams, estimate.compiled.streams):
        after_table_dma = False
        timed_ops = iter(timed.ops)
        for event in stream.events:
            if isinstance(event, DmaEvent):
                after_table_dma = event.dst.region == INTERNAL_REGION  # into the NPU's table memory
            elif isinstance(event, NpuEvent):
                op = next(timed_ops)
                ops += 1
                if event.kind == "Pooling" and event.kernel[:2] == (1, 1) and event.ofm.depth == 1:
                    copies += 1
                if after_table_dma:
                    table += op.wait_cycles
                else:
                    other += op.wait_cycles
                after_table_dma = False
    return Split(estimate.report.cycles_total, table, other, ops, copies)


def cause(ratio: float, split: Split, reference: float) -> str:
    within = lambda cycles: 0.90 <= cycles / reference <= 1.10  # noqa: E731
    if ratio > 1.10 and within(split.total_cycles - split.table_wait_cycles):
        return "table loads"
    if ratio > 1.10 and within(split.total_cycles - split.table_wait_cycles - split.dma_wait_cycles):
        return "weight DMA waits"
    if split.channel_copies * 2 >= split.ops:
        return "decomposed copies"
    return "Vela higher" if ratio < 0.90 else "other"


def outliers(table: Path) -> list[tuple[str, str, str, float, float]]:
    """(scenario, model, side, reference, ratio) of each Vela row outside 10%."""
    found = []
    for line in table.read_text().splitlines():
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
             f"{'table':>6} {'dma':>6}  cause  (table, dma: waits as a share of Vela's figure)"]
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
        why = cause(ratio, split, reference)
        counts[scenario, side, why] += 1
        lines.append(f"{scenario:34} {model:28} {side:12} {ratio:6.3f} {split.ops:5d} {split.channel_copies:6d} "
                     f"{split.table_wait_cycles / reference:6.3f} {split.dma_wait_cycles / reference:6.3f}  {why}")
        print(lines[-1], flush=True)
    lines.append("# summary: outliers by cause")
    for (scenario, side, why), n in sorted(counts.items()):
        lines.append(f"{scenario:34} {side:12} {why:18} {n}")
    print("\n".join(lines[-len(counts) - 1:]))
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
