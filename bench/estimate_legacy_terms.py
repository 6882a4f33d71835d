"""Why ``npuplan estimate`` of Vela's legacy-core files disagrees with Vela's legacy figure (issue 25).

A measurement, not a model: npuplan's one cost model follows Vela 5.2.0's default core. For each
legacy-core file that ``bench/estimate_fidelity.py`` timed, this times the file again with one more
of the legacy estimator's terms swapped into the cost model each step (cumulative), and prints how
the ratio to Vela's legacy figure moves:

1. pooling: one cycle a kernel step (two at 16 bits), where the default core charges ifm_bits / 2;
2. pipeline: no fill (first IFM block) or drain (last OFM block), whole OFM blocks counted, and the
   command floor reads both block transfers where the default core reads their imbalance;
3. NHWC bursts: never a run across a block's width (the legacy core compared the element size with
   the block depth, so a row of an NHWC block is never one burst).

Then two lines that time the stream as the legacy core counts it (``estimate_outliers.slices_joined``),
the three terms still in: an operation's OFM depth slices joined into one (its estimate times the
operation once, its IFM read once), first with the stream's DMA waits, then without (on U65 it hides
a weight DMA under the operation before).

The swaps last for one estimate each and touch nothing on disk.

    python bench/estimate_legacy_terms.py [--log bench/results/estimate_fidelity.txt]
        [--work /tmp/estimate_fidelity] [--results bench/results/estimate_legacy_terms.txt]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import math
import statistics
import subprocess
import sys
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from estimate_fidelity import ROOT, SCENARIOS, VELA, compiled_file, estimate, rows_from_log
from estimate_outliers import rewritten_cycles, slices_joined

from npuplan.cost import cycles, transfer
from npuplan.errors import NpuplanError
from npuplan.ir.lowered import BlockType


def _legacy_sub_kernel(original: Callable) -> Callable:
    def sub_kernel(query, n_elems, u, wb_cycles, ifm_block_depth, is_u55_32):  # type: ignore[no-untyped-def]
        steps_cycles, steps = original(query, n_elems, u, wb_cycles, ifm_block_depth, is_u55_32)
        if query.op.block_type is BlockType.POOLING and not is_u55_32:
            bits = query.ifm.bits
            steps_cycles = steps_cycles // (bits // 2) * (2 if bits == 16 else 1)
        return steps_cycles, steps
    return sub_kernel


def _legacy_pipeline(original: Callable) -> Callable:
    def pipelined(query, arch, dpu_cycles, out_cycles, n_blocks):  # type: ignore[no-untyped-def]
        transfers = cycles.fill_cycles(query, arch) + cycles.drain_cycles(query, arch)
        command = (transfers + out_cycles + dpu_cycles) / 4
        dpu_cycles, out_cycles = max(dpu_cycles, command), max(out_cycles, command)
        o, b = query.ofm.shape, query.block.ofm_block
        whole = o.n * math.ceil(o.h / min(o.h, b.height)) * math.ceil(o.w / min(o.w, b.width)) * math.ceil(
            o.c / min(o.c, b.depth))
        return int(dpu_cycles * whole + out_cycles if dpu_cycles > out_cycles else out_cycles * whole + dpu_cycles)
    return pipelined


def _legacy_bursts(original: Callable) -> Callable:
    def burst_bits(*, is_read, fmt, element_bits, block, shape, cores, step_x=1):  # type: ignore[no-untyped-def]
        if fmt == "NHCWB16":
            return original(is_read=is_read, fmt=fmt, element_bits=element_bits, block=block, shape=shape,
                            cores=cores, step_x=step_x)
        if is_read:
            return element_bits * block.depth
        return min(64 * 8, 16 * element_bits * cores, block.depth * element_bits)
    return burst_bits


# (label, module, attribute, wrapper): applied cumulatively
TERMS = (
    ("legacy pooling step", cycles, "_sub_kernel_cycles", _legacy_sub_kernel),
    ("legacy pipeline (no fill/drain)", cycles, "_pipelined_cycles", _legacy_pipeline),
    ("legacy NHWC bursts", transfer, "_burst_bits", _legacy_bursts),
)


@contextlib.contextmanager
def swapped(count: int) -> Iterator[None]:
    """The first ``count`` legacy terms in the cost model, for the duration of the block."""
    saved = [(module, name, getattr(module, name)) for _, module, name, _ in TERMS[:count]]
    try:
        for (_, module, name, wrap), (_, _, original) in zip(TERMS[:count], saved):
            setattr(module, name, wrap(original))
        yield
    finally:
        for module, name, original in saved:
            setattr(module, name, original)


def _joined_cycles(path: Path, scenario: str, *, keep_dma_waits: bool) -> float | None:
    """The estimate of ``path`` with its depth slices joined (``None`` if it does not estimate)."""
    try:
        return rewritten_cycles(path, scenario, stream_rewrite=partial(slices_joined, keep_dma_waits=keep_dma_waits))
    except NpuplanError:
        return None


def _line(scenario: str, label: str, ratios: list[float]) -> str:
    values = sorted(ratios)
    within3 = sum(abs(v - 1) <= 0.03 for v in values)
    within10 = sum(abs(v - 1) <= 0.10 for v in values)
    return (f"{scenario:34} {label:42} n={len(values):3} median {statistics.median(values):.3f} within 3%: "
            f"{within3:3}/{len(values)} within 10%: {within10:3}/{len(values)} min {values[0]:.3f} max {values[-1]:.3f}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", default=str(ROOT / "bench/results/estimate_fidelity.txt"))
    parser.add_argument("--work", default="/tmp/estimate_fidelity")
    parser.add_argument("--results", default=None)
    args = parser.parse_args(argv)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    version = subprocess.run([VELA, "--version"], capture_output=True, text=True).stdout.strip()
    lines = [f"# command: python bench/estimate_legacy_terms.py {' '.join(argv)}", f"# commit: {commit}",
             f"# Vela: {version}", f"# date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             "# ratio = npuplan estimate of Vela's legacy-core file / Vela's legacy cycles_total; each line adds "
             "one legacy term to the cost model"]
    print("\n".join(lines), flush=True)
    rows = [r for r in rows_from_log(Path(args.log)) if r.side == "vela-legacy" and r.reference]
    for scenario in dict.fromkeys(r.scenario for r in rows):
        full = next(s for s in SCENARIOS if s.startswith(scenario))
        found = [(r, compiled_file(Path(args.work), scenario, r.model, r.side)) for r in rows if r.scenario == scenario]
        files = [(r, p) for r, p in found if p is not None]
        for count in range(len(TERMS) + 1):
            label = "npuplan's model" if count == 0 else "+ " + TERMS[count - 1][0]
            with swapped(count):
                times = [(r, estimate(p, full)) for r, p in files]
            ratios = [t / r.reference for r, t in times if not isinstance(t, str) and r.reference]
            lines.append(_line(full, label, ratios))
            print(lines[-1], flush=True)
        for label, keep in (("+ depth slices joined", True), ("+ depth slices joined, no DMA waits", False)):
            with swapped(len(TERMS)):
                ratios = [t / r.reference for r, p in files
                          if r.reference and (t := _joined_cycles(p, full, keep_dma_waits=keep)) is not None]
            lines.append(_line(full, label, ratios))
            print(lines[-1], flush=True)
    if args.results:
        Path(args.results).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
