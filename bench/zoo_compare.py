"""npuplan against both Vela 5.2.0 cores on the differential zoo, per model, side by side.

Usage:
  python bench/zoo_compare.py [--zoo /work/zoo] [--vela-results bench/reference/zoo_vela_5.2.0.jsonl]
                              [--model NAME ...] [--scenario NAME ...] [--save FILE.csv] [--vela-comparable]

Vela's figures come from ``bench/zoo_vela.py``'s cache (run it first); npuplan plans in this
process with this tree's ``src``, in the scenarios asked for (default: all four). Per model:
  cpu       CPU operators: ours / Vela legacy / Vela default (u55-128 Performance)
  cyc err   u55-128 Performance total cycles, ours over Vela legacy, minus 1 (* when the two put
            different ops on the CPU: the totals then count different work)
  layers    NPU layers matched by output-tensor name whose NPU cycles are within 10% of Vela
            legacy's (bench/vela_layers.py), over the matched layers
  u65 err   U65 Dedicated_Sram_384KB Performance total cycles, ours over Vela legacy, minus 1
  size KiB  u55-64 Deep_Embedded Size sram_memory_used: ours / legacy / default
  256k      u55-256 with a 256 KiB arena: Y a plan within it, n none (ours / legacy / default)
``x`` marks a run that failed (a Vela crash or refusal, an npuplan error) or was not made. An
npuplan error is a row with its one-line message. Where npuplan plans a model a Vela core cannot,
that is a win to keep and the summary lists it. Which side is trusted: Vela legacy's estimate is
the reference for cycles (npuplan's cost model follows it); SRAM and fitting are compared as
results. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import sys
from pathlib import Path

from scenarios import BUDGET_256K, SCENARIOS
from vela_layers import layer_agreement, npu_cycles_by_name

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.api import plan  # noqa: E402
from npuplan.commands import validate_plan  # noqa: E402
from npuplan.errors import InfeasiblePlan, NpuplanError  # noqa: E402
from npuplan.report import build_report  # noqa: E402
from npuplan.report.files import PER_LAYER_COLUMNS, per_layer_rows  # noqa: E402
from npuplan.report.summary import summary_row  # noqa: E402

PERF, SIZE, U65, BUDGET = ("u55_128_highend_shared_perf", "u55_64_deep_shared_size",
                           "u65_256_highend_dedicated384k_perf", "u55_256_budget_256k")
OPTIONS = {**SCENARIOS, **BUDGET_256K}
BUDGET_BYTES = int(BUDGET_256K[BUDGET]["arena_cache_size"])
CORES = ("legacy", "default")
COMPARABLE = {"search": "cascade", "fm_staging": False, "concat_in_place": False, "buffer_weights": True}


def load_vela(path: Path) -> dict[tuple[str, str, str], dict]:
    """(model, scenario, core) -> zoo_vela.py's record; the last line for a key wins."""
    found: dict[tuple[str, str, str], dict] = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        found[(rec["model"], rec["scenario"], rec["core"])] = rec
    return found


def vela_layers(rec: dict | None) -> dict[str, float]:
    """Vela's per-layer NPU cycles by name (records hold rows as lists under ``layer_columns``,
    or, written before that, as dicts)."""
    if rec is None:
        return {}
    columns, rows = rec.get("layer_columns"), rec.get("layers") or []
    return npu_cycles_by_name(dict(zip(columns, row)) for row in rows) if columns else npu_cycles_by_name(rows)


def vela_figure(rec: dict | None, key: str) -> float | None:
    """A summary figure of a Vela run that succeeded, else None."""
    if rec is None or rec.get("rc") != 0 or "summary" not in rec:
        return None
    return float(rec["summary"][key])


def vela_cpu(rec: dict | None) -> int | None:
    return None if vela_figure(rec, "cycles_total") is None else int(rec.get("CPU operators", 0) or 0)  # type: ignore[union-attr]


def one_line(error: Exception) -> str:
    lines = str(error).strip().splitlines() or [""]
    return lines[0] if isinstance(error, NpuplanError) else f"internal {type(error).__name__}: {lines[0]}"


VALIDATE = False  # --validate: replay every plan's command stream; a violation is an error row


