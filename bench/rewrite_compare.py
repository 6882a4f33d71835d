"""Per model and per layer: npuplan against Vela 5.2.0 (both cores) on the rewrite zoo.

For each model: CPU operators ours / Vela legacy / Vela default (or the error Vela stopped with),
NPU cycles ours against Vela legacy's per-layer report, and the layers (matched by output-tensor
name) more than 10% apart, with both sides' op cycles and npuplan's weight buffering. Vela
legacy is the reference for cycles (its per-layer estimate is the one npuplan's cost model
follows); its NPU column includes the wait for weights it copies to SRAM, which npuplan may
instead read in place, so a layer apart on NPU cycles but close on op cycles differs in that
choice, not in cost. Prints figures; asserts nothing.

Usage: PYTHONPATH=src python3 bench/rewrite_compare.py ZOO_DIR --vela PATH/TO/vela [--scenario NAME]
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import tempfile
from pathlib import Path

import npuplan
from npuplan.errors import NpuplanError
from npuplan.report import build_report

from scenarios import SCENARIOS, cli_flags  # noqa: E402


def run_vela(vela: str, model: Path, options: dict[str, str], *, legacy: bool) -> tuple[str, list[dict[str, str]]]:
    """(CPU operator count or Vela's error, per-layer rows) of one Vela run."""
    with tempfile.TemporaryDirectory() as out:
        args = [vela, str(model), *cli_flags(options), "--verbose-performance", "--output-dir", out]
        done = subprocess.run(args + (["--debug-force-legacy-core"] if legacy else []), capture_output=True, text=True)
        log = done.stdout + done.stderr
        cpu = next((line.split("=")[1].split("(")[0].strip() for line in log.splitlines()
                    if line.startswith("CPU operators")), None)
        if cpu is None:
            errors = [line for line in log.splitlines() if "Error" in line]
            return "crash: " + (errors[-1][:80] if errors else f"exit {done.returncode}"), []
        per_layer = Path(out) / f"{model.stem}_per-layer.csv"
        return cpu, list(csv.DictReader(per_layer.open())) if per_layer.exists() else []


def compare(model: Path, vela: str, options: dict[str, str]) -> None:
    cpu_legacy, rows = run_vela(vela, model, options, legacy=True)
    cpu_default, _ = run_vela(vela, model, options, legacy=False)
    try:
        report = build_report(npuplan.plan(model, **options))
    except NpuplanError as exc:
        print(f"\n== {model.stem}: npuplan: {exc}")
        return
    ours: dict[str, list[float]] = {}
    weights: dict[str, str] = {}
    for layer in report.layers:
        npu, op = ours.get(layer.name, [0.0, 0.0])
        ours[layer.name] = [npu + layer.npu_cycles, op + layer.op_cycles]
        weights[layer.name] = layer.weight_buffering
    rows = [r for r in rows if r.get("NPU") not in (None, "", "NPU")]
    matched = [r for r in rows if r["Name"] in ours]
    theirs_total = sum(float(r["NPU"]) for r in rows)
    ours_total = sum(v[0] for v in ours.values())
    error = (ours_total - theirs_total) / theirs_total * 100 if theirs_total else float("nan")
    close = 0
    lines = []
    for r in matched:
        npu, op = ours[r["Name"]]
        theirs = float(r["NPU"])
        off = (npu - theirs) / max(theirs, 1.0)
        close += abs(off) <= 0.10
        if abs(off) > 0.10:
            lines.append(f"   {off * 100:+7.1f}% npu {npu:9.0f} / {theirs:9.0f}  op {op:9.0f} / {float(r['Op Cycles']):9.0f}"
                         f"  weights {weights[r['Name']]:6} {r['NNG Operator']:20} {r['Name'][:48]}")
    print(f"\n== {model.stem}: CPU ops ours {report.cpu_op_count} / legacy {cpu_legacy} / default {cpu_default}; "
          f"NPU cycles ours {ours_total:.0f} vs legacy {theirs_total:.0f} ({error:+.1f}%); "
          f"{close}/{len(matched)} matched layers within 10% ({len(rows) - len(matched)} of Vela's unmatched)")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("zoo", type=Path)
    parser.add_argument("--vela", required=True)
    parser.add_argument("--scenario", default="u55_128_highend_shared_perf", choices=sorted(SCENARIOS))
    args = parser.parse_args()
    options = {k: v for k, v in SCENARIOS[args.scenario].items() if k != "optimise" or v != "Performance"}
    for model in sorted(args.zoo.glob("*.tflite")):
        compare(model, args.vela, options)


if __name__ == "__main__":
    main()
