"""Fidelity of ``npuplan estimate`` on identical schedules (issue 25, item 2).

For each model and scenario: Vela 5.2.0 compiles the model (its default core, and the legacy core
with ``--debug-force-legacy-core``); its own ``cycles_total`` (summary CSV) is set beside
``npuplan estimate`` of the file Vela wrote. The ratio measures the estimator alone: same
operations, same blocks, same DMAs, one file. Also npuplan's estimate of its own emitted file
(``plan --emit-tflite``) against npuplan's plan figure: they should agree closely.

A group with a "/" is a directory of networks (e.g. /tmp/npuplan_dense from bench/zoo/dense_models.py).

Trusted side: Vela's figure for Vela's file is the reference (it is Vela's model of its own
schedule, not hardware); a model Vela or npuplan fails on is a row saying so.

    python bench/estimate_fidelity.py [--groups public,testdata,zoo,/a/models/dir] [--zoo-every 4]
        [--scenarios a,b] [--cores default,legacy] [--no-own] [--work /tmp/estimate_fidelity]
        [--own-work DIR] [--results bench/results/estimate_fidelity.txt]
    python bench/estimate_fidelity.py --summarise LOG [LOG...] [--work ...] [--groups ...] [--results FILE]

The one-clock lines set npuplan's file beside the better Vela file, all timed by ``npuplan
estimate``: over every network, then over those where both files leave as many operators to the
CPU (Vela 5.2 leaves EXP, TILE, some depthwise multipliers... on the CPU where npuplan runs them on
the NPU: those files do more NPU work, and the CPU's share is in no cycles_total), then on the
operators both files run on the NPU (``common_work.py``: npuplan's cycles on the operators the
better Vela file leaves to the CPU come off its total; what is left out and why). The table after
the summary lists each network whose files leave different operators to the CPU.

Precompiled default-core files in /work/vela_out/<scenario>/ are used when present. Vela runs with
``--verbose-performance``, so its per-layer CSV (``<model>_per-layer.csv``) lies beside each file it
compiles (``estimate_outliers.py`` counts its rows against the stream's operations).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from common_work import CommonWork, compare, one_clock_line, summary_lines, table
from npuplan.errors import NpuplanError
from npuplan.estimate import estimate_file
from npuplan.options import PlanOptions

VELA = "/work/velavenv/bin/vela"
PRECOMPILED = Path("/work/vela_out")
ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = {
    "u55_128_highend_shared_perf": ("ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram"),
    "u65_256_highend_dedicated384k_perf": ("ethos-u65-256", "Ethos_U65_High_End", "Dedicated_Sram_384KB"),
    "u65_512_highend_dedicated_perf": ("ethos-u65-512", "Ethos_U65_High_End", "Dedicated_Sram"),
}
ZOOS = (Path("/work/zoo"), Path("/work/zoo2"), Path("/work/zoo3"))
SIDES = ("vela-default", "vela-legacy", "npuplan")


@dataclass(frozen=True)
class Row:
    scenario: str
    model: str
    side: str  # "vela-default", "vela-legacy" (Vela's file, Vela's figure) or "npuplan" (own file, plan figure)
    reference: float | None  # Vela's cycles_total for its file, or npuplan's plan figure
    estimate: float | None  # npuplan estimate of the file
    note: str = ""

    @property
    def ratio(self) -> float | None:
        return self.estimate / self.reference if self.reference and self.estimate is not None else None


def models(groups: list[str], zoo_every: int) -> list[Path]:
    found: dict[str, Path] = {}
    if "public" in groups:
        found |= {p.stem: p for p in sorted(Path("/work/shared/models").glob("*.tflite"))}
    if "testdata" in groups:
        found |= {p.stem: p for p in sorted((ROOT / "tests/data").glob("*.tflite")) if p.stem not in found}
    if "zoo" in groups:
        for zoo in ZOOS:
            for k, p in enumerate(sorted(zoo.glob("*.tflite"))):
                if k % zoo_every == 0 and p.stem not in found:
                    found[f"{zoo.name}/{p.stem}"] = p
    for group in (g for g in groups if "/" in g):  # a directory of networks (e.g. /tmp/npuplan_dense)
        found |= {f"{group}/{p.stem}": p for p in sorted(Path(group).glob("*.tflite"))}
    return list(found.values())


def _options(scenario: str) -> PlanOptions:
    accel, system, mode = SCENARIOS[scenario]
    return PlanOptions(accelerator_config=accel, system_config=system, memory_mode=mode)


def vela_file(model: Path, scenario: str, core: str, work: Path) -> tuple[Path, float] | str:
    """Vela's file and cycles_total for ``model`` (compiled now unless precompiled), or why not."""
    accel, system, mode = SCENARIOS[scenario]
    tag = model.parent.name if model.parent.name.startswith("zoo") else ""
    out = (PRECOMPILED / scenario) if core == "default" and not tag else work / core / scenario / tag
    summary = out / f"{model.stem}_summary_{system}.csv"
    if not summary.exists():
        out = work / core / scenario / tag
        summary = out / f"{model.stem}_summary_{system}.csv"
        failed = compile_vela(model, scenario, core, out)
        if failed:
            return failed
    row = next(csv.DictReader(summary.open()))
    return out / f"{model.stem}_vela.tflite", float(row["cycles_total"])