def ours(model: Path, scenario: str, comparable: bool = False) -> dict:
    """npuplan's cycles, SRAM (KiB), CPU op count and per-layer NPU cycles, or its one-line error."""
    try:
        result = plan(model, **OPTIONS[scenario], **(COMPARABLE if comparable else {}))
        if VALIDATE:
            validate_plan(result)
        report = build_report(result)
    except InfeasiblePlan as error:  # "does not fit" is a result in the budget scenario, an error elsewhere
        return {"infeasible": one_line(error)}
    except Exception as error:  # noqa: BLE001 - a bench reports every failure as a row and goes on
        return {"error": one_line(error)}
    row = summary_row(report)
    name_at, npu_at = PER_LAYER_COLUMNS.index("Name"), PER_LAYER_COLUMNS.index("NPU")
    layers = {r[name_at]: float(r[npu_at]) for r in per_layer_rows(report)}
    return {"cycles": float(row["cycles_total"]), "sram_kib": float(row["sram_memory_used"]),
            "cpu": int(row["cpu_operators"]), "layers": layers}


def error_vs(mine: dict | None, rec: dict | None) -> float | None:
    theirs = vela_figure(rec, "cycles_total")
    if mine is None or "cycles" not in mine or not theirs:
        return None
    return mine["cycles"] / theirs - 1


def vela_failures(mine: dict[str, dict], rec: dict) -> str:
    """The Vela cores that failed where npuplan planned, with in how many of those scenarios."""
    counts = {c: sum("cycles" in m and vela_figure(rec[s, c], "cycles_total") is None for s, m in mine.items())
              for c in CORES}
    return " ".join(f"{c} in {n}/{len(mine)}" for c, n in counts.items() if n)


def compare(model: Path, scenarios: list[str], vela: dict, comparable: bool) -> dict:
    """One model's row: our figures and both Vela cores' in the scenarios asked for."""
    name = model.stem
    mine = {s: ours(model, s, comparable and s == PERF) for s in scenarios}
    rec = {(s, c): vela.get((name, s, c)) for s in OPTIONS for c in CORES}
    perf, size, budget = mine.get(PERF), mine.get(SIZE), mine.get(BUDGET)
    close, matched = layer_agreement(perf.get("layers", {}), vela_layers(rec[PERF, "legacy"])) if perf else (0, 0)
    fits = [None if vela_figure(rec[BUDGET, c], "sram_memory_used") is None
            else vela_figure(rec[BUDGET, c], "sram_memory_used") * 1024 <= BUDGET_BYTES for c in CORES]  # type: ignore[operator]
    errors = [f"{s}: {m['error']}" for s, m in mine.items() if "error" in m]
    errors += [f"{s}: {m['infeasible']}" for s, m in mine.items() if "infeasible" in m and s != BUDGET]
    return {
        "model": name, "cpu_ours": perf.get("cpu") if perf else None,
        "cpu_legacy": vela_cpu(rec[PERF, "legacy"]), "cpu_default": vela_cpu(rec[PERF, "default"]),
        "cycles_ours": perf.get("cycles") if perf else None,
        "cycles_legacy": vela_figure(rec[PERF, "legacy"], "cycles_total"),
        "cycles_err": error_vs(perf, rec[PERF, "legacy"]), "u65_err": error_vs(mine.get(U65), rec[U65, "legacy"]),
        "layers_close": close, "layers_matched": matched,
        "size_ours_kib": size.get("sram_kib") if size else None,
        "size_legacy_kib": vela_figure(rec[SIZE, "legacy"], "sram_memory_used"),
        "size_default_kib": vela_figure(rec[SIZE, "default"], "sram_memory_used"),
        "fits_ours": None if budget is None else budget.get("sram_kib", 1e9) * 1024 <= BUDGET_BYTES,
        "fits_legacy": fits[0], "fits_default": fits[1],
        "vela_failed": vela_failures(mine, rec),
        "error": "; ".join(errors),
    }


def fmt(value: object, spec: str = "") -> str:
    """``value`` formatted, or ``x`` as wide as the spec's width when there is none."""
    width = re.match(r"\D*(\d*)", spec).group(1)  # type: ignore[union-attr]
    return "x".rjust(int(width or 0)) if value is None else format(value, spec)


def yn(value: bool | None) -> str:
    return "x" if value is None else ("Y" if value else "n")


