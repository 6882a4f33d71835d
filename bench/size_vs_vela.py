"""Size mode: npuplan's sram_memory_used against the better of Vela 5.2.0's two cores, per network.

Usage:
  python bench/size_vs_vela.py [--zoo DIR ...] [--scenario NAME ...] [--model NAME ...]
                               [--vela PATH] [--cache DIR] [--jobs N] [--worst N]

Scenarios (all ``--optimise Size``): ``u55_64_deep_shared_size`` (ethos-u55-64,
Ethos_U55_Deep_Embedded, Shared_Sram: the public one) and ``u65_256_highend_dedicated_size``
(ethos-u65-256, Ethos_U65_High_End, Dedicated_Sram) by default; the eighth zoo's Size configs
(``bench/scenarios.py`` ZOO8: u55-256 HE Shared, U65-256 HE Sram_Only, U65-512 Client-Server
Dedicated 64 KiB) when named with ``--scenario``. Vela's figures come from
``bench/reference/*_vela_5.2.0.jsonl`` where a record for the same model and scenario exists,
else from running ``--vela`` (legacy: ``--debug-force-legacy-core``; default) once per model,
scenario and core, its summary row cached as JSON under ``--cache`` (Vela is slow). npuplan plans
in this process with this tree's ``src``.

Prints per network and scenario: npuplan's, Vela legacy's and Vela default's sram_memory_used (KiB)
and cycles_total; ``*`` marks npuplan above the better Vela core (the smaller of the two SRAM figures
of the cores that planned). Then per scenario the count above, the count compared, and the worst
rows by npuplan over the better Vela. A row above is ``c`` rather than ``*`` when every Vela core below
npuplan ran more operators on the CPU than npuplan (Vela's sram_memory_used then leaves out the
tensors of those operators: a different partition, not a smaller plan of the same work).
Asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import glob
import hashlib
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from scenarios import SCENARIOS, ZOO8, cli_flags

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.api import plan  # noqa: E402
from npuplan.errors import NpuplanError  # noqa: E402
from npuplan.report import build_report  # noqa: E402
from npuplan.report.summary import summary_row  # noqa: E402

SIZE_SCENARIOS: dict[str, dict[str, str]] = {
    "u55_64_deep_shared_size": SCENARIOS["u55_64_deep_shared_size"],
    "u65_256_highend_dedicated_size": dict(accelerator_config="ethos-u65-256", system_config="Ethos_U65_High_End",
                                           memory_mode="Dedicated_Sram", optimise="Size"),
}
DEFAULT_SCENARIOS = tuple(SIZE_SCENARIOS)
SIZE_SCENARIOS.update({name: options for name, options in ZOO8.items() if options["optimise"] == "Size"})
ZOOS = (Path("/work/zoo"), Path("/work/zoo2"), Path("/work/zoo3"), Path("/work/shared/models"))
CORES = ("legacy", "default")
CORE_ALIASES = {"regor": "default"}  # the public reference names the default core by its engine
CPU_KEY = "cpu_operators"  # the CPU operator count Vela prints, kept beside its summary row
REFERENCES = sorted(HERE.glob("reference/*_vela_5.2.0.jsonl"))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def load_references() -> dict[tuple[str, str, str], dict]:
    """(model, scenario, core) -> the cached summary row (runs that succeeded only)."""
    found: dict[tuple[str, str, str], dict] = {}
    for path in REFERENCES:
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("rc") == 0 and "summary" in rec:
                core = CORE_ALIASES.get(rec["core"], rec["core"])
                cpu = rec.get("CPU operators")
                found[(rec["model"], rec["scenario"], core)] = {
                    **rec["summary"], CPU_KEY: None if cpu in (None, "") else int(cpu)}
    return found


def run_vela(vela: str, cache: Path, model: Path, scenario: str, core: str) -> dict | None:
    """Vela's summary row for one run, from ``cache`` or by running it; None when Vela fails."""
    target = cache / f"{model.stem}_{sha256(model)}_{scenario}_{core}.json"
    if target.exists() and (cached := json.loads(target.read_text())).get(CPU_KEY) is not None:
        return cached.get("summary")  # a run Vela failed caches an empty summary
    cpu = None
    with tempfile.TemporaryDirectory() as out:
        cmd = [vela, str(model), "--output-dir", out, *cli_flags(SIZE_SCENARIOS[scenario])]
        if core == "legacy":
            cmd.append("--debug-force-legacy-core")
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            cpu = next((int(line.split("=")[1].split()[0]) for line in done.stdout.splitlines()
                        if line.startswith("CPU operators") and "=" in line), None)
        except subprocess.TimeoutExpired:
            pass
        summaries = glob.glob(f"{out}/*_summary_*.csv")
        row = {}
        if summaries:
            with open(summaries[0]) as f:
                rows = list(csv.reader(f))
            row = dict(zip(rows[0], rows[1]), **{CPU_KEY: cpu})
    cache.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({CPU_KEY: -1 if cpu is None else cpu, "summary": row or None}))
    return row or None


