"""npuplan against both Vela 5.2.0 cores on hardware configs beyond the benchmark scenarios.

Usage:
  python bench/config_sweep.py [--vela PATH/TO/vela] [--model NAME ...] [--scenario NAME ...]
                               [--no-validate] [--rows] [--vela-comparable]
                               [--set sweep|zoo8] [--models DIR] [--cache FILE]

``--set zoo8 --models /tmp/zoo8 --cache FILE`` runs the eighth zoo's configs (bench/scenarios.py
ZOO8, bench/zoo8_configs.ini) over a directory of networks, with Vela's records in FILE.

Sixteen scenarios chosen to cover (not multiply out) every accelerator (ethos-u55-32/64/128/256,
ethos-u65-256/512), the four system configs of Vela's vela.ini (U55 High_End_Embedded and
Deep_Embedded, U65 High_End and Client_Server), every memory mode where valid (Shared_Sram,
Sram_Only, Dedicated_Sram, Dedicated_Sram_256KB/384KB), both --optimise goals, arena budgets
of 64, 128 and 512 KiB, and two user-defined system configs and memory modes from
``bench/config_sweep.ini`` (other clocks, bandwidths, latencies, burst lengths, ports used, an
inherited mode), given to both tools with ``--config``. Each accelerator, system config, memory
mode and goal appears at least twice, in different company.

Networks: the nine public models and fifteen from the two zoos (CNN, residual, inception,
dense, depthwise/SE, grouped, shuffle, U-Net, YOLO, MLP-mixer, transformer, LSTM, 1-D audio,
TCN, int16).

With ``--vela``, Vela's runs missing from ``bench/reference/config_sweep_vela_5.2.0.jsonl`` are
made first, one at a time (``zoo_vela.run``; a record is reused only for the same model bytes and
the same options). npuplan then plans every (model, scenario) in this process with this tree's
``src`` and replays each plan (``--validate``). Per scenario it prints:
  n med max       total cycles, ours over Vela legacy, minus 1: median and largest |error| over the
                  ``n`` models both planned with the same CPU operators, then over all models both
                  planned (a row with other CPU ops counts other work: ``*`` in the rows); ``>25%``
                  the same-CPU models outside 25%
  size miss       (Size scenarios) models whose sram_memory_used is above Vela legacy's
  budget miss     (scenarios with an arena budget) models with no plan within it where a Vela core fits
  errors          npuplan errors and failed validations (the rows name them)
  vela fail       models a Vela core failed on (legacy/default; a row, not an exception), and how
                  many of Vela's runs are not in the cache yet
Vela legacy's estimate is the reference for cycles (npuplan's cost model follows it); SRAM and
fitting are compared as results. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from zoo_compare import COMPARABLE, fmt, load_vela, one_line, vela_cpu, vela_figure  # also puts this tree's src on sys.path
from zoo_vela import run as run_vela
from zoo_vela import sha256

from scenarios import SWEEP, ZOO8

from npuplan.api import make_options, plan
from npuplan.commands import validate_plan
from npuplan.errors import InfeasiblePlan
from npuplan.hw import build_architecture
from npuplan.report import build_report
from npuplan.report.summary import summary_row

HERE = Path(__file__).resolve().parent
CACHE = HERE / "reference" / "config_sweep_vela_5.2.0.jsonl"
KIB = 1024
CORES = ("legacy", "default")
SETS = {"sweep": SWEEP, "zoo8": ZOO8}
SCENARIOS = {**SWEEP, **ZOO8}


PUBLIC = HERE.parent / "tests" / "data"
ZOO_MODELS = {
    Path("/work/zoo"): ("densenet_32", "inception_48", "mlp_mixer_32", "squeezenet_64", "tiny_yolo_96",
                        "transformer_16x32", "unet_nearest_64", "audio1d_256", "lstm_8x16"),
    Path("/work/zoo2"): ("effnet_lite_se_64", "resnext_32", "shufflenet_48", "inception_v3_35", "tcn_same_300",
                         "cnn_int16_32"),
}


def models() -> list[Path]:
    found = sorted(PUBLIC.glob("*.tflite"))
    for zoo, names in ZOO_MODELS.items():
        found += [zoo / f"{name}.tflite" for name in names]
    return found


def fill_vela_cache(vela: str, paths: list[Path], scenarios: list[str], cache: Path) -> None:
    """Run Vela (one job at a time) for every (model, scenario, core) CACHE lacks."""
    done = set()
    if cache.exists():
        for line in cache.read_text().splitlines():
            rec = json.loads(line)
            done.add((rec["sha"], rec["scenario"], rec["core"], json.dumps(rec.get("options"), sort_keys=True)))
    cache.parent.mkdir(parents=True, exist_ok=True)
    with cache.open("a") as out:
        for path in paths:
            digest = sha256(path)
            for name in scenarios:
                options = SCENARIOS[name]
                for core in CORES:
                    if (digest, name, core, json.dumps(options, sort_keys=True)) in done:
                        continue
                    rec = {**run_vela(vela, path, name, options, core), "options": options}
                    out.write(json.dumps(rec, separators=(",", ":")) + "\n")
                    out.flush()
                    cycles = rec.get("summary", {}).get("cycles_total", "-")
                    print(f"vela {path.stem:<24} {name:<36} {core:<8} rc={rec['rc']} cycles={cycles}", flush=True)


def budget_bytes(options: dict[str, str]) -> int | None:
    """The arena budget of a scenario, or None when it is the whole address space (no real limit)."""
    arch = build_architecture(make_options(**options))
    return None if arch.arena_cache_size_bytes >= arch.accelerator.max_address_bytes else arch.arena_cache_size_bytes


def ours(path: Path, options: dict[str, str], validate: bool, comparable: bool) -> dict:
    """npuplan's cycles, SRAM (KiB) and CPU op count, ``infeasible`` or ``error`` (one line each)."""
    try:
        result = plan(path, **options, **(COMPARABLE if comparable else {}))
    except InfeasiblePlan as error:
        return {"infeasible": one_line(error)}
    except Exception as error:  # noqa: BLE001 - a bench reports every failure as a row and goes on
        return {"error": one_line(error)}
    try:
        if validate:
            validate_plan(result)
    except Exception as error:  # noqa: BLE001
        return {"error": "validation: " + one_line(error)}
    row = summary_row(build_report(result))
    return {"cycles": float(row["cycles_total"]), "sram_kib": float(row["sram_memory_used"]),
            "cpu": int(row["cpu_operators"])}


