"""npuplan against both Vela 5.2.0 cores on the differential zoo, per model, side by side.

Usage:
  python bench/zoo_compare.py [--zoo /work/zoo] [--vela-results bench/results/zoo_vela_5.2.0.jsonl]
                              [--model NAME ...] [--save FILE.csv]

Vela's figures come from ``bench/zoo_vela.py``'s cache (run it first); npuplan plans in this
process with this tree's ``src``. Per model:
  cpu       CPU operators: ours / Vela legacy / Vela default (u55-128 Performance)
  cyc err   u55-128 Performance total cycles, ours over Vela legacy, minus 1 (* when the two put
            different ops on the CPU: the totals then count different work and are left out)
  layers    NPU layers matched by output-tensor name whose NPU cycles are within 10% of Vela
            legacy's, over the matched layers
  size KiB  u55-64 Deep_Embedded Size sram_memory_used: ours / legacy / default
  256k      u55-256 with a 256 KiB arena: Y fits, n does not (ours / legacy / default)
A Vela crash or refusal shows as ``x``; where npuplan plans a model Vela cannot, that is a win to
keep and the summary counts it. Which side is trusted: Vela legacy's estimate is the reference
for cycles (npuplan's cost model mirrors it); SRAM and fitting are compared as results.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from pathlib import Path

from scenarios import BUDGET_256K, SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.api import plan  # noqa: E402
from npuplan.commands import validate_plan  # noqa: E402
from npuplan.errors import InfeasiblePlan, NpuplanError  # noqa: E402
from npuplan.report import build_report  # noqa: E402
from npuplan.report.files import per_layer_rows, summary_row  # noqa: E402
from npuplan.report.files import PER_LAYER_COLUMNS  # noqa: E402

PERF, SIZE, BUDGET = "u55_128_highend_shared_perf", "u55_64_deep_shared_size", "u55_256_budget_256k"
OPTIONS = {**SCENARIOS, **BUDGET_256K}
BUDGET_BYTES = 262144


def load_vela(path: Path) -> dict[tuple[str, str, str], dict]:
    found: dict[tuple[str, str, str], dict] = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        found[(rec["model"], rec["scenario"], rec["core"])] = rec
    return found


VALIDATE = False  # --validate: replay every plan's command stream (a violation is an error row)


def ours(model: Path, scenario: str, comparable: bool = False) -> dict:
    extra = {"search": "cascade", "fm_staging": False, "concat_in_place": False} if comparable else {}
    try:
        result = plan(model, **OPTIONS[scenario], **extra)
        if VALIDATE:
            validate_plan(result)
    except InfeasiblePlan as error:
        return {"error": str(error)}
    except NpuplanError as error:
        return {"error": str(error), "invalid": True}
    report = build_report(result)
    row = summary_row(report)
    name_at, npu_at = PER_LAYER_COLUMNS.index("Name"), PER_LAYER_COLUMNS.index("NPU")
    layers = {r[name_at]: float(r[npu_at]) for r in per_layer_rows(report)}
    return {"cycles": float(row["cycles_total"]), "sram_kib": float(row["sram_memory_used"]),
            "cpu": int(row["cpu_operators"]), "layers": layers}


def vela_figure(rec: dict | None, key: str) -> float | None:
    if rec is None or "summary" not in rec:
        return None
    return float(rec["summary"][key])


def vela_cpu(rec: dict | None) -> int | None:
    if rec is None or "summary" not in rec:
        return None
    return int(rec.get("CPU operators", 0) or 0)


def layer_agreement(mine: dict[str, float], rec: dict | None) -> tuple[int, int]:
    """(layers within 10%, layers matched) by output-tensor name against Vela's per-layer NPU cycles."""
    if rec is None or not rec.get("layers"):
        return 0, 0
    close = matched = 0
    for row in rec["layers"]:
        name, npu = row.get("Name"), row.get("NPU")
        if name in mine and npu not in (None, ""):
            matched += 1
            theirs = float(npu)
            close += abs(mine[name] - theirs) <= 0.10 * max(theirs, 1.0)
    return close, matched


