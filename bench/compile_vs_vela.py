"""Compile time of npuplan against Vela 5.2.0's default (C++) core, side by side (issue 26).

Every network of the zoos (``--zoo`` directories, default /work/zoo, /work/zoo2, /work/zoo3 and
the public /work/shared/models) is compiled in the two scenarios of issue 26, Performance
(u55-128, High_End_Embedded, Shared_Sram) and Size (u55-64, Deep_Embedded, Shared_Sram,
--optimise Size), three ways in the same run: ``npuplan plan`` (plan and reports), ``npuplan plan
--emit-tflite`` (plus the deployable file) and ``vela`` with its default core (which always writes
its file). Each figure is the CPU seconds (user + system) of a fresh process, read from that
process's own rusage (``os.wait4``), so ``--jobs N`` runs rows side by side without counting one
process's time against another; interpreter start-up and imports are included, as a user pays
them. npuplan runs with its bytecode cached (one untimed warm-up fills a temporary
PYTHONPYCACHEPREFIX), as an installed npuplan would; Vela's venv was byte-compiled at install.

Prints per scenario and network the three times and the two ratios (plan/vela, emit/vela), then
per scenario and over both the geomean of each ratio and how many networks are above 1x and 2x.
A run that fails (exit status other than 0) is shown with its status and left out of the ratios.
Asserts nothing.

Usage: python bench/compile_vs_vela.py [--vela PATH] [--python PATH] [--zoo DIR ...] [--model NAME ...]
                                       [--limit N] [--scenario perf|size ...] [--repeat N] [--jobs N]
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

from compile_time import geomean, ours_env
from scenarios import SCENARIOS, cli_flags

HERE = Path(__file__).resolve().parent
DEFAULT_ZOOS = ("/work/zoo", "/work/zoo2", "/work/zoo3", "/work/shared/models")
DEFAULT_VELA = "/work/velavenv/bin/vela"
BENCH_SCENARIOS = {"perf": "u55_128_highend_shared_perf", "size": "u55_64_deep_shared_size"}
WAYS = ("plan", "emit", "vela")


@dataclass(frozen=True, slots=True)
class Timed:
    """One figure: the least CPU seconds over the repeats and the last exit status."""

    cpu_s: float
    status: int

    @property
    def ok(self) -> bool:
        return self.status == 0


def process_cpu_seconds(cmd: list[str], env: dict[str, str] | None = None) -> Timed:
    """CPU seconds (user + system) of ``cmd`` in a fresh process, from its own rusage."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, wait_status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(wait_status)
    return Timed(usage.ru_utime + usage.ru_stime, proc.returncode)


def least(cmd: list[str], repeat: int, env: dict[str, str] | None = None) -> Timed:
    """The least CPU seconds of ``repeat`` runs, each writing to a fresh ``--output-dir``."""
    runs = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as out:
            runs.append(process_cpu_seconds([*cmd, "--output-dir", out], env))
    return Timed(min(r.cpu_s for r in runs), runs[-1].status)


def commands(model: Path, flags: list[str], python: str, vela: str) -> dict[str, list[str]]:
    plan = [python, "-m", "npuplan.cli", "plan", str(model), *flags]
    return {"plan": plan, "emit": [*plan, "--emit-tflite"], "vela": [vela, str(model), *flags]}


def time_row(model: Path, flags: list[str], args: argparse.Namespace, env: dict[str, str]) -> dict[str, Timed]:
    cmds = commands(model, flags, args.python, args.vela)
    return {way: least(cmd, args.repeat, None if way == "vela" else env) for way, cmd in cmds.items()}


def ratios(row: dict[str, Timed]) -> dict[str, float]:
    """plan/vela and emit/vela; NaN where either side failed."""
    vela = row["vela"]
    return {way: row[way].cpu_s / vela.cpu_s if row[way].ok and vela.ok and vela.cpu_s > 0 else math.nan
            for way in ("plan", "emit")}