def compile_vela(model: Path, scenario: str, core: str, out: Path) -> str | None:
    """Vela compiles ``model`` for ``scenario`` with its ``core`` into ``out`` (file, summary and
    per-layer CSV); why not, or None."""
    accel, system, mode = SCENARIOS[scenario]
    command = [VELA, str(model), "--output-dir", str(out), "--accelerator-config", accel, "--system-config",
               system, "--memory-mode", mode, "--optimise", "Performance", "--verbose-performance"]
    if core == "legacy":
        command.append("--debug-force-legacy-core")
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if done.returncode or not (out / f"{model.stem}_summary_{system}.csv").exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return f"vela failed: {tail[0][:80]}"
    return None


def estimate(path: Path, scenario: str) -> float | str:
    try:
        return estimate_file(path, _options(scenario)).report.cycles_total
    except NpuplanError as error:
        return f"estimate failed: {str(error)[:90]}"


def own(model: Path, scenario: str, own_root: Path) -> Row:
    """npuplan's plan figure and npuplan's estimate of the file it emitted."""
    from npuplan.api import plan_and_emit
    from npuplan.emit import write_emitted
    from npuplan.report import build_report

    accel, system, mode = SCENARIOS[scenario]
    try:
        plan, emitted = plan_and_emit(str(model), accelerator_config=accel, system_config=system, memory_mode=mode,
                                      optimise="Performance")
        path, _ = write_emitted(plan, own_root / scenario / model.parent.name, emitted)
    except NpuplanError as error:
        return Row(scenario, model.stem, "npuplan", None, None, f"plan/emit failed: {str(error)[:80]}")
    cycles = estimate(path, scenario)
    reference = build_report(plan).cycles_total
    if isinstance(cycles, str):
        return Row(scenario, model.stem, "npuplan", reference, None, cycles)
    return Row(scenario, model.stem, "npuplan", reference, cycles)


def rows_for(model: Path, scenario: str, cores: list[str], with_own: bool, work: Path, own_root: Path) -> list[Row]:
    out = []
    for core in filter(None, cores):  # ``--cores ""``: npuplan's own rows only
        found = vela_file(model, scenario, core, work)
        if isinstance(found, str):
            out.append(Row(scenario, model.stem, f"vela-{core}", None, None, found))
            continue
        cycles = estimate(found[0], scenario)
        out.append(Row(scenario, model.stem, f"vela-{core}", found[1], None if isinstance(cycles, str) else cycles,
                       cycles if isinstance(cycles, str) else ""))
    if with_own:
        out.append(own(model, scenario, own_root))
    return out


def _line(row: Row) -> str:
    ref = f"{row.reference:12.0f}" if row.reference is not None else f"{'-':>12}"
    est = f"{row.estimate:12.0f}" if row.estimate is not None else f"{'-':>12}"
    ratio = f"{row.ratio:7.3f}" if row.ratio is not None else f"{'-':>7}"
    return f"{row.scenario[:22]:22} {row.model[:28]:28} {row.side:12} {ref} {est} {ratio} {row.note}"


def summary(rows: list[Row]) -> list[str]:
    out = []
    for scenario in dict.fromkeys(r.scenario for r in rows):
        for side in dict.fromkeys(r.side for r in rows):
            mine = [r for r in rows if r.scenario == scenario and r.side == side]
            ratios = sorted((r.ratio, r.model) for r in mine if r.ratio is not None)
            if not ratios:
                continue
            values = [v for v, _ in ratios]
            worst = max(ratios, key=lambda item: abs(item[0] - 1))
            within = sum(abs(v - 1) <= 0.10 for v in values)
            within3 = sum(abs(v - 1) <= 0.03 for v in values)
            out.append(f"{scenario:34} {side:12} n={len(values):3} (failed {len(mine) - len(values)}) median "
                       f"{statistics.median(values):.3f} min {values[0]:.3f} max {values[-1]:.3f} worst "
                       f"{worst[0]:.3f} ({worst[1]}) within 3%: {within3}/{len(values)} within 10%: "
                       f"{within}/{len(values)}")
    return out


