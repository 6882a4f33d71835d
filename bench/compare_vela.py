"""Compare npuplan with Vela 5.2.0 side by side on a model zoo and the three public scenarios.

Usage:
  python bench/compare_vela.py [--zoo DIR (default tests/data)] [--baseline bench/reference/vela_5.2.0_public.jsonl]
                               [--vela PATH/TO/venv/bin/vela] [--scenario NAME ...] [--model NAME ...]

Summary figures come from the baseline JSONL (Vela's legacy core). With --vela, Vela is also run
here (legacy core) for its per-layer CSV. The ``t ours`` / ``t vela`` columns are wall seconds of
npuplan in this process (after imports) and of a whole Vela process: not comparable, so no ratio
is printed; ``bench/compile_vs_vela.py`` compares compile time fairly (both as fresh processes, CPU
seconds). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scenarios import SCENARIOS, cli_flags
from vela_layers import layer_agreement, npu_cycles_by_name

HERE = Path(__file__).resolve().parent



def load_baseline(path: Path) -> dict[tuple[str, str], dict]:
    found = {}
    if path.exists():
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("core") == "legacy":
                found[(rec["model"], rec["scenario"])] = rec
    return found


def run_vela(vela: str, model: Path, options: dict[str, str]) -> tuple[float, dict, list[dict]]:
    with tempfile.TemporaryDirectory() as out:
        cmd = [vela, str(model), "--output-dir", out, "--debug-force-legacy-core", "--verbose-performance", *cli_flags(options)]
        started = time.perf_counter()
        subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        summary, layers = {}, []
        for f in glob.glob(os.path.join(out, "*_summary_*.csv")):
            rows = list(csv.reader(open(f)))
            summary = dict(zip(rows[0], rows[1]))
        for f in glob.glob(os.path.join(out, "*_per-layer.csv")):
            layers = list(csv.DictReader(open(f)))
        return wall, summary, layers


def count(text: str | None) -> int | None:
    return None if text is None else int(text.split()[0])


def pct(ours: float, theirs: float) -> float:
    return 100.0 * (ours - theirs) / theirs if theirs else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--zoo", default=str(HERE.parent / "tests" / "data"))
    parser.add_argument("--baseline", default=str(HERE / "reference" / "vela_5.2.0_public.jsonl"))
    parser.add_argument("--vela", default=None, help="vela executable in a separate venv")
    parser.add_argument("--scenario", action="append", default=None)
    parser.add_argument("--model", action="append", default=None)
    args = parser.parse_args()

    sys.path.insert(0, str(HERE.parent / "src"))
    import npuplan
    from npuplan.report import build_report
    from npuplan.report.files import per_layer_rows

    baseline = load_baseline(Path(args.baseline))
    models = sorted(Path(args.zoo).glob("*.tflite"))
    if args.model:
        models = [m for m in models if m.stem in args.model]
    for scenario in args.scenario or list(SCENARIOS):
        options = SCENARIOS[scenario]
        print(f"\n== {scenario}")
        print(f"{'model':24} {'npu':>7} {'cpu':>5} {'macs%':>7} {'encw%':>7} {'cycles':>11} {'vela':>11} {'cyc%':>7} "
              f"{'sram KiB':>9} {'vela':>9} {'layers<=10%':>12} {'t ours':>7} {'t vela':>7}")
        errors = []
        layer_hits = layer_total = 0
        for model in models:
            ref = baseline.get((model.stem, scenario), {})
            vs = ref.get("summary", {})
            started = time.perf_counter()
            try:
                plan = npuplan.plan(model, **options)
            except Exception as error:  # a benchmark reports failures and goes on
                print(f"{model.stem:24} FAILED: {error}")
                continue
            ours_s = time.perf_counter() - started
            report = build_report(plan)
            vela_s, vela_layers = None, []
            if args.vela:
                vela_s, _, vela_layers = run_vela(args.vela, model, options)
            hits = total = 0
            if vela_layers:
                ours_npu = {row[-1]: row[6] for row in per_layer_rows(report)}
                hits, total = layer_agreement(ours_npu, npu_cycles_by_name(vela_layers))
                layer_hits += hits
                layer_total += total
            cyc_v = float(vs.get("cycles_total", 0) or 0)
            err = pct(report.cycles_total, cyc_v)
            if cyc_v:
                errors.append(abs(err))
            print(f"{model.stem:24} {report.npu_op_count:>3}/{count(ref.get('NPU operators')) or 0:<3} "
                  f"{report.cpu_op_count:>2}/{count(ref.get('CPU operators')) or 0:<2} "
                  f"{pct(report.nn_macs, float(vs.get('nn_macs', 0) or 0)):>7.2f} "
                  f"{pct(report.total_npu_encoded_weights, float(vs.get('total_npu_encoded_weights', 0) or 0)):>7.2f} "
                  f"{report.cycles_total:>11.0f} {cyc_v:>11.0f} {err:>7.1f} "
                  f"{report.memory_used_bytes.get(plan.arch.fast_area, 0) / 1024:>9.2f} {float(vs.get('sram_memory_used', 0) or 0):>9.2f} "
                  f"{(f'{hits}/{total}' if total else '-'):>12} {ours_s:>7.2f} {(f'{vela_s:.2f}' if vela_s else '-'):>7}")
        if errors:
            print(f"cycles_total |error| vs Vela legacy: median {statistics.median(errors):.1f}%, max {max(errors):.1f}%")
        if layer_total:
            print(f"per-layer NPU cycles within 10%: {layer_hits}/{layer_total} = {100.0 * layer_hits / layer_total:.1f}%")


if __name__ == "__main__":
    main()
