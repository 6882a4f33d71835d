"""CPU time of ``npuplan validate FILE --weights`` on npuplan's and Vela's deployable files.

Per public model: npuplan's file (``plan_and_emit`` with npuplan's own backend) and Vela's
(``vela MODEL --accelerator-config ...``, its CLI run in its own process; ``--vela PATH``), each
validated in this process with ``validate_tflite(data)`` (the memory replay) and
``validate_tflite(data, weights=True)`` (the replay and the weight-stream check). Figures are CPU
seconds (``time.process_time``), each the least of ``--repeat`` runs; ``weights`` is the extra the
check costs (with-weights less without). Also printed: convolution operations checked, distinct
weight streams decoded and the weights they hold. A file that fails is a row with its one-line
reason. The first run of the check imports the decoder (``npuplan.emit.native``): done once before
timing. Asserts nothing.

Usage: python bench/validate_weights.py [--models DIR] [--scenario NAME] [--repeat N] [--vela PATH]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scenarios import DUAL_CORE, SCENARIOS, cli_flags

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.api import plan_and_emit  # noqa: E402
from npuplan.errors import NpuplanError  # noqa: E402
from npuplan.regstream import validate_tflite  # noqa: E402

MODELS = HERE.parent / "tests" / "data"
VELA = "/work/vela-venv/bin/vela"


def _least(repeat: int, run: object) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()  # type: ignore[operator]
        best = min(best, time.process_time() - start)
    return best


def _row(label: str, data: bytes | None, repeat: int, why: str = "") -> str:
    if data is None:
        return f"{label:34s} no file: {why}"
    try:
        report = validate_tflite(data, weights=True)
    except NpuplanError as error:
        return f"{label:34s} INVALID: {error}"
    plain = _least(repeat, lambda: validate_tflite(data))
    full = _least(repeat, lambda: validate_tflite(data, weights=True))
    w = report.weights
    assert w is not None
    return (f"{label:34s} replay {plain:6.2f}  +weights {full:6.2f}  weights {full - plain:6.2f} s   "
            f"ops {w.operations:5d}  streams {w.streams:5d}  weights {w.weights:9d}  "
            f"({w.weights / max(full - plain, 1e-3) / 1e6:5.1f} M/s)")


def _vela_file(vela: str, model: Path, options: dict[str, str], out: Path) -> tuple[bytes | None, str]:
    done = subprocess.run([vela, str(model), *cli_flags(options), "--output-dir", str(out)], capture_output=True, text=True, check=False)
    path = out / f"{model.stem}_vela.tflite"
    if done.returncode or not path.exists():
        return None, (done.stderr.strip().splitlines() or ["vela failed"])[-1]
    return path.read_bytes(), ""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=str(MODELS))
    parser.add_argument("--scenario", default="u55_128_highend_shared_perf", choices=[*SCENARIOS, *DUAL_CORE])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--vela", default=VELA)
    args = parser.parse_args()
    options = (SCENARIOS | DUAL_CORE)[args.scenario]
    validate_tflite(plan_and_emit(HERE.parent / "tests" / "data" / "ds_cnn_kws.tflite", **options)[1].data,
                    weights=True)  # imports
    print(f"scenario {args.scenario}; CPU seconds, least of {args.repeat}")
    with tempfile.TemporaryDirectory() as tmp:
        for model in sorted(Path(args.models).glob("*.tflite")):
            try:
                ours: bytes | None = plan_and_emit(model, **options)[1].data
                why = ""
            except NpuplanError as error:
                ours, why = None, str(error)
            print(_row(f"{model.stem} npuplan", ours, args.repeat, why), flush=True)
            theirs, why = _vela_file(args.vela, model, options, Path(tmp))
            print(_row(f"{model.stem} vela", theirs, args.repeat, why), flush=True)


if __name__ == "__main__":
    main()
