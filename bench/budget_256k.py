"""Scenario B256: is the arena cache size a cap? npuplan side by side with both Vela cores.

Usage:
  python bench/budget_256k.py [--zoo DIR (default tests/data)] [--vela PATH/TO/venv/bin/vela] [--model NAME ...]
                              [--budget BYTES]

Every model is planned for ``--accelerator-config ethos-u55-256 --system-config
Ethos_U55_High_End_Embedded --memory-mode Shared_Sram --arena-cache-size 262144`` (Performance).
Per model: npuplan's SRAM peak (KiB), cycles_total and compile time, or its one-line error; with
``--vela``, Vela 5.2.0's legacy core (``--debug-force-legacy-core``) and default core run here, in the
same script: whether each planned, its sram_memory_used, cycles_total, whether it is over the
budget, and its wall time. Then the geomean of cycles_total, ours over the faster in-budget Vela
core, over the models where npuplan and at least one Vela core produced in-budget plans. The times
are wall seconds (npuplan in this process, Vela as a whole process), not a fair ratio:
``bench/compile_vs_vela.py`` compares compile time.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import glob
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
OPTIONS = dict(accelerator_config="ethos-u55-256", system_config="Ethos_U55_High_End_Embedded",
               memory_mode="Shared_Sram", optimise="Performance")


@dataclass(frozen=True)
class Result:
    """One compiler's outcome on one model: ``sram_kib``/``cycles`` are None when it failed."""

    sram_kib: float | None
    cycles: float | None
    seconds: float
    error: str = ""

    def within(self, budget_bytes: int) -> bool:
        return self.sram_kib is not None and self.sram_kib * 1024 <= budget_bytes


def run_ours(model: Path, budget_bytes: int) -> Result:
    import npuplan
    from npuplan.errors import NpuplanError
    from npuplan.report import build_report

    started = time.perf_counter()
    try:
        plan = npuplan.plan(model, arena_cache_size=budget_bytes, **OPTIONS)
    except NpuplanError as error:
        return Result(None, None, time.perf_counter() - started, str(error))
    seconds = time.perf_counter() - started
    report = build_report(plan)
    sram = report.memory_used_bytes.get(plan.arch.fast_area, 0)
    return Result(sram / 1024, float(report.cycles_total), seconds)


def run_vela(vela: str, model: Path, budget_bytes: int, legacy: bool) -> Result:
    flags: list[str] = []
    for key, value in OPTIONS.items():
        flags += [f"--{key.replace('_', '-')}", value]
    with tempfile.TemporaryDirectory() as out:
        cmd = [vela, str(model), "--output-dir", out, "--arena-cache-size", str(budget_bytes), *flags]
        if legacy:
            cmd.append("--debug-force-legacy-core")
        started = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
        files = glob.glob(os.path.join(out, "*_summary_*.csv"))
        if done.returncode != 0 or not files:
            last = (done.stderr or done.stdout).strip().splitlines()
            return Result(None, None, seconds, last[-1] if last else f"exit {done.returncode}")
        row = next(csv.DictReader(open(files[0])))
        return Result(float(row["sram_memory_used"]), float(row["cycles_total"]), seconds)


def cell(result: Result | None, budget_bytes: int) -> str:
    if result is None:
        return f"{'-':>30}"
    if result.sram_kib is None:
        return f"{'FAILED':>19} {result.seconds:>9.2f}s"
    flag = "" if result.within(budget_bytes) else " OVER"
    return f"{result.sram_kib:>8.2f}{flag:5} {result.cycles:>11.0f} {result.seconds:>5.2f}s"


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--zoo", default=str(HERE.parent / "tests" / "data"))
    parser.add_argument("--vela", default=None, help="vela executable in a separate venv")
    parser.add_argument("--model", action="append", default=None)
    parser.add_argument("--budget", type=int, default=262144, help="arena cache size in bytes")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent / "src"))

    models = sorted(Path(args.zoo).glob("*.tflite"))
    if args.model:
        models = [m for m in models if m.stem in args.model]
    budget = args.budget
    print(f"budget {budget} B ({budget / 1024:.0f} KiB), {OPTIONS}")
    print(f"{'model':24} {'npuplan KiB':>13} {'cycles':>11} {'time':>6} | {'vela legacy KiB':>13} {'cycles':>11} {'time':>6}"
          f" | {'vela default KiB':>13} {'cycles':>11} {'time':>6}")
    ratios: list[float] = []
    errors: list[str] = []
    planned = 0
    for model in models:
        ours = run_ours(model, budget)
        legacy = run_vela(args.vela, model, budget, legacy=True) if args.vela else None
        default = run_vela(args.vela, model, budget, legacy=False) if args.vela else None
        print(f"{model.stem:24} {cell(ours, budget)} | {cell(legacy, budget)} | {cell(default, budget)}", flush=True)
        if ours.error:
            errors.append(f"{model.stem}: {ours.error}")
        planned += ours.within(budget)
        fitting = [r.cycles for r in (legacy, default) if r is not None and r.within(budget) and r.cycles]
        if ours.within(budget) and ours.cycles and fitting:
            ratios.append(ours.cycles / min(fitting))
    print(f"\nnpuplan plans within budget: {planned}/{len(models)}")
    for line in errors:
        print(f"  error  {line}")
    if ratios:
        print(f"geomean cycles_total npuplan / faster in-budget Vela core: {geomean(ratios):.4f} over {len(ratios)} models")


if __name__ == "__main__":
    main()
