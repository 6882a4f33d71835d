"""Stateful networks run, and run right: per network, npuplan's compiled file and Vela 5.2.0's, each
emitted (or compiled), validated (``npuplan validate``'s replay), run (``npuplan run``'s machinery:
the NPU simulator, LiteRT for the CPU operators, the runner holding variable tensors and resource
variables) and checked against the original model run by LiteRT on the same seeded inputs, the
samples in turn on one loaded model so the state evolves alike (``npuplan check --samples N``).

The models: bench/zoo/lstm_models.py's (variable tensors: LSTM, LSTM between FULLY_CONNECTED, SVDF)
and bench/zoo/stateful_tf.py's (TensorFlow's resource variables: CALL_ONCE, VAR_HANDLE,
READ_VARIABLE, ASSIGN_VARIABLE), or any given. A row per model: each side's ethos-u operators and
NPU operations, whether it validates, and its largest difference and differing elements against
LiteRT (``exact``: bit for bit); Vela's file from its default core and from its legacy core (which
runs LSTMs on the NPU). The verdict: ``ok`` when npuplan's file differs no more than Vela's (its
default core's, or the legacy core's where the default's does not run), ``WORSE`` otherwise; ``exact``
or ``DIFF`` without a Vela file that runs. LiteRT is the reference; Vela's file runs on silicon, so a
difference it shares is the NPU's arithmetic (README.md names it). Prints figures; asserts nothing.

Usage: python bench/stateful_run.py MODEL_OR_DIR [...] [--samples 3] [--seed 0]
       [--out bench/results/stateful_run.txt]
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
from pathlib import Path

from run_diff import VELA, npuplan_file, run_side, vela_file, verdict

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.errors import NpuplanError  # noqa: E402
from npuplan.regstream import validate_tflite  # noqa: E402
from npuplan.run import ReferenceModel  # noqa: E402
from npuplan.run.compare import format_diff  # noqa: E402


def validity(data: bytes | None, why: str) -> str:
    if data is None:
        return why
    try:
        report = validate_tflite(data)
    except NpuplanError as error:
        return f"INVALID: {str(error)[:120]}"
    return f"valid, {len(report.streams)} ethos-u op(s), {report.npu_operations} NPU ops"


def row(model: Path, samples: int, seed: int) -> tuple[str, str]:
    """(verdict, the model's line)."""
    original = model.read_bytes()
    sides = {"npuplan": npuplan_file(model, {}), "vela": vela_file(model, {}, VELA),
             "vela legacy": vela_file(model, {}, VELA, "--debug-force-legacy-core")}
    cells = {name: validity(*made) for name, made in sides.items()}
    try:
        ReferenceModel(original, label="the original")
    except NpuplanError as error:
        text = "; ".join(f"{name}: {cell}" for name, cell in cells.items())
        return "no reference", f"{model.stem}: no reference ({str(error)[:100]}) | {text}"
    runs = {name: run_side(*made, original, samples, seed) for name, made in sides.items()}
    for name, side in runs.items():
        diffs = side.diffs
        if not diffs:
            cells[name] += f"; does not run: {side.error}"
            continue
        worst = max(diffs, key=lambda d: (d.max_abs_diff, d.differing))
        total = sum(d.differing for d in diffs)
        cells[name] += "; runs, " + ("exact" if total == 0 else format_diff(worst))
    ours, theirs = runs["npuplan"].diffs, runs["vela"].diffs or runs["vela legacy"].diffs
    verdicts = [verdict(a, b) for a, b in zip(ours, theirs)] if ours and theirs else \
        [verdict(a, None) for a in ours] or ["no run"]
    final = next((v for v in ("no run", "WORSE", "DIFF") if v in verdicts), verdicts[0])
    return final, f"{model.stem}: {final:5s} | " + " | ".join(f"{name} {cell}" for name, cell in cells.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "stateful_run.txt")
    args = parser.parse_args()
    models = sorted((p for m in args.models for p in (sorted(m.glob("*.tflite")) if m.is_dir() else [m])),
                    key=lambda p: p.stem)
    version = subprocess.run([str(VELA), "--version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [f"# python bench/stateful_run.py {' '.join(sys.argv[1:])}",
             f"# commit {commit}, Vela {version}, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
             f"npuplan's default options, Vela's defaults, {args.samples} samples in turn from seed {args.seed}"]
    for line in lines:
        print(line)
    counts: dict[str, int] = {}
    for model in models:
        final, line = row(model, args.samples, args.seed)
        counts[final] = counts.get(final, 0) + 1
        lines.append(line)
        print(line, flush=True)
    lines.append(f"# {len(models)} models: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(lines[-1])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
