"""Compile time of npuplan against Vela 5.2.0's legacy core, side by side (issue 3's target).

Both sides run as fresh processes, as a user would run them, each writing its reports to a
temporary directory and printing its summary to a pipe: ``python -m npuplan.cli plan MODEL
<scenario flags>`` and ``vela MODEL --debug-force-legacy-core <scenario flags>``. Compile time
is the process's CPU seconds (user + system, interpreter start-up and imports included), which
other load on the machine does not inflate as it does wall-clock time. With ``--repeat N`` each
figure is the minimum over N runs. The environment is passed on as it is, so exporting e.g.
OPENBLAS_NUM_THREADS=1 applies to both tools (npuplan's program sets it for itself when unset).

Bytecode: Vela runs from its venv, which pip byte-compiled at install; this machine sets
PYTHONDONTWRITEBYTECODE, so a source tree would be recompiled on every run. Each npuplan tree is
therefore run with its bytecode cached under a temporary PYTHONPYCACHEPREFIX (one untimed warm-up
run fills it), as an installed npuplan would run.

The start-up line times each tool's ``--version`` the same way, for reference (Vela's imports its
whole compiler; npuplan's only the command line).

Several npuplan source trees can be timed in the same run (``--src before=/work/main/src
--src after=src``), so a speed-up is measured side by side rather than against an old figure.

Prints per scenario: each model's seconds (npuplan per source tree, Vela) and ratio, then the
geomean of ours/Vela per scenario and over all scenarios. Asserts nothing.

Interpreter: Vela runs from a venv that holds only its own dependencies. ``--python`` runs npuplan
the same way (a venv with numpy, flatbuffers, tflite and rich; npuplan itself comes from
``--src``), so that start-up hooks other packages install in a shared site-packages (``.pth``
files; this machine's certifi hook costs about 0.04 s a process) are not counted against either.

Usage: python bench/compile_time.py --vela PATH/TO/vela [--python PATH/TO/venv/python] [--zoo DIR]
                                    [--scenario NAME ...] [--model NAME ...] [--src LABEL=DIR ...]
                                    [--repeat N]
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from scenarios import BUDGET_256K, SCENARIOS, cli_flags

HERE = Path(__file__).resolve().parent
ALL_SCENARIOS = {**SCENARIOS, **BUDGET_256K}


def cpu_seconds(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int]:
    """CPU seconds (user + system) of ``cmd`` run to completion in a fresh process, and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.returncode


def ours_env(src: Path, pycache: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(src), "PYTHONPYCACHEPREFIX": str(pycache)}


def least_cpu_seconds(cmd: list[str], repeat: int, env: dict[str, str] | None = None) -> tuple[float, int]:
    """The least CPU seconds of ``repeat`` runs of ``cmd`` (``--output-dir`` a fresh temporary
    directory each) and the exit code of the last."""
    best, rc = math.inf, 0
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as out:
            secs, rc = cpu_seconds([*cmd, "--output-dir", out], env)
        best = min(best, secs)
    return best, rc


def ours_cmd(python: str, model: Path, flags: list[str]) -> list[str]:
    return [python, "-m", "npuplan.cli", "plan", str(model), *flags]


def vela_cmd(vela: str, model: Path, flags: list[str]) -> list[str]:
    return [vela, str(model), "--debug-force-legacy-core", *flags]


def start_up(cmd: list[str], repeat: int, env: dict[str, str] | None = None) -> float:
    return min(cpu_seconds(cmd, env)[0] for _ in range(max(repeat, 3)))


def _seconds(secs: float, rc: int) -> str:
    return f"{secs:8.2f}" if rc == 0 else f"{secs:5.2f}:{rc:<2}"


def geomean(values: list[float]) -> float:
    kept = [v for v in values if v > 0 and not math.isnan(v)]
    return math.exp(sum(math.log(v) for v in kept) / len(kept)) if kept else math.nan


