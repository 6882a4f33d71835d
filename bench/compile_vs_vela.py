"""Compile time of npuplan against Vela 5.2.0's default (C++) core, side by side, over every
network of the zoos and the public models (issue 26's target). The one compile-time bench.

Per network and scenario, three fresh processes, as a user would run them, each writing its
files to a temporary directory:

- ``python -m npuplan.cli plan MODEL <scenario flags>`` (plan and reports),
- the same with ``--emit-tflite`` (also writes the deployable file),
- ``vela MODEL <scenario flags>`` (Vela's default core; it always writes its file).

Compile time is the process's CPU seconds (user + system, interpreter start-up and imports
included, read from the child's own rusage), which other load on the machine does not inflate as
it does wall-clock time. With ``--repeat N`` each figure is the minimum over N runs. npuplan runs
with its bytecode cached under a temporary PYTHONPYCACHEPREFIX (one untimed warm-up run fills it),
as an installed npuplan would run; Vela's venv was byte-compiled by pip. The environment is
otherwise passed on as it is (the ``npuplan`` program asks OpenBLAS for one thread when unset).

Scenarios: Performance (ethos-u55-128, Ethos_U55_High_End_Embedded, Shared_Sram) and Size
(ethos-u55-64, Ethos_U55_Deep_Embedded, Shared_Sram, --optimise Size), from bench/scenarios.py.

Prints per scenario each network's seconds and the ratios npuplan/Vela (plan, and plan with
--emit-tflite), then per column the geomean, the count above 1x and 2x and the worst networks;
then the same over both scenarios. A run that fails (npuplan's exit 2 when nothing fits, Vela's
crash) is shown with its exit code and left out of the ratios. Asserts nothing. Every network by
default; ``--limit N`` spreads N of them over the zoos for a quick run, ``--legacy`` times Vela's
legacy Python core instead.

Usage: python bench/compile_vs_vela.py [--vela PATH] [--python PATH] [--zoo DIR ...] [--model NAME ...]
                                       [--limit N] [--scenario NAME ...] [--src DIR] [--repeat N] [--jobs N]
                                       [--legacy]
Results: python bench/record.py compile_vs_vela -- python bench/compile_vs_vela.py [options]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from scenarios import SCENARIOS, cli_flags

HERE = Path(__file__).resolve().parent
ZOOS = ("/work/zoo", "/work/zoo2", "/work/zoo3", "/work/shared/models")
VELA = "/work/velavenv/bin/vela"
DEFAULT_SCENARIOS = ("u55_128_highend_shared_perf", "u55_64_deep_shared_size")
COLUMNS = ("plan", "emit")


@dataclass(frozen=True, slots=True)
class Run:
    """One process's CPU seconds and exit status."""

    cpu_seconds: float
    exit_status: int

    @property
    def ok(self) -> bool:
        return self.exit_status == 0

    def cell(self) -> str:
        return f"{self.cpu_seconds:7.2f}" if self.ok else f"{self.cpu_seconds:4.1f}:{self.exit_status:<2}"


def geomean(values: list[float]) -> float:
    kept = [v for v in values if v > 0 and not math.isnan(v)]
    return math.exp(sum(math.log(v) for v in kept) / len(kept)) if kept else math.nan


