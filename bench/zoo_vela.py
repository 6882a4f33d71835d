"""Run Vela 5.2.0 (both cores) over a zoo in the benchmark scenarios; cache one JSON line per run.

Usage:
  python bench/zoo_vela.py --vela PATH/TO/vela [--zoo /work/zoo] [--out bench/reference/zoo_vela_5.2.0.jsonl]
                           [--jobs 2] [--model NAME ...]

Each line: model, its sha256, scenario, core (``legacy``: ``--debug-force-legacy-core``;
``default``), return code, the summary CSV row, the CPU/NPU operator counts Vela prints, the
per-layer rows of ``--verbose-performance``, the CPU operators (Vela's type and output name, from
``--show-cpu-operations``) and the tail of the error when Vela fails. The
per-layer rows keep the operator, target, cycle, access and MAC columns of the header Vela
writes (the two cores name the operator column differently: ``TFLite_operator`` in legacy,
``Original Operator`` in default), as ``layer_columns`` once and ``layers`` as lists, numbers as
numbers. Runs already in the file for the same model bytes are skipped. Asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import glob
import hashlib
import json
import os
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from scenarios import BUDGET_256K, SCENARIOS, cli_flags

HERE = Path(__file__).resolve().parent
LAYER_COLUMNS = ("TFLite_operator", "Original Operator", "NNG Operator", "Target", "Op Cycles", "NPU", "SRAM AC",
                 "DRAM AC", "OnFlash AC", "OffFlash AC", "MAC Count", "Name")


CPU_OP = re.compile(r"^\s*CPU: (\S+) = (.*?) \((?:inputs|outputs) ", re.M)  # --show-cpu-operations: type, name


def _number(text: str) -> str | int | float:
    try:
        value = float(text)
    except ValueError:
        return text
    return int(value) if value.is_integer() else value


def read_layers(path: Path) -> tuple[list[str], list[list]]:
    """The columns of LAYER_COLUMNS that Vela's per-layer CSV has, and its rows in those columns."""
    with path.open() as f:
        rows = list(csv.reader(f))
    if not rows:
        return [], []
    header = rows[0]
    kept = [header.index(c) for c in LAYER_COLUMNS if c in header]
    return [header[i] for i in kept], [[_number(row[i]) for i in kept] for row in rows[1:]]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def run(vela: str, model: Path, scenario: str, options: dict[str, str], core: str) -> dict:
    with tempfile.TemporaryDirectory() as out:
        cmd = [vela, str(model), "--output-dir", out, "--verbose-performance", "--show-cpu-operations",
               *cli_flags(options)]
        if core == "legacy":
            cmd.append("--debug-force-legacy-core")
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            rc, stdout, stderr = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired:
            rc, stdout, stderr = -9, "", "timeout after 600 s"
        rec: dict = {"model": model.stem, "sha": sha256(model), "scenario": scenario, "core": core, "rc": rc}
        summaries = glob.glob(os.path.join(out, "*_summary_*.csv"))
        if summaries:
            rows = list(csv.reader(open(summaries[0])))
            rec["summary"] = dict(zip(rows[0], rows[1]))
        else:
            rec["error"] = (stderr or stdout)[-600:]
        layers = glob.glob(os.path.join(out, "*_per-layer.csv"))
        if layers:
            rec["layer_columns"], rec["layers"] = read_layers(Path(layers[0]))
        for line in stdout.splitlines():
            for key in ("CPU operators", "NPU operators"):
                if line.startswith(key) and "=" in line:
                    rec[key] = line.split("=")[1].strip().split()[0]
        rec["cpu_ops"] = [[m.group(1), m.group(2)] for m in CPU_OP.finditer(stdout)]
        return rec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vela", required=True)
    parser.add_argument("--zoo", type=Path, default=Path("/work/zoo"))
    parser.add_argument("--out", type=Path, default=HERE / "reference" / "zoo_vela_5.2.0.jsonl")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--model", nargs="*")
    parser.add_argument("--scenario", nargs="*", help="only these scenarios")
    parser.add_argument("--core", nargs="*", default=["legacy", "default"], help="legacy and/or default")
    args = parser.parse_args()
    done = set()
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            rec = json.loads(line)
            done.add((rec["sha"], rec["scenario"], rec["core"]))
    scenarios = {**SCENARIOS, **BUDGET_256K}
    jobs = []
    for model in sorted(args.zoo.glob("*.tflite")):
        if args.model and model.stem not in args.model:
            continue
        digest = sha256(model)
        for scenario, options in scenarios.items():
            if args.scenario and scenario not in args.scenario:
                continue
            for core in args.core:
                if (digest, scenario, core) not in done:
                    jobs.append((model, scenario, options, core))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(args.jobs) as pool, args.out.open("a") as out:
        for rec in pool.map(lambda j: run(args.vela, *j), jobs):
            out.write(json.dumps(rec, separators=(",", ":")) + "\n")
            out.flush()
            cycles = rec.get("summary", {}).get("cycles_total", "-")
            print(f"{rec['model']:<28} {rec['scenario']:<36} {rec['core']:<8} rc={rec['rc']} cycles={cycles}", flush=True)


if __name__ == "__main__":
    main()