def parse_sources(entries: list[str]) -> dict[str, Path]:
    if not entries:
        return {"ours": HERE.parent / "src"}
    sources = {}
    for entry in entries:
        label, _, path = entry.partition("=")
        sources[label] = Path(path).resolve()
    return sources


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vela", required=True, help="vela executable in a separate venv")
    parser.add_argument("--zoo", default=str(HERE.parent / "tests" / "data"))
    parser.add_argument("--scenario", action="append", choices=list(ALL_SCENARIOS))
    parser.add_argument("--model", action="append", default=None)
    parser.add_argument("--src", action="append", default=[], metavar="LABEL=DIR", help="npuplan source tree to time")
    parser.add_argument("--repeat", type=int, default=1, help="runs per figure; the minimum is kept")
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter that runs npuplan (default: this one); a venv holding only npuplan's "
                             "dependencies, as Vela's venv holds only Vela's, keeps other packages' start-up "
                             "hooks (.pth files) out of the figure")
    args = parser.parse_args()

    sources = parse_sources(args.src)
    models = sorted(Path(args.zoo).glob("*.tflite"))
    if args.model:
        models = [m for m in models if m.stem in args.model]
    with tempfile.TemporaryDirectory() as cache:
        envs = {label: ours_env(src, Path(cache) / label) for label, src in sources.items()}
        for label, env in envs.items():  # untimed: fills the bytecode cache
            cpu_seconds(ours_cmd(args.python, models[0], []) + ["--output-dir", cache], env)
        starts = {label: start_up([args.python, "-m", "npuplan.cli", "--version"], args.repeat, env)
                  for label, env in envs.items()}
        starts["vela"] = start_up([args.vela, "--version"], args.repeat)
        print("start-up CPU s (--version): " + ", ".join(f"{k} {v:.2f}" for k, v in starts.items()))
        overall: dict[str, list[float]] = {label: [] for label in sources}
        for scenario in args.scenario or list(ALL_SCENARIOS):
            for label, values in scenario_table(scenario, models, args, envs).items():
                overall[label] += values
    print("\ngeomean ours/vela over all scenarios: "
          + ", ".join(f"{label} {geomean(overall[label]):.3f}" for label in sources))


def scenario_table(
    scenario: str, models: list[Path], args: argparse.Namespace, envs: dict[str, dict[str, str]],
) -> dict[str, list[float]]:
    """Print one scenario's table; return the ratios ours/Vela per source tree. A run that fails
    (npuplan's exit 2 when nothing fits, Vela's crash) is shown with its exit code and left out
    of the ratios."""
    flags = cli_flags(ALL_SCENARIOS[scenario])
    print(f"\n== {scenario}  (CPU seconds, fresh process each)")
    print(f"{'model':24} " + " ".join(f"{label:>8}" for label in envs) + f" {'vela':>8} "
          + " ".join(f"{label + '/vela':>12}" for label in envs))
    ratios: dict[str, list[float]] = {label: [] for label in envs}
    for model in models:
        ours = {label: least_cpu_seconds(ours_cmd(args.python, model, flags), args.repeat, env) for label, env in envs.items()}
        vela, vela_rc = least_cpu_seconds(vela_cmd(args.vela, model, flags), args.repeat)
        cells = []
        for label, (secs, rc) in ours.items():
            if rc == 0 and vela_rc == 0:
                ratios[label].append(secs / vela)
            cells.append(f"{secs / vela:12.3f}" if rc == 0 and vela_rc == 0 else f"{'-':>12}")
        print(f"{model.stem:24} " + " ".join(_seconds(*ours[label]) for label in envs) + f" {_seconds(vela, vela_rc)} "
              + " ".join(cells), flush=True)
    print("geomean ours/vela: " + ", ".join(f"{label} {geomean(ratios[label]):.3f}" for label in envs))
    return ratios


if __name__ == "__main__":
    main()
