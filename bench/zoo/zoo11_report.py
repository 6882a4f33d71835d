"""npuplan and Vela 5.2.0 side by side on the eleventh zoo, per network and scenario, on one clock:
the operator types, each tool's NPU/CPU split, npuplan's estimate of its own file and of Vela's
better file (``bench/common_work.py``: the comparison on the operators both run on the NPU),
sram_memory_used against the better of Vela's two cores, and the functional check's verdict (from
a ``bench/run_diff.py`` results file of the same networks and scenarios).

Usage: python bench/zoo/zoo11_report.py --models DIR [--run-diff FILE ...] [--scenario NAME ...]
                                        [--set zoo11|zoo12] [--keep DIR] [--out FILE]

Scenarios: the three public ones and the set's own (bench/scenarios.py ZOO11's six, or ZOO12's five
for the twelfth zoo) by default; ``--out`` defaults to bench/results/<set>_models.txt.
npuplan plans and emits in this process (this tree's ``src``, ``plan_and_emit``); Vela runs its
two cores as fresh processes; their files stay under ``--keep`` (default a temporary directory).
Per row: ``npu/cpu`` counts the operators each file leaves to the CPU in its main subgraph (the
same rule for both tools) and the rest of the source network's; ``cycles`` is npuplan's
estimate of each file (one clock) and the common-work ratio; ``sram`` is KiB, ``*`` marking
npuplan above the better Vela core, ``c`` when that core leaves more operators to the CPU.
Flags in the closing lines: failures, tracebacks, more CPU operators than Vela, common-work ratios
above 1.01, Size-mode SRAM above Vela. Which side is trusted: LiteRT for function (the verdict),
npuplan's estimate for time (the same clock on both files). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
import tempfile
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
sys.path[:0] = [str(HERE), str(BENCH), str(BENCH.parent / "src")]

from common_work import CommonWork, compare  # noqa: E402
from run_diff import run_side, verdict  # noqa: E402
from scenarios import ALL, SCENARIOS, ZOO11, ZOO12, cli_flags  # noqa: E402
from zoo10_report import op_types, run_header, tally_lines, verdicts  # noqa: E402

from npuplan.api import make_options, plan_and_emit  # noqa: E402
from npuplan.errors import NpuplanError  # noqa: E402
from npuplan.estimate import estimate_file  # noqa: E402
from npuplan.estimate.read import ETHOS_U  # noqa: E402
from npuplan.io.tflite import read_tflite  # noqa: E402

VELA = "/work/velavenv/bin/vela"
CORES = {"vela-default": (), "vela-legacy": ("--debug-force-legacy-core",)}
KIB = 1024


@dataclass(frozen=True)
class Compiled:
    """One tool's file of one network: where it is, its SRAM (KiB), the source operators it
    leaves to the CPU, npuplan's estimate of it (cycles), or why there is none."""

    path: Path | None = None
    sram_kib: float | None = None
    cpu_ops: int | None = None
    cycles: float | None = None
    error: str = ""
    traceback: bool = False


def cpu_count(compiled: Path) -> int:
    """The operators ``compiled`` runs outside its ethos-u operators, in its main subgraph (another
    subgraph, e.g. an unreferenced copy of the main one that npuplan keeps for the CPU and Vela
    compiles, never runs), counted rather than matched by output tensor name (a file whose tensors have no
    names, or the same name, is renamed by index when read, and Vela's file has other indices)."""
    return sum(op.type != ETHOS_U for op in read_tflite(compiled).subgraphs[0].ops)


def timed(compiled: Compiled, source: Path, options: dict[str, str]) -> Compiled:
    """``compiled`` with its CPU count and npuplan's estimate of it."""
    if compiled.path is None:
        return compiled
    try:
        cpu = cpu_count(compiled.path)
    except NpuplanError as error:  # a file npuplan cannot read is a row, not the end of the run
        return Compiled(compiled.path, compiled.sram_kib, error=f"read: {str(error)[-100:]}")
    try:
        cycles = estimate_file(compiled.path, make_options(**options)).report.cycles_total
    except NpuplanError as error:
        return Compiled(compiled.path, compiled.sram_kib, cpu, error=f"estimate: {str(error)[:100]}")
    return Compiled(compiled.path, compiled.sram_kib, cpu, cycles)