def compiled_file(work: Path, scenario: str, model: str, side: str, own_root: Path | None = None) -> Path | None:
    """The file a row of ``side`` timed (as ``vela_file`` and ``own`` write them; npuplan's under
    ``own_root``, by default ``work``/npuplan), if still there; ``scenario`` may be the log's
    truncated name."""
    full = next((s for s in SCENARIOS if s.startswith(scenario)), scenario)
    if side == "npuplan":
        found = sorted(((own_root or work / "npuplan") / full).glob(f"*/{model}_npuplan.tflite"))
    else:
        core = side.removeprefix("vela-")
        found = sorted((work / core / full).glob(f"**/{model}_vela.tflite"))
        if core == "default":
            found += [p for p in [PRECOMPILED / full / f"{model}_vela.tflite"] if p.exists()]
    return found[0] if found else None


def cpu_operator_counts(rows: list[Row], work: Path, own_root: Path | None = None) -> dict[tuple[str, str, str], int]:
    """CPU operators left in each timed file, by (scenario, model, side): npuplan's file and Vela's
    compare on one clock only when the same work is left to the CPU (a file that runs more on the
    NPU spends NPU cycles the other spends on the CPU, which no cycles_total counts)."""
    from npuplan.estimate.read import read_compiled

    counts = {}
    for r in rows:
        path = compiled_file(work, r.scenario, r.model, r.side, own_root) if r.estimate is not None else None
        if path is not None:
            try:
                counts[(r.scenario, r.model, r.side)] = len(read_compiled(path).cpu_operators)
            except NpuplanError:
                continue
    return counts


def one_clock(rows: list[Row], cpu_counts: dict[tuple[str, str, str], int] | None = None) -> list[str]:
    """npuplan's file against the better of Vela's two files, all three timed by npuplan estimate;
    with ``cpu_counts``, also the networks where both files leave as many operators to the CPU."""
    out = []
    for scenario in dict.fromkeys(r.scenario for r in rows):
        by_model: dict[str, dict[str, float]] = {}
        for r in rows:
            if r.scenario == scenario and r.estimate is not None:
                by_model.setdefault(r.model, {})[r.side] = r.estimate
        ratios, same_cpu = [], []
        for model, found in by_model.items():
            if "npuplan" not in found or len(found) < 2:
                continue
            side, best = min(((k, v) for k, v in found.items() if k != "npuplan"), key=lambda kv: kv[1])
            if best <= 0 or found["npuplan"] <= 0:  # a file with no NPU work (everything on the CPU): no ratio
                continue
            ratios.append((found["npuplan"] / best, model))
            counts = cpu_counts or {}
            mine, theirs = counts.get((scenario, model, "npuplan")), counts.get((scenario, model, side))
            if mine is not None and mine == theirs:
                same_cpu.append(ratios[-1])
        if not ratios:
            continue
        out.append(one_clock_line(f"{scenario:34} one clock: npuplan's file / better Vela file", sorted(ratios)))
        if same_cpu:
            out.append(one_clock_line(f"{scenario:34} one clock, as many CPU operators in both files:",
                                       sorted(same_cpu)))
    return out


def common_work(rows: list[Row], work: Path, sources: dict[str, Path],
                own_root: Path | None = None) -> list[CommonWork]:
    """Each network of ``rows`` with npuplan's file and a Vela file timed, on the operators both run
    on the NPU (``common_work.compare``; ``sources``: each source model by name)."""
    found: dict[tuple[str, str], dict[str, float]] = {}
    for r in rows:
        if r.estimate is not None:
            found.setdefault((r.scenario, r.model), {})[r.side] = r.estimate
    locate = lambda scenario, model, side: compiled_file(work, scenario, model, side, own_root)  # noqa: E731
    out = []
    for (scenario, model), estimates in found.items():
        source = sources.get(model) or next((p for m, p in sources.items() if m.startswith(model)), None)
        if estimates.get("npuplan", 0) <= 0 or min(v for k, v in estimates.items()) <= 0 or source is None:
            continue  # as ``one_clock``: a file with no NPU work (everything on the CPU) has no ratio
        if len(estimates) < 2:
            continue
        full = next(s for s in SCENARIOS if s.startswith(scenario))
        out.append(compare(scenario, model, estimates, source, locate, _options(full)))
    return out


