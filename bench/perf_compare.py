"""Plans against both of Vela 5.2.0's cores, per scenario: cycles and SRAM per model.

The two Performance scenarios, and the Size one (``--scenario u55_64_deep_shared_size``: the
smallest SRAM, then speed; its target is SRAM <= legacy on every model and the geomean of cycles
over the better core <= 1).

Usage:
  python bench/perf_compare.py [--zoo DIR (default tests/data)] [--baseline bench/reference/vela_5.2.0_public.jsonl]
                               [--scenario NAME ...] [--model NAME ...]

For each model: our cycles_total, reported sram_memory_used (KiB, the allocated peak) and the
schedule's live-bytes peak (KiB, max over time of bytes live in fast storage), then Vela's legacy
and regor figures from the baseline JSONL, our cycles over legacy's, and over the better core's.
Per scenario: the geomean of those ratios and the models whose SRAM exceeds legacy's. ``cmp/leg``
is the Vela-comparable plan (``search="cascade"``, Vela's 2021 search, and ``fm_staging=False``: no
feature map DMA'd into the cache, which Vela never does) over legacy; the fidelity line uses it, so
it measures the estimator rather than the planner.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from scenarios import SCENARIOS

HERE = Path(__file__).resolve().parent



def load_baseline(path: Path) -> dict[tuple[str, str, str], dict[str, float]]:
    """(model, scenario, core) -> {"cycles": ..., "sram_kib": ...} for runs that succeeded."""
    found: dict[tuple[str, str, str], dict[str, float]] = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        summary = rec.get("summary") or {}
        if rec.get("rc") != 0 or "cycles_total" not in summary:
            continue
        found[(rec["model"], rec["scenario"], rec["core"])] = {
            "cycles": float(summary["cycles_total"]), "sram_kib": float(summary["sram_memory_used"]),
        }
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--zoo", default=str(HERE.parent / "tests" / "data"))
    parser.add_argument("--baseline", default=str(HERE / "reference" / "vela_5.2.0_public.jsonl"))
    parser.add_argument("--scenario", action="append", default=None, choices=list(SCENARIOS))
    parser.add_argument("--model", action="append", default=None)
    args = parser.parse_args()

    sys.path.insert(0, str(HERE.parent / "src"))
    import npuplan
    from npuplan.report import build_report

    baseline = load_baseline(Path(args.baseline))
    models = sorted(Path(args.zoo).glob("*.tflite"))
    if args.model:
        models = [m for m in models if m.stem in args.model]
    for scenario in args.scenario or list(SCENARIOS):
        options = SCENARIOS[scenario]
        print(f"\n== {scenario}")
        print(f"{'model':24} {'cycles':>11} {'legacy':>11} {'regor':>11} {'/legacy':>8} {'/best':>7} "
              f"{'sram':>8} {'live':>8} {'legacy':>8} {'regor':>8} {'t s':>6} {'cmp/leg':>8}")
        vs_legacy, vs_best, over, fidelity = [], [], [], []
        for model in models:
            legacy = baseline.get((model.stem, scenario, "legacy"))
            regor = baseline.get((model.stem, scenario, "regor"))
            started = time.perf_counter()
            try:
                plan = npuplan.plan(model, **options)
            except Exception as error:  # a benchmark reports failures and goes on
                print(f"{model.stem:24} FAILED: {error}")
                continue
            seconds = time.perf_counter() - started
            report = build_report(plan)
            cycles = float(report.cycles_total)
            vela_like = npuplan.plan(model, **options, search="cascade", fm_staging=False)
            comparable = float(build_report(vela_like).cycles_total)
            sram_kib = report.memory_used_bytes.get(plan.arch.fast_area, 0) / 1024
            live_kib = max((s.sram_usage_bytes for s in plan.schedule.ops), default=0) / 1024
            cores = [c for c in (legacy, regor) if c]
            best = min((c["cycles"] for c in cores), default=0.0)
            r_leg = cycles / legacy["cycles"] if legacy else float("nan")
            r_best = cycles / best if best else float("nan")
            if legacy:
                vs_legacy.append(r_leg)
                fidelity.append(comparable / legacy["cycles"])
                if sram_kib > legacy["sram_kib"]:
                    over.append(f"{model.stem} ({sram_kib:.2f} > {legacy['sram_kib']:.2f})")
            if best:
                vs_best.append(r_best)

            def fig(core: dict[str, float] | None, key: str, fmt: str) -> str:
                return format(core[key], fmt) if core else "-"

            print(f"{model.stem:24} {cycles:>11.0f} {fig(legacy, 'cycles', '>11.0f')} {fig(regor, 'cycles', '>11.0f')} "
                  f"{r_leg:>8.3f} {r_best:>7.3f} {sram_kib:>8.2f} {live_kib:>8.2f} "
                  f"{fig(legacy, 'sram_kib', '>8.2f')} {fig(regor, 'sram_kib', '>8.2f')} {seconds:>6.1f} "
                  f"{(comparable / legacy['cycles'] if legacy else float('nan')):>8.3f}")
        if vs_legacy:
            errors = [abs(r - 1) * 100 for r in vs_legacy]
            print(f"cycles vs legacy: geomean {statistics.geometric_mean(vs_legacy):.3f}, "
                  f"|error| median {statistics.median(errors):.1f}%, max {max(errors):.1f}%")
        if fidelity:
            errors = [abs(r - 1) * 100 for r in fidelity]
            print(f"fidelity, Vela-comparable plans vs legacy: |error| median {statistics.median(errors):.1f}%, "
                  f"max {max(errors):.1f}%")
        if vs_best:
            print(f"cycles vs the better core: geomean {statistics.geometric_mean(vs_best):.3f}")
        print(f"sram over legacy: {', '.join(over) if over else 'none'}")


if __name__ == "__main__":
    main()
