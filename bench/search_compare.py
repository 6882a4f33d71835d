"""Compare the scheduler searches (cascade, pareto, auto) on every model and scenario.

Each plan runs in its own ``npuplan plan`` process, as a user would run it; compile time is that
process's CPU seconds (user + system, start-up included), which other load on the machine does not
inflate as it does wall-clock time. Prints, per model:
cycles_total, SRAM peak (KiB) and compile seconds of each search, which search auto kept and which
search is faster; then per scenario the geomean cycles of pareto/cascade and auto/cascade and the
total compile time of each search.

Usage: python bench/search_compare.py [MODEL_DIR] [--scenario NAME ...]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from scenarios import BUDGET_256K, cli_flags
from scenarios import SCENARIOS as PUBLIC

SCENARIOS = {name: cli_flags(options) for name, options in {**PUBLIC, **BUDGET_256K}.items()}

SEARCHES = ("cascade", "pareto", "auto")
# this tree's npuplan, whatever is installed
ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}


def run(model: Path, flags: list[str], search: str) -> dict[str, object]:
    """Plan ``model`` in a fresh process; cycles, SRAM KiB, seconds and the search kept."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "npuplan.cli", "plan", str(model), *flags, "--search", search,
               "--quiet", "--output-dir", out]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run(cmd, capture_output=True, text=True, env=ENV)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        secs = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if proc.returncode != 0:
            return {"secs": secs, "error": proc.stderr.strip().splitlines()[-1][:60] if proc.stderr else "failed"}
        with next(Path(out).glob("*_summary_*.csv")).open() as f:
            row = next(csv.DictReader(f))
        notes = json.loads(next(Path(out).glob("*_plan.json")).read_text()).get("notes", [])
        kept = next((n.split("=", 1)[1] for n in notes if n.startswith("search=")), search)
        return {"secs": secs, "cycles": float(row["cycles_total"]), "sram_kib": float(row["sram_memory_used"]),
                "kept": kept}


def _cell(r: dict[str, object]) -> str:
    if "error" in r:
        return f"{'infeasible':>22}"
    return f"{r['cycles']:11.0f} {r['sram_kib']:7.1f} {r['secs']:4.1f}"


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def scenario_table(name: str, models: list[Path]) -> None:
    print(f"\n== {name}")
    print(f"{'model':24} " + " ".join(f"{s + ' cycles/KiB/s':>22}" for s in SEARCHES) + "  auto kept  faster")
    ratios: dict[str, list[float]] = {"pareto": [], "auto": []}
    seconds = {s: 0.0 for s in SEARCHES}
    for model in models:
        got = {s: run(model, SCENARIOS[name], s) for s in SEARCHES}
        for s in SEARCHES:
            seconds[s] += float(got[s]["secs"])  # type: ignore[arg-type]
        c, p = got["cascade"], got["pareto"]
        if "cycles" in c and "cycles" in p:
            faster = "tie" if c["cycles"] == p["cycles"] else ("pareto" if p["cycles"] < c["cycles"] else "cascade")
            ratios["pareto"].append(float(p["cycles"]) / float(c["cycles"]))  # type: ignore[arg-type]
            if "cycles" in got["auto"]:
                ratios["auto"].append(float(got["auto"]["cycles"]) / float(c["cycles"]))  # type: ignore[arg-type]
        else:
            faster = "-"
        kept = str(got["auto"].get("kept", "-"))
        print(f"{model.stem:24} " + " ".join(_cell(got[s]) for s in SEARCHES) + f"  {kept:9}  {faster}")
    print(f"geomean cycles pareto/cascade {_geomean(ratios['pareto']):.3f}, auto/cascade {_geomean(ratios['auto']):.3f}; "
          "compile s " + ", ".join(f"{s} {seconds[s]:.1f}" for s in SEARCHES)
          + f" (auto/cascade {seconds['auto'] / max(seconds['cascade'], 1e-9):.2f})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir", nargs="?", default=str(Path(__file__).resolve().parent.parent / "tests" / "data"))
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    args = parser.parse_args()
    model_dir = Path(args.model_dir)
    if not model_dir.exists():
        model_dir = Path(__file__).resolve().parent.parent / "tests" / "data"
    models = sorted(model_dir.glob("*.tflite"))
    for name in args.scenario or SCENARIOS:
        scenario_table(name, models)


if __name__ == "__main__":
    main()