def fmt(value: object, spec: str = "") -> str:
    return "x" if value is None else format(value, spec)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--zoo", type=Path, default=Path("/work/zoo"))
    parser.add_argument("--vela-results", type=Path, default=HERE / "results" / "zoo_vela_5.2.0.jsonl")
    parser.add_argument("--model", nargs="*")
    parser.add_argument("--save", type=Path)
    parser.add_argument("--vela-comparable", action="store_true",
                        help="plan u55-128 as Vela would (--search cascade --no-fm-staging --no-concat-in-place): the cycles "
                             "then measure the estimator rather than the planner")
    parser.add_argument("--validate", action="store_true", help="replay every plan (violations are listed)")
    args = parser.parse_args()
    global VALIDATE
    VALIDATE = args.validate
    vela = load_vela(args.vela_results)
    rows = []
    print(f"{'model':<26} {'cpu o/l/d':>10} {'cyc err':>8} {'layers':>7} {'size KiB o/l/d':>22} {'256k o/l/d':>10}")
    for model in sorted(args.zoo.glob("*.tflite")):
        name = model.stem
        if args.model and name not in args.model:
            continue
        perf, size, budget = ours(model, PERF, args.vela_comparable), ours(model, SIZE), ours(model, BUDGET)
        leg, dflt = vela.get((name, PERF, "legacy")), vela.get((name, PERF, "default"))
        vc = [vela_cpu(leg), vela_cpu(dflt)]
        err = None
        comparable = perf.get("cpu") == vc[0]  # with other ops on the CPU the NPU totals differ in kind
        if "cycles" in perf and vela_figure(leg, "cycles_total"):
            err = perf["cycles"] / vela_figure(leg, "cycles_total") - 1  # type: ignore[operator]
        close, matched = layer_agreement(perf.get("layers", {}), leg)
        size_v = [vela_figure(vela.get((name, SIZE, c)), "sram_memory_used") for c in ("legacy", "default")]
        fits_v = []
        for core in ("legacy", "default"):
            used = vela_figure(vela.get((name, BUDGET, core)), "sram_memory_used")
            fits_v.append(None if used is None else used * 1024 <= BUDGET_BYTES)
        fits_o = "cycles" in budget
        row = {"model": name, "cpu_ours": perf.get("cpu"), "cpu_legacy": vc[0], "cpu_default": vc[1],
               "cycles_ours": perf.get("cycles"), "cycles_legacy": vela_figure(leg, "cycles_total"), "cycles_err": err,
               "comparable": comparable,
               "layers_close": close, "layers_matched": matched, "size_ours_kib": size.get("sram_kib"),
               "size_legacy_kib": size_v[0], "size_default_kib": size_v[1], "fits_ours": fits_o,
               "fits_legacy": fits_v[0], "fits_default": fits_v[1], "error": perf.get("error") or size.get("error"),
               "invalid": any(r.get("invalid") for r in (perf, size, budget)), "vela_ran": leg is not None}
        rows.append(row)
        yn = lambda v: "x" if v is None else ("Y" if v else "n")  # noqa: E731
        shown = fmt(err, "+7.1%") + (" " if comparable or err is None else "*")
        print(f"{name:<26} {fmt(row['cpu_ours'])}/{fmt(vc[0])}/{fmt(vc[1]):<4} {shown:>8} "
              f"{close:>3}/{matched:<3} {fmt(size.get('sram_kib'), '7.1f')}/{fmt(size_v[0], '7.1f')}/"
              f"{fmt(size_v[1], '7.1f')} {yn(fits_o):>4}/{yn(fits_v[0])}/{yn(fits_v[1])}"
              + (f"  ERROR {row['error'][:80]}" if row["error"] else ""))
    summarise(rows)
    if args.save:
        with args.save.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


def summarise(rows: list[dict]) -> None:
    print()
    cpu_worse = [r["model"] for r in rows if r["cpu_ours"] is not None
                 and r["cpu_ours"] > min(v for v in (r["cpu_legacy"], r["cpu_default"], 10**9) if v is not None)]
    errors = [r["cycles_err"] for r in rows if r["cycles_err"] is not None and r["comparable"]]
    apart = sum(r["cycles_err"] is not None and not r["comparable"] for r in rows)
    close = sum(r["layers_close"] for r in rows)
    matched = sum(r["layers_matched"] for r in rows)
    size_worse = [r["model"] for r in rows if r["size_ours_kib"] is not None and r["size_legacy_kib"] is not None
                  and r["size_ours_kib"] > r["size_legacy_kib"] + 1e-9]
    fit_miss = [r["model"] for r in rows if not r["fits_ours"] and (r["fits_legacy"] or r["fits_default"])]
    wins = [r["model"] for r in rows if r["cycles_ours"] is not None and r["cycles_legacy"] is None and r["vela_ran"]]
    print(f"models: {len(rows)} ({sum(not r['vela_ran'] for r in rows)} without Vela results: run bench/zoo_vela.py)")
    print(f"CPU ops above the fewer of Vela's cores: {len(cpu_worse)} {cpu_worse}")
    if errors:
        print(f"u55-128 cycles vs Vela legacy, models with the same CPU ops: median {statistics.median(errors):+.1%}, "
              f"max |err| {max(abs(e) for e in errors):.1%}, within 25%: {sum(abs(e) <= 0.25 for e in errors)}/{len(errors)}"
              f" ({apart} models marked * left out: Vela legacy runs other ops on the CPU)")
    if matched:
        print(f"per-layer NPU cycles within 10%: {close}/{matched} = {close / matched:.1%}")
    print(f"Size SRAM above Vela legacy: {len(size_worse)} {size_worse}")
    print(f"256 KiB: no plan where a Vela core fits: {len(fit_miss)} {fit_miss}")
    print(f"planned where Vela legacy failed (wins to keep): {len(wins)} {wins}")
    invalid = [r["model"] for r in rows if r["invalid"]]
    print(f"plans that failed to plan or validate (other than not fitting): {len(invalid)} {invalid}")


if __name__ == "__main__":
    main()