def ours_env(src: Path, pycache: Path) -> dict[str, str]:
    """This environment with npuplan's source tree first on the path and its bytecode cached."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(src), "PYTHONPYCACHEPREFIX": str(pycache)}


def run_cpu(cmd: list[str], env: dict[str, str] | None = None) -> Run:
    """CPU seconds (user + system) of ``cmd`` run to completion in a fresh process (its own rusage,
    so runs in parallel threads do not mix), in a fresh temporary output directory."""
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.Popen([*cmd, "--output-dir", out], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    return Run(usage.ru_utime + usage.ru_stime, proc.returncode)


def least(cmd: list[str], repeat: int, env: dict[str, str] | None = None) -> Run:
    runs = [run_cpu(cmd, env) for _ in range(repeat)]
    return min(runs, key=lambda run: (not run.ok, run.cpu_seconds))


def pick_models(zoos: list[str], names: list[str] | None, limit: int | None) -> list[Path]:
    """Every ``*.tflite`` of ``zoos`` (sorted by zoo then name), the ``names`` given, or ``limit``
    of them spread evenly over the list."""
    models = [m for zoo in zoos for m in sorted(Path(zoo).glob("*.tflite"))]
    if names:
        models = [m for m in models if m.stem in names or m.name in names]
    if limit is not None and limit < len(models):
        step = len(models) / limit
        models = [models[int(i * step)] for i in range(limit)]
    return models


@dataclass(frozen=True, slots=True)
class Row:
    scenario: str
    model: Path
    plan: Run
    emit: Run
    vela: Run

    def ratio(self, column: str) -> float | None:
        ours = getattr(self, column)
        return ours.cpu_seconds / self.vela.cpu_seconds if ours.ok and self.vela.ok else None


def time_model(scenario: str, model: Path, args: argparse.Namespace, env: dict[str, str]) -> Row:
    flags = cli_flags(SCENARIOS[scenario])
    plan_cmd = [args.python, "-m", "npuplan.cli", "plan", str(model), *flags, "--quiet"]
    return Row(scenario, model, least(plan_cmd, args.repeat, env), least([*plan_cmd, "--emit-tflite"], args.repeat, env),
               least([args.vela, str(model), *flags, *args.vela_flags], args.repeat))


def _label(model: Path) -> str:
    return f"{model.parent.name}/{model.stem}"[:40]


def print_row(row: Row) -> None:
    ratios = [row.ratio(c) for c in COLUMNS]
    cells = " ".join(f"{r:7.2f}x" if r is not None else f"{'-':>8}" for r in ratios)
    print(f"{_label(row.model):40} {row.plan.cell()} {row.emit.cell()} {row.vela.cell()} {cells}", flush=True)


def summary(title: str, rows: list[Row], worst: int) -> None:
    print(f"\n-- {title}: {len(rows)} runs")
    for column in COLUMNS:
        pairs = [(r, x) for r in rows if (x := r.ratio(column)) is not None]
        ratios = [x for _, x in pairs]
        failed = len(rows) - len(pairs)
        above1 = sum(x > 1 for x in ratios)
        above2 = sum(x > 2 for x in ratios)
        print(f"{column:5} npuplan/vela geomean {geomean(ratios):.3f} over {len(ratios)}, above 1x {above1}, "
              f"above 2x {above2}, max {max(ratios, default=math.nan):.2f}x" + (f", {failed} failed" if failed else ""))
        top = sorted(pairs, key=lambda p: -p[1])[:worst]
        if top:
            print("      worst: " + ", ".join(f"{_label(r.model)} ({r.scenario.rsplit('_', 1)[-1]}) {x:.1f}x"
                                           for r, x in top))


def scenario_rows(scenario: str, models: list[Path], args: argparse.Namespace, env: dict[str, str]) -> list[Row]:
    print(f"\n== {scenario}  (CPU seconds, fresh process each, min of {args.repeat})")
    print(f"{'network':40} {'plan':>7} {'emit':>7} {'vela':>7} {'plan/v':>8} {'emit/v':>8}")
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(time_model, scenario, model, args, env) for model in models]
        rows = []
        for future in futures:
            rows.append(future.result())
            print_row(rows[-1])
    summary(scenario, rows, args.worst)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vela", default=VELA, help="vela executable in its own venv")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs npuplan")
    parser.add_argument("--src", default=str(HERE.parent / "src"), help="npuplan source tree to time")
    parser.add_argument("--zoo", action="append", default=None, help=f"zoo directories (default: {', '.join(ZOOS)})")
    parser.add_argument("--model", action="append", default=None, help="only these networks (stem)")
    parser.add_argument("--limit", type=int, default=None, help="only N networks, spread over the zoos")
    parser.add_argument("--scenario", action="append", choices=list(SCENARIOS), default=None)
    parser.add_argument("--repeat", type=int, default=1, help="runs per figure; the minimum is kept")
    parser.add_argument("--jobs", type=int, default=1, help="networks timed at once (CPU time is per process)")
    parser.add_argument("--worst", type=int, default=6, help="worst networks named per column")
    parser.add_argument("--legacy", action="store_true", help="time Vela's legacy Python core instead")
    args = parser.parse_args()
    args.vela_flags = ["--debug-force-legacy-core"] if args.legacy else []

    models = pick_models(args.zoo or list(ZOOS), args.model, args.limit)
    if not models:
        parser.error("no network matches")
    with tempfile.TemporaryDirectory() as cache:
        env = ours_env(Path(args.src).resolve(), Path(cache))
        run_cpu([args.python, "-m", "npuplan.cli", "plan", str(models[0]), "--quiet", "--emit-tflite"], env)  # warm-up
        starts = {"npuplan plan --help": [args.python, "-m", "npuplan.cli", "plan", "--help"],
                  "vela --version": [args.vela, "--version"]}
        print("start-up CPU s (min of 3): " + ", ".join(
            f"{name} {min(run_cpu(cmd, env).cpu_seconds for _ in range(3)):.3f}" for name, cmd in starts.items()))
        everything: list[Row] = []
        for scenario in args.scenario or list(DEFAULT_SCENARIOS):
            everything += scenario_rows(scenario, models, args, env)
    summary("all scenarios", everything, args.worst)


if __name__ == "__main__":
    main()
