"""npuplan and Vela 5.2.0 side by side on the tenth zoo (files from other toolchains), per network
and scenario: the operator types, the NPU/CPU split of each tool, total cycles (npuplan's estimate
over Vela's default core's, minus 1) and the functional check's verdict (from a
``bench/run_diff.py`` results file of the same networks).

Usage: python bench/zoo/zoo10_report.py --models DIR [--models DIR ...] [--run-diff FILE ...]
                                        [--scenario NAME ...] [--out bench/results/zoo10_models.txt]

Each tool runs as a fresh process with the scenario's flags (bench/scenarios.py): ``npuplan plan
--emit-tflite`` (this tree's ``src``) and ``vela`` (its default core). A row keeps an npuplan exit
status other than 0 with its one-line message, and flags a traceback (``TRACEBACK``). Which side is
trusted: LiteRT for function (the verdict), Vela's figures for timing (npuplan's cost model
follows Vela's). Prints figures and writes them row by row; asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
sys.path[:0] = [str(BENCH), str(BENCH.parent / "src")]

from scenarios import ALL, SCENARIOS, cli_flags  # noqa: E402

from npuplan.io.tflite import read_tflite  # noqa: E402

VELA = "/work/velavenv/bin/vela"
SHORT = {"u55_128_highend_shared_perf": "u55-128 Perf", "u55_64_deep_shared_size": "u55-64 Size",
         "u65_256_highend_dedicated384k_perf": "u65-256 Ded384"}
COUNT = re.compile(r"^(CPU|NPU) operators\s*=?\s*(\d+)", re.M)


def _summary(out: str) -> dict[str, str]:
    found = sorted(Path(out).glob("*_summary_*.csv"))
    if not found:
        return {}
    rows = list(csv.reader(found[0].open()))
    return dict(zip(rows[0], rows[1])) if len(rows) > 1 else {}


def run_tool(command: list[str], model: Path, flags: list[str]) -> dict:
    """One tool's run: exit status, CPU/NPU operator counts, total cycles, the first error line."""
    with tempfile.TemporaryDirectory() as out:
        try:
            done = subprocess.run([*command, str(model), "--output-dir", out, *flags], capture_output=True, text=True,
                                  timeout=900)
            rc, stdout, stderr = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired:
            rc, stdout, stderr = -9, "", "timeout after 900 s"
        counts = {kind: int(n) for kind, n in COUNT.findall(stdout)}
        summary = _summary(out)
    error = next((line for line in (stderr + stdout).splitlines() if "error" in line.lower()), "")
    return {"rc": rc, "cpu": counts.get("CPU"), "npu": counts.get("NPU"), "traceback": "Traceback" in stderr,
            "cycles": float(summary["cycles_total"]) if summary.get("cycles_total") else None, "error": error}


def verdicts(paths: list[Path]) -> dict[tuple[str, str], str]:
    """(model, scenario) -> the run_diff verdict and npuplan's largest difference, outputs joined."""
    found: dict[tuple[str, str], list[str]] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            parts = line.split(" ", 3)
            if line.startswith("#") or len(parts) < 4 or parts[1] not in ALL:
                continue
            verdict = parts[3].split(":", 1)[1].split("|")[0].strip() if ":" in parts[3] else "?"
            diff = re.search(r"npuplan max \|diff\| (\S+), (\d+) of", line)
            found.setdefault((parts[0], parts[1]), []).append(f"{verdict}({diff.group(1)}/{diff.group(2)})" if diff
                                                                else verdict)
    return {key: ",".join(values) for key, values in found.items()}


def op_types(model: Path) -> str:
    try:
        return " ".join(sorted({op.type for op in read_tflite(model).main.ops}))
    except Exception as error:  # noqa: BLE001 - a file npuplan cannot read is a row
        return f"unreadable: {error}"