def vela_fits(rec: dict | None, budget: int | None) -> bool | None:
    sram = vela_figure(rec, "sram_memory_used")
    if sram is None:
        return None
    return budget is None or sram * KIB <= budget


def compare(path: Path, name: str, vela: dict, validate: bool, budget: int | None, comparable: bool) -> dict:
    """One (model, scenario) row."""
    options = SCENARIOS[name]
    mine = ours(path, options, validate, comparable)
    legacy, default = (vela.get((path.stem, name, c)) for c in CORES)
    theirs = vela_figure(legacy, "cycles_total")
    fits = "sram_kib" in mine and (budget is None or mine["sram_kib"] * KIB <= budget)
    return {
        "model": path.stem, "scenario": name, "mine": mine,
        "err": mine["cycles"] / theirs - 1 if "cycles" in mine and theirs else None,
        "same_cpu": mine.get("cpu") == vela_cpu(legacy), "cpu": (mine.get("cpu"), vela_cpu(legacy), vela_cpu(default)),
        "size": (mine.get("sram_kib"), vela_figure(legacy, "sram_memory_used"), vela_figure(default, "sram_memory_used")),
        "fits": (fits, vela_fits(legacy, budget), vela_fits(default, budget)),
        "vela_failed": [c for c, r in zip(CORES, (legacy, default)) if r is not None and vela_figure(r, "cycles_total") is None],
        "vela_missing": legacy is None or default is None,
    }


def yn(value: bool | None) -> str:
    return "x" if value is None else ("Y" if value else "n")


def print_row(row: dict) -> None:
    err = fmt(row["err"], "+7.1%") + (" " if row["same_cpu"] or row["err"] is None else "*")
    cpu = "/".join(fmt(c) for c in row["cpu"])
    size = "/".join(fmt(s, ".1f") for s in row["size"])
    fits = "/".join(yn(f) for f in row["fits"])
    problem = row["mine"].get("error") or row["mine"].get("infeasible") or ""
    print(f"  {row['model']:<24} {cpu:>8} {err:>9} {size:>20} {fits:>6}  {problem[:110]}", flush=True)


def misses(rows: list[dict], goal: str, budget: int | None) -> dict[str, list[str]]:
    """The models that miss each target of issue 11 in one scenario."""
    found: dict[str, list[str]] = {"size": [], "budget": [], "errors": [], "outside25": []}
    for r in rows:
        if goal == "Size" and r["size"][0] is not None and r["size"][1] is not None and r["size"][0] > r["size"][1] + 1e-9:
            found["size"].append(f"{r['model']} ({r['size'][0]:.2f} > {r['size'][1]:.2f})")
        if budget is not None and not r["fits"][0] and (r["fits"][1] or r["fits"][2]):
            found["budget"].append(r["model"])
        if "error" in r["mine"] or ("infeasible" in r["mine"] and budget is None):
            found["errors"].append(r["model"])
        if r["err"] is not None and r["same_cpu"] and abs(r["err"]) > 0.25:
            found["outside25"].append(f"{r['model']} ({r['err']:+.0%})")
    return found


