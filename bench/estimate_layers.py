"""Where ``npuplan estimate`` of Vela's file departs from Vela's own figure, by kind of operation.

Vela 5.2.0 compiles each model with ``--verbose-performance`` (its per-layer CSV); where Vela's
rows with cycles are as many as the file's NPU operations (no op split into stripes), they are
matched in order and summed by the operation's kind as the registers say it (``Conv2D``,
``DepthWise``, ``Pooling/avg``, ``ElementWise/ADD``...): Vela's cycles, npuplan's, and the two
halves of each (the datapath, "NPU"; the slowest memory, "AC"). Networks whose rows do not match
are counted, not guessed.

    python bench/estimate_layers.py [--scenario u55_128_highend_shared_perf] [--core default|legacy]
        [--groups public,testdata,zoo] [--zoo-every 1] [--work /tmp/estimate_layers]
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from estimate_fidelity import SCENARIOS, VELA, _options, models

from npuplan.errors import NpuplanError
from npuplan.estimate import estimate_file
from npuplan.estimate.queries import npu_op

AC_COLUMNS = ("SRAM AC", "DRAM AC", "OnFlash AC", "OffFlash AC")


def vela_rows(model: Path, scenario: str, core: str, work: Path) -> tuple[Path, list[dict[str, str]]] | None:
    accel, system, mode = SCENARIOS[scenario]
    out = work / core / scenario / model.parent.name
    command = [VELA, str(model), "--output-dir", str(out), "--accelerator-config", accel, "--system-config", system,
               "--memory-mode", mode, "--optimise", "Performance", "--verbose-performance"]
    if core == "legacy":
        command.append("--debug-force-legacy-core")
    layers = out / f"{model.stem}_per-layer.csv"
    if not layers.exists():
        subprocess.run(command, capture_output=True, text=True, timeout=900)
    if not layers.exists():
        return None
    # the legacy core writes one table per NPU subgraph, each with its header row
    rows = [r for r in csv.DictReader(layers.open()) if r["Op Cycles"] != "Op Cycles" and float(r["Op Cycles"] or 0) > 0]
    return out / f"{model.stem}_vela.tflite", rows


def _kind(op) -> str:  # type: ignore[no-untyped-def]
    e = op.event
    if e.kind == "Pooling":
        return f"Pooling/{str(npu_op(e, '').pool)}" + ("/lut" if str(npu_op(e, '').activation) == "lut" else "")
    if e.kind == "ElementWise":
        return f"ElementWise/{npu_op(e, '').elementwise}"
    return e.kind + ("/1x1" if e.kernel[:2] == (1, 1) else "")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="u55_128_highend_shared_perf")
    parser.add_argument("--core", default="default")
    parser.add_argument("--groups", default="public,testdata,zoo")
    parser.add_argument("--zoo-every", type=int, default=1)
    parser.add_argument("--work", default="/tmp/estimate_layers")
    args = parser.parse_args(argv)
    sums: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    matched = unmatched = 0
    for model in models(args.groups.split(","), args.zoo_every):
        found = vela_rows(model, args.scenario, args.core, Path(args.work))
        if found is None:
            continue
        try:
            estimate = estimate_file(found[0], _options(args.scenario))
        except NpuplanError:
            continue
        ops = [op for s in estimate.streams for op in s.ops]
        if len(ops) != len(found[1]):
            unmatched += 1
            continue
        matched += 1
        for op, row in zip(ops, found[1]):
            s = sums[_kind(op)]
            s[0] += 1
            s[1] += float(row["Op Cycles"])
            s[2] += op.cost.total_cycles + op.wait_cycles
            s[3] += float(row["NPU"])
            s[4] += op.cost.op_cycles + op.wait_cycles
            s[5] += max(float(row[c] or 0) for c in AC_COLUMNS)
            s[6] += max(op.cost.access_cycles.values())
    print(f"# {args.scenario}, Vela {args.core} core: {matched} networks matched op by op, {unmatched} not "
          "(ops split into stripes)")
    print(f"{'kind':26} {'ops':>5} {'vela cycles':>12} {'npuplan':>12} {'ratio':>6} {'vela NPU':>11} {'npuplan':>11} "
          f"{'ratio':>6} {'vela AC':>11} {'npuplan':>11} {'ratio':>6}")
    for kind, s in sorted(sums.items(), key=lambda item: -item[1][1]):
        r = [f"{a / b:6.3f}" if b else f"{'-':>6}" for a, b in ((s[2], s[1]), (s[4], s[3]), (s[6], s[5]))]
        print(f"{kind:26} {s[0]:5d} {s[1]:12.0f} {s[2]:12.0f} {r[0]} {s[3]:11.0f} {s[4]:11.0f} {r[1]} {s[5]:11.0f} "
              f"{s[6]:11.0f} {r[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