def ours(model: Path, scenario: str) -> dict:
    """npuplan's sram_memory_used (KiB) and cycles_total, or its one-line error."""
    try:
        row = summary_row(build_report(plan(model, **SIZE_SCENARIOS[scenario])))
    except NpuplanError as error:
        return {"error": str(error).splitlines()[0]}
    return {"sram": float(row["sram_memory_used"]), "cycles": float(row["cycles_total"]),
            "cpu": int(row["cpu_operators"])}


def figure(row: dict | None, key: str) -> float | None:
    return None if not row or key not in row else float(row[key])


def fmt(value: float | None, digits: int = 1) -> str:
    return "x" if value is None else f"{value:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", type=Path, nargs="*", default=list(ZOOS))
    parser.add_argument("--scenario", nargs="*", choices=list(SIZE_SCENARIOS), default=list(DEFAULT_SCENARIOS))
    parser.add_argument("--model", nargs="*")
    parser.add_argument("--vela", default="/work/velavenv/bin/vela")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/size_vs_vela"))
    parser.add_argument("--jobs", type=int, default=1, help="Vela runs in parallel")
    parser.add_argument("--worst", type=int, default=10)
    parser.add_argument("--vela-only", action="store_true", help="fill the Vela cache and stop")
    args = parser.parse_args()
    models = [m for zoo in args.zoo for m in sorted(zoo.glob("*.tflite")) if not args.model or m.stem in args.model]
    refs = load_references()
    jobs = [(m, s, c) for m in models for s in args.scenario for c in CORES if (m.stem, s, c) not in refs]
    with ThreadPoolExecutor(args.jobs) as pool:
        ran = dict(zip(jobs, pool.map(lambda j: run_vela(args.vela, args.cache, *j), jobs)))
    if args.vela_only:
        print(f"{len(jobs)} Vela runs cached under {args.cache}")
        return
    for scenario in args.scenario:
        report(scenario, models, refs, ran, args.worst)


def report(scenario: str, models: list[Path], refs: dict, ran: dict, worst: int) -> None:
    """One scenario's table, its counts and its worst rows."""
    print(f"## {scenario}: {' '.join(cli_flags(SIZE_SCENARIOS[scenario]))}")
    print(f"{'model':<32} {'ours KiB':>9} {'legacy':>9} {'default':>9} {'ours/best':>9}   "
          f"{'ours cyc':>10} {'legacy cyc':>10} {'default cyc':>11}  cpu o/l/d")
    above, moved, compared, ratios, errors = 0, 0, 0, [], []
    for model in models:
        mine = ours(model, scenario)
        vela = {c: refs.get((model.stem, scenario, c)) or ran.get((model, scenario, c)) for c in CORES}
        srams = {c: s for c in CORES if (s := figure(vela[c], "sram_memory_used")) is not None}
        best = min(srams.values()) if srams else None
        ratio = None if "sram" not in mine or best is None else (
            mine["sram"] / best if best else (1.0 if mine["sram"] == 0 else float("inf")))
        flag = ""
        if "sram" in mine and best is not None:
            compared += 1
            if mine["sram"] > best + 1e-9:
                below = [c for c, s in srams.items() if s < mine["sram"]]
                # "c": every core below us ran more operators on the CPU (their SRAM counts less work)
                if all(((vela[c] or {}).get(CPU_KEY) or 0) > mine["cpu"] for c in below):
                    moved, flag = moved + 1, "c"
                else:
                    above, flag = above + 1, "*"
            if ratio is not None:
                ratios.append((ratio, flag, model.stem, mine["sram"], best))
        if "error" in mine:
            errors.append(f"{model.stem}: {mine['error']}")
        cpus = "/".join(fmt(c if c is None else float(c), 0) for c in
                        (mine.get("cpu"), *((vela[c] or {}).get(CPU_KEY) for c in CORES)))
        print(f"{model.stem:<32} {fmt(mine.get('sram')):>9} {fmt(figure(vela['legacy'], 'sram_memory_used')):>9} "
              f"{fmt(figure(vela['default'], 'sram_memory_used')):>9} {fmt(ratio, 3):>9}{flag:1}  "
              f"{fmt(mine.get('cycles'), 0):>10} {fmt(figure(vela['legacy'], 'cycles_total'), 0):>10} "
              f"{fmt(figure(vela['default'], 'cycles_total'), 0):>11}  {cpus}", flush=True)
    print(f"\n{scenario}: npuplan above the better Vela core on {above + moved} of {compared} networks compared "
          f"({len(models)} networks, {len(errors)} npuplan errors): {above} with the same or more operators on "
          f"the CPU (*), {moved} where the Vela core below ran more operators on the CPU (c)")
    for error in errors:
        print(f"  error {error}")
    print(f"worst {worst} (ours / better Vela, KiB):")
    for ratio, flag, name, mine_kib, best_kib in sorted(ratios, reverse=True)[:worst]:
        print(f"  {name:<32} {ratio:6.3f}{flag:1} {mine_kib:9.1f} / {best_kib:9.1f}")
    print()

if __name__ == "__main__":
    main()
