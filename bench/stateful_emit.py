"""Stateful networks through the deploy path: each model planned and emitted with both backends and
the file validated, and Vela 5.2.0's own file (default and legacy core) validated the same way.

The models: bench/zoo/lstm_models.py's (variable tensors: LSTM alone, between FULLY_CONNECTED,
SVDF) and bench/zoo/stateful_tf.py's (TensorFlow's resource variables), or any given. A row per
model: what each backend emitted (ethos-u operators, NPU operations) or the one-line error, and
whether Vela's files validate. One results file, bench/results/stateful_emit.txt.

Usage: python bench/stateful_emit.py MODEL_OR_DIR [...] [--out bench/results/stateful_emit.txt]
       [--work /tmp/stateful_emit]
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.api import plan_and_emit  # noqa: E402
from npuplan.emit.backend import EmitBackend  # noqa: E402
from npuplan.errors import NpuplanError  # noqa: E402
from npuplan.regstream import validate_tflite, validate_tflite_file  # noqa: E402

VELA = "/work/velavenv/bin/vela"


def ours(model: Path, backend: EmitBackend) -> str:
    try:
        _, emitted = plan_and_emit(model, backend=backend)
        report = validate_tflite(emitted.data)
    except NpuplanError as error:
        return f"refused (exit {error.exit_status}): {str(error)[:160]}"
    return f"valid, {len(report.streams)} ethos-u op(s), {report.npu_operations} NPU ops"


def vela(model: Path, work: Path, legacy: bool) -> str:
    out = work / f"{model.stem}_{'legacy' if legacy else 'default'}"
    command = [VELA, str(model), "--output-dir", str(out)] + (["--debug-force-legacy-core"] if legacy else [])
    run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    written = out / f"{model.stem}_vela.tflite"
    if run.returncode != 0 or not written.exists():
        return f"vela failed ({run.returncode})"
    try:
        report = validate_tflite_file(written)
    except NpuplanError as error:
        return f"INVALID: {str(error)[:160]}"
    return f"valid, {len(report.streams)} ethos-u op(s), {report.npu_operations} NPU ops"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "stateful_emit.txt")
    parser.add_argument("--work", type=Path, default=Path("/tmp/stateful_emit"))
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    models = sorted(p for m in args.models for p in (sorted(m.glob("*.tflite")) if m.is_dir() else [m]))
    version = subprocess.run([VELA, "--version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [f"# python3 bench/stateful_emit.py {' '.join(sys.argv[1:])}",
             f"# commit {commit}, Vela {version}, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
             "npuplan's default options (Ethos-U55-256), Vela's defaults"]
    counts = {"emitted": 0, "vela valid": 0}
    for model in models:
        cells = {"npuplan backend": ours(model, EmitBackend.NPUPLAN), "vela backend": ours(model, EmitBackend.VELA),
                 "vela default": vela(model, args.work, False), "vela legacy": vela(model, args.work, True)}
        counts["emitted"] += sum(cells[k].startswith("valid") for k in ("npuplan backend", "vela backend"))
        counts["vela valid"] += sum(cells[k].startswith("valid") for k in ("vela default", "vela legacy"))
        lines.append(f"{model.stem}: " + "; ".join(f"{k}: {v}" for k, v in cells.items()))
        print(lines[-1], flush=True)
    lines.append(f"# {len(models)} models: npuplan emitted and valid {counts['emitted']}/{2 * len(models)}, "
                 f"Vela's files valid {counts['vela valid']}/{2 * len(models)}")
    print(lines[-1])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