def _cell(timed: Timed) -> str:
    return f"{timed.cpu_s:7.2f}" if timed.ok else f"{timed.cpu_s:4.1f}:{timed.status:<2}"


def _ratio(value: float) -> str:
    return f"{value:6.2f}x" if not math.isnan(value) else f"{'-':>7}"


def summary(label: str, values: dict[str, list[float]]) -> str:
    parts = []
    for way, kept in values.items():
        kept = [v for v in kept if not math.isnan(v)]
        above1, above2 = sum(v > 1 for v in kept), sum(v > 2 for v in kept)
        parts.append(f"{way}/vela geomean {geomean(kept):.2f}x, >1x {above1}/{len(kept)}, >2x {above2}/{len(kept)}")
    return f"{label}: " + "; ".join(parts)


def scenario_table(scenario: str, models: list[Path], args: argparse.Namespace,
                   env: dict[str, str]) -> dict[str, list[float]]:
    """Print one scenario's table; return its ratios per way."""
    flags = cli_flags(SCENARIOS[BENCH_SCENARIOS[scenario]])
    print(f"\n== {scenario}: {' '.join(flags)}  (CPU s, fresh process each)")
    print(f"{'network':34} {'plan':>7} {'emit':>7} {'vela':>7} {'plan/v':>7} {'emit/v':>7}", flush=True)
    found: dict[str, list[float]] = {"plan": [], "emit": []}
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = pool.map(lambda m: (m, time_row(m, flags, args, env)), models)
        for model, row in rows:
            ratio = ratios(row)
            for way, value in ratio.items():
                found[way].append(value)
            name = f"{model.parent.name}/{model.stem}"
            print(f"{name[:34]:34} " + " ".join(_cell(row[w]) for w in WAYS) + " "
                  + " ".join(_ratio(ratio[w]) for w in ("plan", "emit")), flush=True)
    print(summary(scenario, found))
    return found


def find_models(zoos: list[str], names: list[str] | None, limit: int | None) -> list[Path]:
    models = [m for zoo in zoos for m in sorted(Path(zoo).glob("*.tflite"))]
    if names:
        models = [m for m in models if m.stem in names]
    return models[:limit] if limit else models


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vela", default=DEFAULT_VELA, help="Vela 5.2.0 executable (its default core is timed)")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs npuplan")
    parser.add_argument("--src", default=str(HERE.parent / "src"), help="npuplan source tree to time")
    parser.add_argument("--zoo", action="append", default=None, help="directory of .tflite networks (repeatable)")
    parser.add_argument("--model", action="append", default=None, help="only networks of this name (repeatable)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N networks")
    parser.add_argument("--scenario", action="append", choices=list(BENCH_SCENARIOS), default=None)
    parser.add_argument("--repeat", type=int, default=1, help="runs per figure; the least is kept")
    parser.add_argument("--jobs", type=int, default=1, help="networks timed at once")
    args = parser.parse_args()
    models = find_models(args.zoo or list(DEFAULT_ZOOS), args.model, args.limit)
    if not models:
        parser.error("no networks found")
    overall: dict[str, list[float]] = {"plan": [], "emit": []}
    with tempfile.TemporaryDirectory() as cache:
        env = ours_env(Path(args.src).resolve(), Path(cache) / "pyc")
        least(commands(models[0], [], args.python, args.vela)["emit"], 1, env)  # untimed: fills the bytecode cache
        help_s = min(process_cpu_seconds([args.python, "-m", "npuplan.cli", "plan", "--help"], env).cpu_s
                     for _ in range(3))
        print(f"{len(models)} networks; start-up: npuplan plan --help {help_s:.3f} CPU s (least of 3)")
        for scenario in args.scenario or list(BENCH_SCENARIOS):
            for way, values in scenario_table(scenario, models, args, env).items():
                overall[way] += values
    print("\n" + summary("all scenarios", overall))
    return 0


if __name__ == "__main__":
    sys.exit(main())