def print_row(row: dict) -> None:
    same_cpu = row["cpu_ours"] == row["cpu_legacy"]
    cyc = fmt(row["cycles_err"], "+7.1%") + (" " if same_cpu or row["cycles_err"] is None else "*")
    print(f"{row['model']:<26} {fmt(row['cpu_ours'])}/{fmt(row['cpu_legacy'])}/{fmt(row['cpu_default']):<4} {cyc:>8} "
          f"{row['layers_close']:>3}/{row['layers_matched']:<3} {fmt(row['u65_err'], '+7.1%'):>8} "
          f"{fmt(row['size_ours_kib'], '7.1f')}/{fmt(row['size_legacy_kib'], '7.1f')}/{fmt(row['size_default_kib'], '7.1f')} "
          f"{yn(row['fits_ours']):>4}/{yn(row['fits_legacy'])}/{yn(row['fits_default'])}"
          + (f"  ERROR {row['error'][:100]}" if row["error"] else ""), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--zoo", type=Path, default=Path("/work/zoo"))
    parser.add_argument("--vela-results", type=Path, default=HERE / "reference" / "zoo_vela_5.2.0.jsonl")
    parser.add_argument("--model", nargs="*")
    parser.add_argument("--scenario", nargs="*", choices=list(OPTIONS), help="default: all four")
    parser.add_argument("--save", type=Path, help="write the per-model rows to this CSV file")
    parser.add_argument("--vela-comparable", action="store_true",
                        help="plan u55-128 as Vela would (--search cascade --no-fm-staging "
                             "--no-concat-in-place --buffer-weights): the cycles then measure the estimator rather than the planner")
    parser.add_argument("--validate", action="store_true", help="replay every plan (a violation is an error row)")
    args = parser.parse_args()
    global VALIDATE
    VALIDATE = args.validate
    vela = load_vela(args.vela_results)
    scenarios = args.scenario or list(OPTIONS)
    rows = []
    print(f"{'model':<26} {'cpu o/l/d':>10} {'cyc err':>8} {'layers':>7} {'u65 err':>8} {'size KiB o/l/d':>23} "
          f"{'256k o/l/d':>10}")
    for model in sorted(args.zoo.glob("*.tflite")):
        if args.model and model.stem not in args.model:
            continue
        rows.append(compare(model, scenarios, vela, args.vela_comparable))
        print_row(rows[-1])
    if not rows:
        return
    summarise(rows)
    if args.save:
        with args.save.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


def cycles_line(label: str, errors: list[float]) -> str:
    if not errors:
        return f"{label}: no model with both figures"
    return (f"{label}: median {statistics.median(errors):+.1%}, max |err| {max(abs(e) for e in errors):.1%}, "
            f"within 5%: {sum(abs(e) <= 0.05 for e in errors)}/{len(errors)}, "
            f"within 25%: {sum(abs(e) <= 0.25 for e in errors)}/{len(errors)}")


def summarise(rows: list[dict]) -> None:
    """The targets of issue 11, one line each."""
    print(f"\nmodels: {len(rows)}")
    cpu_worse = [r["model"] for r in rows if r["cpu_ours"] is not None
                 and r["cpu_ours"] > min((v for v in (r["cpu_legacy"], r["cpu_default"]) if v is not None), default=10**9)]
    print(f"CPU ops above the fewer of Vela's cores: {len(cpu_worse)} {cpu_worse}")
    errors = [r["cycles_err"] for r in rows if r["cycles_err"] is not None]
    same = [r["cycles_err"] for r in rows if r["cycles_err"] is not None and r["cpu_ours"] == r["cpu_legacy"]]
    print(cycles_line("u55-128 cycles vs Vela legacy, all models", errors))
    print(cycles_line("u55-128 cycles vs Vela legacy, models with the same CPU ops", same))
    print(cycles_line("u65-256 cycles vs Vela legacy, all models", [r["u65_err"] for r in rows if r["u65_err"] is not None]))
    close, matched = sum(r["layers_close"] for r in rows), sum(r["layers_matched"] for r in rows)
    if matched:
        print(f"per-layer NPU cycles within 10% of Vela legacy: {close}/{matched} = {close / matched:.1%}")
    size_worse = [f"{r['model']} ({r['size_ours_kib']:.1f} > {r['size_legacy_kib']:.1f})" for r in rows
                  if r["size_ours_kib"] is not None and r["size_legacy_kib"] is not None
                  and r["size_ours_kib"] > r["size_legacy_kib"] + 1e-9]
    print(f"Size SRAM above Vela legacy: {len(size_worse)} {size_worse}")
    fit_miss = [r["model"] for r in rows if r["fits_ours"] is False and (r["fits_legacy"] or r["fits_default"])]
    print(f"256 KiB: no plan where a Vela core fits: {len(fit_miss)} {fit_miss}")
    wins = [f"{r['model']} ({r['vela_failed']})" for r in rows if r["vela_failed"]]
    print(f"planned where a Vela core failed (wins to keep): {len(wins)} {wins}")
    failed = [f"{r['model']}: {r['error']}" for r in rows if r["error"]]
    print(f"npuplan errors: {len(failed)}")
    for line in failed:
        print(f"  {line[:160]}")


if __name__ == "__main__":
    main()
