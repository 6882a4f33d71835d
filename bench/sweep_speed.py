"""Sweep speed: one ``npuplan sweep`` against a fresh ``npuplan plan`` per point, side by side.

The points: every model in ``--models`` (default tests/data/*.tflite, the bundled
models) x 3 accelerators (ethos-u55-64, ethos-u55-256, ethos-u65-256) x 2 optimise goals x 3
budgets (128k, 256k, 512k), in the default system config and memory mode of each accelerator.

Measured, each as fresh processes of ``python -m npuplan`` from ``--src`` (bytecode cached under a
temporary PYTHONPYCACHEPREFIX, filled by an untimed warm-up, as an installed npuplan runs):
- ``plan``: one ``npuplan plan`` per point (what a script looping over Vela-style runs does);
- ``plan() in one process``: ``npuplan.plan()`` and the summary row per point in one process, no
  sharing between points (separates what the sweep saves by sharing from process start-up);
- ``sweep``: ``npuplan sweep`` over all points (``--jobs 1``), into a fresh output directory;
- ``sweep --jobs 2``: the same with two worker processes;
- ``resume``: the ``--jobs 1`` sweep run again over its own CSV (nothing left to plan).
Each figure is CPU seconds (user + system of the process and its children) and wall seconds;
``--repeat N`` keeps the minimum of N runs. It also checks that every sweep row's summary cells
equal the summary CSV the single plan wrote, and that --jobs 2 wrote the same CSV. Asserts nothing.

Usage: python bench/sweep_speed.py [--src DIR] [--models M.tflite ...] [--repeat N] [--limit N]
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ACCELERATORS = ("ethos-u55-64", "ethos-u55-256", "ethos-u65-256")
OPTIMISE = ("Performance", "Size")
BUDGETS = ("128k", "256k", "512k")
SIZES = {"128k": "131072", "256k": "262144", "512k": "524288"}


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """CPU seconds (children's user + system), wall seconds and exit status of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    status = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False).returncode
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, status


def npuplan_env(src: Path, pycache: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(src), PYTHONPYCACHEPREFIX=str(pycache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def plans(models: list[Path], env: dict[str, str], out: Path) -> tuple[float, float, dict[tuple[str, ...], Path | None]]:
    """One fresh ``npuplan plan`` per point: CPU and wall seconds summed, and each point's summary CSV."""
    cpu = wall = 0.0
    summaries: dict[tuple[str, ...], Path | None] = {}
    for index, (model, accel, goal, budget) in enumerate(itertools.product(models, ACCELERATORS, OPTIMISE, BUDGETS)):
        where = out / f"p{index}"
        c, w, status = timed([sys.executable, "-m", "npuplan", "plan", str(model), "--accelerator-config", accel,
                              "--optimise", goal, "--arena-cache-size", SIZES[budget], "--output-dir", str(where),
                              "--quiet"], env)
        cpu, wall = cpu + c, wall + w
        found = list(where.glob("*_summary_*.csv")) if status == 0 else []
        summaries[(str(model), accel, goal, SIZES[budget])] = found[0] if found else None
    return cpu, wall, summaries


IN_PROCESS = """
import itertools, sys
import npuplan
from npuplan.report import build_report
from npuplan.report.summary import summary_row
from npuplan.errors import InfeasiblePlan
models, accels, goals, sizes = (sys.argv[i].split(",") for i in range(1, 5))
for model, accel, goal, size in itertools.product(models, accels, goals, sizes):
    try:
        summary_row(build_report(npuplan.plan(model, accelerator_config=accel, optimise=goal, arena_cache_size=size)))
    except InfeasiblePlan:
        pass
"""


def in_process_cmd(models: list[Path]) -> list[str]:
    return [sys.executable, "-c", IN_PROCESS, ",".join(map(str, models)), ",".join(ACCELERATORS), ",".join(OPTIMISE),
            ",".join(SIZES[b] for b in BUDGETS)]


def sweep_cmd(models: list[Path], out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "npuplan", "sweep", *map(str, models), "--accelerator-config", ",".join(ACCELERATORS),
            "--optimise", ",".join(OPTIMISE), "--arena-cache-size", ",".join(BUDGETS), "--output-dir", str(out),
            "--quiet", *extra]


def mismatches(sweep_csv: Path, summaries: dict[tuple[str, ...], Path | None]) -> tuple[int, int]:
    """How many sweep rows differ from their single plan (summary cells, or ok against a failure)."""
    with sweep_csv.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    bad = 0
    for row in rows:
        summary = summaries[(row["model"], row["option_accelerator_config"], row["option_optimise"],
                             row["option_arena_cache_size_bytes"])]
        if summary is None:
            bad += row["status"] == "ok"
            continue
        with summary.open(newline="") as handle:
            (expected,) = list(csv.DictReader(handle))
        bad += any(row[c] != v for c, v in expected.items())
    return bad, len(rows)


def best(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return min(r[0] for r in runs), min(r[1] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", default=str(HERE.parent / "src"), help="npuplan source tree to time")
    parser.add_argument("--models", nargs="*", default=sorted(map(str, (HERE.parent / "tests" / "data").glob("*.tflite"))))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--issue-grid", action="store_true",
                        help="issue 14's points instead: 4 accelerators (u55-64/128/256, u65-256) x 6 budgets "
                             "(64k..2M), Performance only")
    args = parser.parse_args()
    if args.issue_grid:
        global ACCELERATORS, OPTIMISE, BUDGETS, SIZES
        ACCELERATORS = ("ethos-u55-64", "ethos-u55-128", "ethos-u55-256", "ethos-u65-256")
        OPTIMISE = ("Performance",)
        BUDGETS = ("64k", "128k", "256k", "512k", "1M", "2M")
        SIZES = {b: str(int(b[:-1]) * (1024 if b[-1] == "k" else 1 << 20)) for b in BUDGETS}
    models = [Path(m).resolve() for m in args.models]
    points = len(models) * len(ACCELERATORS) * len(OPTIMISE) * len(BUDGETS)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = npuplan_env(Path(args.src).resolve(), root / "pycache")
        timed(sweep_cmd(models[:1], root / "warm"), env)  # fill the bytecode cache, untimed
        plan_runs, inproc_runs, sweep_runs, jobs_runs, resume_runs = [], [], [], [], []
        summaries: dict[tuple[str, ...], Path | None] = {}
        for attempt in range(args.repeat):
            cpu, wall, summaries = plans(models, env, root / f"plans{attempt}")
            plan_runs.append((cpu, wall))
            inproc_runs.append(timed(in_process_cmd(models), env)[:2])
            out = root / f"sweep{attempt}"
            sweep_runs.append(timed(sweep_cmd(models, out), env)[:2])
            resume_runs.append(timed(sweep_cmd(models, out), env)[:2])
            jobs_runs.append(timed(sweep_cmd(models, root / f"jobs{attempt}", "--jobs", "2"), env)[:2])
        bad, rows = mismatches(root / "sweep0" / "sweep.csv", summaries)
        same = (root / "sweep0" / "sweep.csv").read_text() == (root / "jobs0" / "sweep.csv").read_text()
        with (root / "sweep0" / "sweep.csv").open(newline="") as handle:
            statuses = [r["status"] for r in csv.DictReader(handle)]
    print(f"{len(models)} models x {len(ACCELERATORS)} accelerators x {len(OPTIMISE)} goals x {len(BUDGETS)} budgets = "
          f"{points} points ({statuses.count('ok')} ok, {statuses.count('infeasible')} infeasible, "
          f"{statuses.count('invalid')} invalid, {statuses.count('error')} error); minimum of {args.repeat} run(s)")
    plan_cpu, plan_wall = best(plan_runs)
    print(f"{'':28} {'CPU s':>8} {'wall s':>8} {'CPU / plans':>12} {'wall / plans':>13}")
    for label, (cpu, wall) in (("fresh npuplan plan x points", (plan_cpu, plan_wall)),
                               ("plan() in one process", best(inproc_runs)), ("sweep --jobs 1", best(sweep_runs)),
                               ("sweep --jobs 2", best(jobs_runs)), ("resume (nothing to plan)", best(resume_runs))):
        print(f"{label:28} {cpu:8.1f} {wall:8.1f} {cpu / plan_cpu:12.3f} {wall / plan_wall:13.3f}")
    print(f"sweep rows differing from their single plan: {bad} of {rows}; --jobs 2 CSV identical: {same}")


if __name__ == "__main__":
    main()