def median_max(errors: list[float]) -> str:
    if not errors:
        return f"{len(errors):>3}      x      x"
    return f"{len(errors):>3} {statistics.median(errors):+6.1%} {max(abs(e) for e in errors):6.1%}"


def summary_line(name: str, rows: list[dict], budget: int | None) -> str:
    same = [r["err"] for r in rows if r["err"] is not None and r["same_cpu"]]
    every = [r["err"] for r in rows if r["err"] is not None]
    found = misses(rows, SCENARIOS[name]["optimise"], budget)
    failed = [sum(c in r["vela_failed"] for r in rows) for c in CORES]
    missing = sum(r["vela_missing"] for r in rows)
    return (f"{name:<36} {median_max(same)} {median_max(every)} {len(found['outside25']):>5} {len(found['size']):>5} "
            f"{len(found['budget']):>6} {len(found['errors']):>6} {failed[0]:>4}/{failed[1]}"
            + (f" ({missing} not run)" if missing else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vela", help="run the Vela CLI for records the cache lacks (one job at a time)")
    parser.add_argument("--model", nargs="*")
    parser.add_argument("--scenario", nargs="*", choices=list(SCENARIOS))
    parser.add_argument("--set", choices=sorted(SETS), default="sweep",
                        help="the scenarios run without --scenario: sweep (the sixteen above) or zoo8 "
                             "(bench/scenarios.py ZOO8: other budgets and bench/zoo8_configs.ini)")
    parser.add_argument("--models", type=Path, help="every *.tflite of this directory instead of the default networks")
    parser.add_argument("--cache", type=Path, default=CACHE, help="Vela's records (default: %(default)s)")
    parser.add_argument("--no-validate", action="store_true", help="do not replay the plans")
    parser.add_argument("--rows", action="store_true", help="print every (model, scenario) row")
    parser.add_argument("--vela-comparable", action="store_true",
                        help="plan as Vela would (--search cascade --no-fm-staging --no-concat-in-place "
                             "--buffer-weights): the cycles then measure the estimator rather than the planner")
    args = parser.parse_args()
    found = sorted(args.models.glob("*.tflite")) if args.models else models()
    paths = [p for p in found if not args.model or p.stem in args.model]
    scenarios = args.scenario or list(SETS[args.set])
    if args.vela:
        fill_vela_cache(args.vela, paths, scenarios, args.cache)
    vela = load_vela(args.cache) if args.cache.exists() else {}
    table: dict[str, list[dict]] = {}
    budgets = {name: budget_bytes(SCENARIOS[name]) for name in scenarios}
    for name in scenarios:
        if args.rows:
            print(f"\n{name}: {' '.join(f'{k}={v}' for k, v in SCENARIOS[name].items() if k != 'config')}"
                  f"{' (custom ini)' if 'config' in SCENARIOS[name] else ''}; budget "
                  f"{'none' if budgets[name] is None else f'{budgets[name] // KIB} KiB'}")
            print(f"  {'model':<24} {'cpu o/l/d':>8} {'cyc err':>9} {'SRAM KiB o/l/d':>20} {'fit o/l/d':>6}")
        table[name] = []
        for path in paths:
            table[name].append(compare(path, name, vela, not args.no_validate, budgets[name], args.vela_comparable))
            if args.rows:
                print_row(table[name][-1])
    print(f"\n{'':<36} {'same CPU ops':^17} {'all models':^17}")
    print(f"{'scenario':<36} {'n':>3} {'med':>6} {'max':>6} {'n':>3} {'med':>6} {'max':>6} {'>25%':>5} {'size':>5} "
          f"{'budget':>6} {'errors':>6} vela fail l/d")
    for name in scenarios:
        print(summary_line(name, table[name], budgets[name]))
    every = [r["err"] for rows in table.values() for r in rows if r["err"] is not None and r["same_cpu"]]
    if every:
        print(f"all scenarios, same CPU ops: {len(every)} plans, median {statistics.median(every):+.1%}, "
              f"max |err| {max(abs(e) for e in every):.1%}, within 5%: {sum(abs(e) <= 0.05 for e in every)}, "
              f"within 25%: {sum(abs(e) <= 0.25 for e in every)}")
    print("\nmisses:")
    for name in scenarios:
        for kind, names in misses(table[name], SCENARIOS[name]["optimise"], budgets[name]).items():
            if names:
                print(f"  {name} {kind}: {', '.join(names)}")
        for r in table[name]:
            problem = r["mine"].get("error") or (r["mine"].get("infeasible") if budgets[name] is None else None)
            if problem:
                print(f"  {name} error {r['model']}: {problem[:150]}")


if __name__ == "__main__":
    main()