def row(model: Path, scenario: str, checked: dict[tuple[str, str], str], tally: dict[str, list]) -> str:
    flags = cli_flags(SCENARIOS[scenario])
    ours = run_tool([sys.executable, "-m", "npuplan", "plan", "--emit-tflite"], model, flags)
    vela = run_tool([VELA], model, flags)
    tally["rows"].append(model.stem)
    if ours["rc"]:
        tally["npuplan failed"].append(f"{model.stem} {SHORT[scenario]}")
    if ours["traceback"]:
        tally["traceback"].append(f"{model.stem} {SHORT[scenario]}")
    if ours["rc"] == 0 and vela["rc"] == 0 and ours["cpu"] is not None and vela["cpu"] is not None:
        if ours["cpu"] > vela["cpu"]:
            tally["more CPU operators than Vela"].append(f"{model.stem} {SHORT[scenario]} {ours['cpu']}>{vela['cpu']}")
        elif ours["cpu"] == vela["cpu"] and ours["cycles"] and vela["cycles"]:
            tally["cycles ratio (same CPU count)"].append(ours["cycles"] / vela["cycles"])
    ratio = (f"{ours['cycles'] / vela['cycles'] - 1:+.1%}" if ours["cycles"] and vela["cycles"] else "-")
    mine = f"{ours['npu']}/{ours['cpu']}" if ours["rc"] == 0 else f"rc={ours['rc']}"
    theirs = f"{vela['npu']}/{vela['cpu']}" if vela["rc"] == 0 else f"rc={vela['rc']}"
    cycles = f"{ours['cycles']:.0f}" if ours["cycles"] else "-"
    vela_cycles = f"{vela['cycles']:.0f}" if vela["cycles"] else "-"
    note = ("TRACEBACK " if ours["traceback"] else "") + (ours["error"][:140] if ours["rc"] else "")
    return (f"{model.stem:<44} {SHORT[scenario]:<14} npu/cpu {mine:>7} vela {theirs:>7}  cycles {cycles:>9} "
            f"vela {vela_cycles:>9} {ratio:>7}  check {checked.get((model.stem, scenario), '-')}  {note}").rstrip()


def run_header(script: str) -> str:
    """The results file's first lines: the command, this tree's commit, Vela's version, the date."""
    commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    return (f"# python {script} {' '.join(sys.argv[1:])}\n# commit {commit}, Vela 5.2.0, "
            f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, action="append", required=True)
    parser.add_argument("--run-diff", type=Path, action="append", default=[])
    parser.add_argument("--scenario", action="append", choices=sorted(SHORT))
    parser.add_argument("--out", type=Path, default=BENCH / "results" / "zoo10_models.txt")
    args = parser.parse_args()
    checked = verdicts(args.run_diff)
    models = [m for d in args.models for m in sorted(d.glob("*.tflite"))]
    with args.out.open("w") as out:
        header = (run_header("bench/zoo/zoo10_report.py") + "\n"
                  "# npu/cpu: operators on the NPU / on the CPU (each tool's count); cycles: npuplan's estimate, "
                  "Vela default core's, npuplan over Vela minus 1; check: run_diff verdict(npuplan max diff/elements)")
        print(header, file=out, flush=True)
        tally: dict[str, list] = {key: [] for key in ("rows", "npuplan failed", "traceback",
                                                      "more CPU operators than Vela", "cycles ratio (same CPU count)")}
        for model in models:
            print(f"## {model.stem}: {op_types(model)}", file=out, flush=True)
            for scenario in args.scenario or list(SHORT):
                line = row(model, scenario, checked, tally)
                print(line, flush=True)
                print(line, file=out, flush=True)
        print(summary(tally, checked), file=out, flush=True)


def tally_lines(tally: dict[str, list], ratios_key: str, label: str) -> list[str]:
    """Closing lines of a tally (``rows`` and lists of findings by kind, emptied here): the runs, each
    kind's count and items, and the geomean, least and largest of the ratios under ``ratios_key``."""
    ratios = tally.pop(ratios_key)
    lines = [f"# {len(tally.pop('rows'))} runs"]
    lines += [f"# {key}: {len(values)} {'; '.join(values)}".rstrip() for key, values in tally.items()]
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        lines.append(f"# {label}: geomean {geomean:.3f} over {len(ratios)}, min {min(ratios):.3f}, "
                     f"max {max(ratios):.3f}")
    return lines


def summary(tally: dict[str, list], checked: dict[tuple[str, str], str]) -> str:
    """Closing lines: runs, failures, tracebacks, CPU counts above Vela's, cycle ratios, verdicts."""
    lines = tally_lines(tally, "cycles ratio (same CPU count)",
                        "npuplan/Vela cycles where both run as many operators on the CPU")
    verdict_counts: dict[str, int] = {}
    for value in checked.values():
        for verdict in value.split(","):
            verdict_counts[verdict.split("(")[0]] = verdict_counts.get(verdict.split("(")[0], 0) + 1
    lines.append(f"# run_diff outputs by verdict: {', '.join(f'{k} {v}' for k, v in sorted(verdict_counts.items()))}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