def rows_from_log(path: Path) -> list[Row]:
    """The rows of a table this bench printed (to summarise a run again): those before its summary
    (the per-network table of common work after it has rows of its own)."""
    rows = []
    for line in path.read_text().splitlines():
        if line.startswith("# summary"):
            break
        parts = line.split(maxsplit=6)
        if len(parts) < 6 or line.startswith(("#", "scenario")) or parts[2] not in SIDES:
            continue
        number = lambda text: None if text == "-" else float(text)  # noqa: E731
        rows.append(Row(parts[0], parts[1], parts[2], number(parts[3]), number(parts[4]),
                        parts[6] if len(parts) > 6 else ""))
    return rows


def merged(rows: list[Row]) -> list[Row]:
    """``rows`` of several runs as one table: by scenario, then network in the order first seen, then
    side; a row seen again (same scenario, network and side) replaces the earlier one."""
    found = {(r.scenario, r.model, r.side): r for r in rows}
    scenarios = {s: k for k, s in enumerate(dict.fromkeys(r.scenario for r in rows))}
    networks = {m: k for k, m in enumerate(dict.fromkeys(r.model for r in rows))}
    return sorted(found.values(), key=lambda r: (scenarios[r.scenario], networks[r.model], SIDES.index(r.side)))


def _header(argv: list[str]) -> list[str]:
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    vela = subprocess.run([VELA, "--version"], capture_output=True, text=True).stdout.strip()
    return [f"# command: python bench/estimate_fidelity.py {' '.join(argv)}", f"# commit: {commit}",
            f"# Vela: {vela}", f"# date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
            "# ratio = npuplan estimate of the file / reference (vela-*: Vela's cycles_total for its own file; "
            "npuplan: the plan's cycles_total for the file it emitted)",
            f"{'scenario':22} {'model':28} {'side':12} {'reference':>12} {'estimate':>12} {'ratio':>7}"]


def _tail(rows: list[Row], work: Path, own_root: Path, groups: list[str]) -> list[str]:
    """The summary: per side, then per scenario the one-clock lines (all networks, as many CPU
    operators, common work), then the per-network table of common work."""
    clock = one_clock(rows, cpu_operator_counts(rows, work, own_root))
    found = common_work(rows, work, {p.stem: p for p in models(groups, 1)}, own_root)
    common = summary_lines(found)
    scenarios = list(dict.fromkeys(r.scenario for r in rows))
    by_scenario = sorted(clock + common, key=lambda line: next(k for k, s in enumerate(scenarios) if line.startswith(s)))
    return ["", "# summary"] + summary(rows) + by_scenario + table(found)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", default="public,testdata,zoo")
    parser.add_argument("--zoo-every", type=int, default=1, help="every Nth model of each zoo (default: all)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--cores", default="default,legacy", help="Vela's cores to compile with (\"\": none)")
    parser.add_argument("--no-own", action="store_true", help="skip npuplan's own file against its plan figure")
    parser.add_argument("--work", default="/tmp/estimate_fidelity",
                        help="where compiled files are written, and Vela's found again (a cache: a Vela file "
                             "already there is not compiled again)")
    parser.add_argument("--own-work", default=None, metavar="DIR",
                        help="where npuplan's files are written (default: WORK/npuplan; another directory keeps "
                             "them apart from another run sharing WORK's Vela files)")
    parser.add_argument("--results", default=None, help="also write the table to this file")
    parser.add_argument("--summarise", nargs="+", default=None, metavar="LOG",
                        help="only summarise the tables in LOG... again (several: their rows merged, e.g. a run "
                             "of Vela's cores and one of npuplan's own rows; with --results, the merged table)")
    args = parser.parse_args(argv)
    work = Path(args.work)
    own_root = Path(args.own_work) if args.own_work else work / "npuplan"
    groups = args.groups.split(",")
    if args.summarise:
        rows = merged([row for log in args.summarise for row in rows_from_log(Path(log))])
        tail = _tail(rows, work, own_root, groups)
        print("\n".join(tail[2:]))
        if args.results:
            Path(args.results).write_text("\n".join(_header(argv) + [_line(r) for r in rows] + tail) + "\n")
        return 0
    lines = _header(argv)
    print("\n".join(lines), flush=True)
    rows: list[Row] = []
    for scenario in args.scenarios.split(","):
        for model in models(groups, args.zoo_every):
            for row in rows_for(model, scenario, args.cores.split(","), not args.no_own, work, own_root):
                rows.append(row)
                lines.append(_line(row))
                print(lines[-1], flush=True)
    tail = _tail(rows, work, own_root, groups)
    lines += tail
    print("\n".join(tail))
    if args.results:
        Path(args.results).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