def npuplan_side(model: Path, options: dict[str, str], keep: Path) -> Compiled:
    try:
        planned, emitted = plan_and_emit(model, **options)
    except NpuplanError as error:
        return Compiled(error=f"{type(error).__name__}: {str(error).splitlines()[0][:140]}")
    except Exception as error:  # noqa: BLE001 - a crash is a row
        traceback.print_exc()
        return Compiled(error=f"{type(error).__name__}: {str(error)[:140]}", traceback=True)
    path = keep / "npuplan.tflite"
    path.write_bytes(emitted.data)
    return Compiled(path, planned.sram_memory_used_bytes / KIB)


def vela_side(model: Path, options: dict[str, str], keep: Path, extra: tuple[str, ...]) -> Compiled:
    out = keep / ("legacy" if extra else "default")
    out.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run([VELA, str(model), *cli_flags(options), *extra, "--output-dir", str(out)],
                              capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        return Compiled(error="timeout after 900 s")
    if done.returncode or not list(out.glob("*_vela.tflite")):
        return Compiled(error=((done.stderr.strip().splitlines() or ["no output"])[-1])[:140])
    return vela_output(out)


def vela_output(out: Path) -> Compiled:
    """Vela's file in its output directory ``out`` and its sram_memory_used (KiB)."""
    files, summaries = sorted(out.glob("*_vela.tflite")), sorted(out.glob("*_summary_*.csv"))
    rows = list(csv.DictReader(summaries[0].open())) if summaries else []
    return Compiled(files[0], float(rows[0]["sram_memory_used"]) if rows else None)


def compile_all(model: Path, scenario: str, keep: Path) -> dict[str, Compiled]:
    options = ALL[scenario]
    place = keep / scenario / model.stem
    place.mkdir(parents=True, exist_ok=True)
    sides = {"npuplan": npuplan_side(model, options, place)}
    sides.update({side: vela_side(model, options, place, extra) for side, extra in CORES.items()})
    return {side: timed(c, model, options) for side, c in sides.items()}


def one_clock(model: Path, scenario: str, sides: dict[str, Compiled]) -> CommonWork | None:
    """npuplan's file against Vela's better file on one clock, that file chosen among those leaving
    no more operators to the CPU than npuplan's when there is one (a core that leaves most of the
    network to the CPU, as the legacy core does with buffers stored by offset, is not the peer)."""
    estimates = {side: c.cycles for side, c in sides.items() if c.cycles is not None}
    mine = sides["npuplan"].cpu_ops
    peers = {side for side, c in sides.items()
             if side != "npuplan" and c.cycles is not None and mine is not None and c.cpu_ops is not None
             and c.cpu_ops <= mine}
    if peers:
        estimates = {side: cycles for side, cycles in estimates.items() if side == "npuplan" or side in peers}
    if "npuplan" not in estimates or len(estimates) < 2:
        return None
    locate = lambda _s, _m, side: sides[side].path  # noqa: E731
    return compare(scenario, model.stem, estimates, model, locate, make_options(**ALL[scenario]))


def sram_mark(sides: dict[str, Compiled]) -> tuple[str, float | None]:
    """('*' | 'c' | '', the better Vela core's SRAM in KiB)."""
    ours = sides["npuplan"]
    vela = [c for side, c in sides.items() if side != "npuplan" and c.sram_kib is not None]
    if ours.sram_kib is None or not vela:
        return "", None
    best = min(c.sram_kib for c in vela)
    below = [c for c in vela if c.sram_kib < ours.sram_kib - 0.005]
    if not below:
        return "", best
    more_cpu = all(c.cpu_ops is not None and ours.cpu_ops is not None and c.cpu_ops > ours.cpu_ops for c in below)
    return ("c" if more_cpu else "*"), best


def _split(c: Compiled, total: int) -> str:
    return f"{total - c.cpu_ops}/{c.cpu_ops}" if c.cpu_ops is not None else "-"


def check(model: Path, sides: dict[str, Compiled], samples: int) -> str:
    """run_diff's verdict per output (``bench/run_diff.py``: npuplan's file and Vela's default
    core's, else its legacy core's, against LiteRT on the same seeded inputs), with npuplan's
    largest difference and differing elements; '-' with no samples."""
    if samples <= 0:
        return "-"
    vela = next((c for side, c in sides.items() if side != "npuplan" and c.path is not None), Compiled())
    original = model.read_bytes()
    ours, theirs = (run_side(c.path.read_bytes() if c.path else None, c.error or "no file", original, samples, 0)
                    for c in (sides["npuplan"], vela))
    if not ours.diffs:
        return f"no run ({ours.error[:100]})"
    found = []
    for k, mine in enumerate(ours.diffs):
        found.append(f"{verdict(mine, theirs.diffs[k] if k < len(theirs.diffs) else None)}"
                     f"({mine.max_abs_diff:g}/{mine.differing})")
    return ",".join(found)


Saved = dict[str, dict]  # side -> sram_kib, error, traceback; "check" -> {"verdicts": str}


def cached_row(job: tuple[Path, str, Path, dict[tuple[str, str], str], int]) -> tuple[str, dict[str, list]]:
    """``row`` of the job, its files kept under ``--keep`` with what they do not hold (npuplan's SRAM,
    each side's error, the check's verdicts) as ``row.json``: read back from there when present, the
    files timed again (a run stopped early or rerun after a fix recomputes only the rows whose
    ``row.json`` was removed)."""
    model, scenario, keep, checked, samples = job
    place = keep / scenario / model.stem
    saved_path = place / "row.json"
    if saved_path.exists():
        saved = json.loads(saved_path.read_text())
        saved = from_line(saved[0]) if isinstance(saved, list) else saved  # a row kept as its printed line
        sides = kept_sides(model, scenario, place, saved)
    else:
        sides = compile_all(model, scenario, keep)
        verdicts_here = check(model, sides, samples) if samples > 0 else checked.get((model.stem, scenario), "-")
        saved = {side: {"sram_kib": c.sram_kib, "error": c.error, "traceback": c.traceback} for side, c in sides.items()}
        saved["check"] = {"verdicts": verdicts_here}
        saved_path.write_text(json.dumps(saved))
    return row(model, scenario, sides, saved["check"]["verdicts"])


def kept_sides(model: Path, scenario: str, place: Path, saved: Saved) -> dict[str, Compiled]:
    """The sides of a row from its kept files and ``saved``, timed again."""
    mine = saved["npuplan"]
    sides = {"npuplan": Compiled(None if mine["error"] else place / "npuplan.tflite", mine["sram_kib"],
                                 error=mine["error"], traceback=mine["traceback"])}
    for side, extra in CORES.items():
        error = saved[side]["error"]
        sides[side] = Compiled(error=error) if error else vela_output(place / ("legacy" if extra else "default"))
    return {side: timed(c, model, ALL[scenario]) for side, c in sides.items()}


_SIDE_ERROR = re.compile(r"(npuplan|vela-default|vela-legacy): (.*?)(?=; (?:npuplan|vela-default|vela-legacy): |$)")


def from_line(line: str) -> Saved:
    """What ``row.json`` holds, read from a row's printed line (the form rows were first kept in)."""
    sram = re.search(r" sram +(\S+) ", line)
    verdicts_here = re.search(r" check (.*?)(?= npuplan: | vela-default: | vela-legacy: |$)", line)
    errors = dict(_SIDE_ERROR.findall(line[verdicts_here.end():] if verdicts_here else ""))
    saved: Saved = {side: {"sram_kib": None, "error": errors.get(side, ""), "traceback": "TRACEBACK" in line}
                    for side in ("npuplan", *CORES)}
    if sram and sram.group(1) != "-":
        saved["npuplan"]["sram_kib"] = float(sram.group(1))
    saved["check"] = {"verdicts": verdicts_here.group(1) if verdicts_here else "-"}
    return saved


def row(model: Path, scenario: str, sides: dict[str, Compiled], verdicts_here: str) -> tuple[str, dict[str, list]]:
    """One line for a network in a scenario and its findings by kind."""
    ours, total, label = sides["npuplan"], len(read_tflite(model).subgraphs[0].ops), f"{model.stem} {scenario}"
    work = one_clock(model, scenario, sides)
    mark, vela_sram = sram_mark(sides)
    peer = size_peer(model, scenario, sides)
    tally = findings(label, scenario, sides, work, peer, verdicts_here)
    if mark == "*" and ALL[scenario].get("optimise") == "Size":
        tally["Size mode SRAM above Vela's better core"].append(f"{label} {ours.sram_kib:.1f}>{vela_sram:.1f} KiB")
    vela_text = " ".join(f"{side[5:]} {_split(c, total) if not c.error else 'rc!=0'}" for side, c in sides.items()
                         if side != "npuplan")
    sram = (f"{ours.sram_kib:8.2f} {vela_sram:8.2f}{mark or ' '}" if ours.sram_kib is not None and vela_sram is not None
            else f"{'-':>8} {'-':>8} ")
    peer_text = "" if ALL[scenario].get("optimise") != "Size" else (
        f" size-peer {peer.vela_side[5:]} {peer.common_ratio:.3f}" if peer and peer.common_ratio else " size-peer -")
    errors = "; ".join(f"{side}: {c.error}" for side, c in sides.items() if c.error)
    return (f"{model.stem:28} {scenario:34} {_split(ours, total):>7} {vela_text:28} {_clock(work)} sram {sram}"
            f"{peer_text} check {verdicts_here} {errors}").rstrip(), tally


def _clock(work: CommonWork | None) -> str:
    if work is None:
        return f"{'-':>10}"
    common = f"{work.common_ratio:6.3f}" if work.common_ratio is not None else f"{'-':>6} ({work.left_out})"
    return f"{work.npuplan_cycles:>10.0f} {work.vela_side[5:]:>7} {work.vela_cycles:>10.0f} {work.ratio:6.3f} {common}"


def size_peer(model: Path, scenario: str, sides: dict[str, Compiled]) -> CommonWork | None:
    """In Size mode, npuplan's file on one clock against the faster of the Vela files that use no
    more SRAM than npuplan's (None when every Vela file uses more: npuplan's plan is smaller)."""
    ours = sides["npuplan"]
    if ALL[scenario].get("optimise") != "Size" or ours.sram_kib is None:
        return None
    peers = {side: c for side, c in sides.items()
             if side == "npuplan" or (c.sram_kib is not None and c.sram_kib <= ours.sram_kib + 0.005)}
    return one_clock(model, scenario, peers)


def findings(label: str, scenario: str, sides: dict[str, Compiled], work: CommonWork | None, peer: CommonWork | None,
             verdicts_here: str) -> dict[str, list]:
    """A row's findings by kind (``KINDS``) but Size mode's SRAM."""
    tally: dict[str, list] = {key: [] for key in KINDS}
    ours = sides["npuplan"]
    tally["rows"].append(label)
    if ours.error.startswith("InfeasiblePlan"):
        vela_kib = [f"{c.sram_kib:.1f}" for side, c in sides.items() if side != "npuplan" and c.sram_kib is not None]
        tally["npuplan refused (InfeasiblePlan; Vela's cores' SRAM KiB / arena)"].append(
            f"{label} {'+'.join(vela_kib)}/{int(ALL[scenario].get('arena_cache_size', 0)) // KIB or '-'}")
    elif ours.error:
        tally["npuplan failed"].append(label)
    if ours.traceback:
        tally["traceback"].append(label)
    vela_cpu = [c.cpu_ops for side, c in sides.items() if side != "npuplan" and c.cpu_ops is not None]
    if ours.cpu_ops is not None and vela_cpu and ours.cpu_ops > min(vela_cpu):
        tally["more CPU operators than Vela's better core"].append(f"{label} {ours.cpu_ops}>{min(vela_cpu)}")
    common = work.common_ratio if work is not None else None
    if common is not None:
        tally["common"].append(common)
        if common > 1.01:
            tally[f"{ALL[scenario]['optimise']}: slower than Vela's better file on common work (>1.01)"].append(
                f"{label} {common:.3f}")
    if peer is not None and peer.common_ratio is not None and peer.common_ratio > 1.01:
        tally["Size: slower than the faster Vela file using no more SRAM (>1.01)"].append(
            f"{label} {peer.common_ratio:.3f}")
    if any(bad in verdicts_here for bad in ("WORSE", "DIFF", "no run")):
        tally["check WORSE, DIFF or no run"].append(f"{label} {verdicts_here[:60]}")
    return tally


HEADER = ("# columns: model, scenario, npuplan's npu/cpu (source operators on the NPU / left to the CPU), Vela's per "
          "core, npuplan's estimate of its file, Vela's better file (core) and npuplan's estimate of it, ratio on all "
          "work, ratio on common work (or why none), sram KiB npuplan / better Vela core (* above, c above with "
          "Vela leaving more to the CPU), in Size mode the common-work ratio against the faster Vela file using no "
          "more SRAM (size-peer; - when every Vela file uses more), run_diff verdict per output (npuplan max diff / "
          "differing elements)")


KINDS = ("rows", "npuplan failed", "npuplan refused (InfeasiblePlan; Vela's cores' SRAM KiB / arena)", "traceback",
         "more CPU operators than Vela's better core",
         "Performance: slower than Vela's better file on common work (>1.01)",
         "Size: slower than Vela's better file on common work (>1.01)",
         "Size: slower than the faster Vela file using no more SRAM (>1.01)", "Size mode SRAM above Vela's better core",
         "check WORSE, DIFF or no run", "common")


def scenarios(model: Path, args: argparse.Namespace) -> list[str]:
    """The scenarios ``model`` runs in: those named, else the public three and the set's own (the
    public three only for a network of more than ``--public-only-above`` operators)."""
    if args.scenario:
        return args.scenario
    big = args.public_only_above and len(read_tflite(model).subgraphs[0].ops) > args.public_only_above
    return [*SCENARIOS] if big else [*SCENARIOS, *SETS[args.set]]


SETS = {"zoo11": ZOO11, "zoo12": ZOO12}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, action="append", required=True)
    parser.add_argument("--run-diff", type=Path, action="append", default=[])
    parser.add_argument("--scenario", action="append", choices=sorted(ALL))
    parser.add_argument("--keep", type=Path, help="keep the files and rows here (rows found here are reused)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--samples", type=int, default=2, help="run_diff's seeded samples per row (0: no check)")
    parser.add_argument("--public-only-above", type=int, default=0, metavar="OPS",
                        help="networks of more operators run in the public scenarios only (time)")
    parser.add_argument("--set", choices=sorted(SETS), default="zoo11", help="the zoo's own scenarios")
    parser.add_argument("--out", type=Path, help="default: bench/results/<set>_models.txt")
    args = parser.parse_args()
    args.out = args.out or BENCH / "results" / f"{args.set}_models.txt"
    checked = verdicts(args.run_diff)
    models = [m for d in args.models for m in sorted(d.glob("*.tflite"))]
    tally: dict[str, list] = {key: [] for key in KINDS}
    with args.out.open("w") as out, tempfile.TemporaryDirectory() as scratch, ProcessPoolExecutor(args.jobs) as pool:
        keep = args.keep or Path(scratch)
        print(f"{run_header('bench/zoo/zoo11_report.py')}\n{HEADER}", file=out, flush=True)
        jobs = [(m, s, keep, checked, args.samples) for m in models for s in scenarios(m, args)]
        for k, ((model, scenario, *_), (line, found)) in enumerate(zip(jobs, pool.map(cached_row, jobs))):
            if k == 0 or jobs[k - 1][0] != model:
                print(f"## {model.stem}: {op_types(model)}", file=out, flush=True)
            for key, values in found.items():
                tally.setdefault(key, []).extend(values)
            print(line, flush=True)
            print(line, file=out, flush=True)
        print("\n".join(tally_lines(tally, "common", "one clock on common work, npuplan over Vela's better file")),
              file=out, flush=True)


if __name__ == "__main__":
    main()
