"""CPU time of emitting against planning, side by side (issue 12: emitting adds at most 1x the
planning time).

Per emitting backend (``--backend``: npuplan's own, and Vela's API), public model and scenario, in a
fresh process (as the command line runs: cold caches on both sides), after importing npuplan's
planning, reporting and emitting modules (and, for the Vela backend, ``ethosu.vela.api``):
  plan   the deployable plan's whole ``npuplan plan`` pipeline: read, lower, plan, allocate
         (``api.plan(..., deployable=True)``), then the report model and the report files, written
         to a temporary directory;
  emit   what ``--emit-tflite`` adds to it: ``plan_and_emit`` given that plan (an operator kept on
         the CPU after the emitter refused it re-plans and emits again: counted here) and the file
         written.
Figures are CPU seconds (``time.process_time``: other load on the two shared cores does not inflate
them as it does wall time), each the least of ``--repeat`` runs (a run's plan and emit are taken
together). The emit is broken down by the emitter's own step clock (``Emitted.step_cpu_seconds``
of the last emit), the first three being the backend's calls: ``codec`` the weight encoder
(``npu_encode_weights``), ``blocks`` ``npu_find_block_configs`` (for Vela, with the import of its
modules its first call makes), ``generate`` the register command stream generator and driver
payload; then ``check`` the self-check replay of the file's register streams (``regstream``),
``other`` the rest (the weight volumes and bias/scale records, layout, the plan's commands as
operations, the TFLite file, re-plans, writing). ``api`` is the sum of the backend's three,
``rest`` the others: ``rest/plan`` is what the emitter around the backend adds.
Vela's API imports its own modules on its first call: counted in the emit (in ``blocks``, the first
step), as in a command-line run; what that import costs is printed once, apart.

``--hashes FILE`` writes the sha256 of every emitted file as JSON; ``--against FILE`` compares them
with such a file (an emitter change that must not change the files: run it before and after).

Prints one table per backend and scenario, then per backend the range and geomean of emit/plan
and of rest/plan. Asserts nothing.

Usage: python bench/emit_time.py [--models DIR] [--model NAME ...] [--scenario NAME ...] [--repeat N]
                                 [--backend npuplan|vela ...] [--hashes OUT.json] [--against BEFORE.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scenarios import SCENARIOS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from npuplan.api import plan  # noqa: E402
from npuplan.api import plan_and_emit
from npuplan.emit import write_emitted  # noqa: E402
from npuplan.emit.backend import EmitBackend  # noqa: E402
from npuplan.emit.vela import vela_api  # noqa: E402
from npuplan.errors import NpuplanError  # noqa: E402
from npuplan.regstream import validate_tflite  # noqa: E402, F401 - imported before the clock, as the rest
from npuplan.report import build_report, write_reports  # noqa: E402

MODELS = HERE.parent / "tests" / "data"
BREAKDOWN = ("codec", "blocks", "generate", "check", "other")


@dataclass
class Run:
    """One model and scenario: CPU seconds of planning and of emitting, the emit's breakdown, the
    emitted file's sha256 (or the one-line error)."""

    plan_seconds: float
    emit_seconds: float
    steps: dict[str, float]
    sha256: str

    @property
    def ratio(self) -> float:
        return self.emit_seconds / self.plan_seconds

    @property
    def vela_seconds(self) -> float:
        """CPU seconds inside Vela's API: its weight codec, block config search, stream generator."""
        return self.steps["codec"] + self.steps["blocks"] + self.steps["generate"]

    @property
    def ours_ratio(self) -> float:
        """What npuplan's own emitting code adds, against the planning time."""
        return (self.emit_seconds - self.vela_seconds) / self.plan_seconds


def _planned(model: Path, options: dict[str, Any], out: str) -> tuple[object, float]:
    started = time.process_time()
    planned = plan(model, deployable=True, **options)
    write_reports(planned, out, build_report(planned))
    return planned, time.process_time() - started


def _emitted(model: Path, options: dict[str, Any], planned: object, out: str,
             backend: EmitBackend) -> tuple[object, float]:
    started = time.process_time()
    final, emitted = plan_and_emit(model, first=planned, backend=backend, **options)  # type: ignore[arg-type]
    write_emitted(final, out, emitted)
    return emitted, time.process_time() - started


def measure(model: Path, options: dict[str, Any], backend: EmitBackend) -> Run:
    """Plan ``model`` deployably with its reports, then emit it with ``backend``, each timed (CPU
    seconds)."""
    with tempfile.TemporaryDirectory() as out:
        planned, plan_seconds = _planned(model, options, out)
        try:
            emitted, emit_seconds = _emitted(model, options, planned, out, backend)
        except NpuplanError as error:
            return Run(plan_seconds, math.nan, {}, f"error: {error}")
    cpu = emitted.step_cpu_seconds  # type: ignore[attr-defined]
    steps = {"codec": cpu["codec"], "blocks": cpu["blocks"], "generate": cpu["generate"],
             "check": cpu["self_check"]}
    steps["other"] = emit_seconds - sum(steps.values())
    return Run(plan_seconds, emit_seconds, steps, hashlib.sha256(emitted.data).hexdigest())  # type: ignore[attr-defined]


def fresh(model: Path, scenario: str, backend: str) -> Run:
    """``measure`` in a fresh process (this script with ``--one``)."""
    done = subprocess.run([sys.executable, __file__, "--one", str(model), scenario, "--backend", backend],
                          capture_output=True, text=True, check=True)
    return Run(**json.loads(done.stdout.splitlines()[-1]))


def least(model: Path, scenario: str, repeat: int, backend: str) -> Run:
    """The run of least plan + emit seconds out of ``repeat``, each in a fresh process."""
    runs = [fresh(model, scenario, backend) for _ in range(repeat)]
    return min(runs, key=lambda r: r.plan_seconds + (0.0 if math.isnan(r.emit_seconds) else r.emit_seconds))


def vela_import_seconds() -> float:
    """CPU seconds of importing Vela's API and the modules its first call loads, in a fresh process
    that has imported the rest."""
    done = subprocess.run([sys.executable, __file__, "--vela-import"], capture_output=True, text=True, check=True)
    return float(done.stdout.splitlines()[-1])


def geomean(values: list[float]) -> float:
    kept = [v for v in values if v > 0 and not math.isnan(v)]
    return math.exp(sum(math.log(v) for v in kept) / len(kept)) if kept else math.nan


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=str(MODELS))
    parser.add_argument("--model", action="append", default=None)
    parser.add_argument("--scenario", action="append", choices=list(SCENARIOS))
    parser.add_argument("--repeat", type=int, default=1, help="runs per figure; the least is kept")
    parser.add_argument("--hashes", help="write the emitted files' sha256 to this JSON file")
    parser.add_argument("--against", help="compare the emitted files' sha256 with this JSON file")
    parser.add_argument("--backend", action="append", choices=[b.value for b in EmitBackend],
                        help="emitting backend(s), each measured in turn (default: npuplan and vela)")
    parser.add_argument("--one", nargs=2, metavar=("MODEL", "SCENARIO"), help=argparse.SUPPRESS)
    parser.add_argument("--vela-import", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.vela_import:
        started = time.process_time()
        vela_api().npu_encode_bias(np.int64(0), 0, 0)  # a call loads Vela's modules
        print(time.process_time() - started)
        return
    backends = args.backend or [b.value for b in EmitBackend]
    if args.one:
        if backends[0] == EmitBackend.VELA:
            vela_api()  # the module only: its first call loads the rest (counted in the emit)
        print(json.dumps(asdict(measure(Path(args.one[0]), SCENARIOS[args.one[1]], EmitBackend(backends[0])))))
        return

    models = sorted(Path(args.models).glob("*.tflite"))
    if args.model:
        models = [m for m in models if m.stem in args.model]
    if EmitBackend.VELA in backends:
        print(f"importing Vela's API and the modules its first call loads (in 'blocks' below): "
              f"{vela_import_seconds():.3f} CPU s")
    for backend in backends:
        _table(models, args, backend)


def _table(models: list[Path], args: argparse.Namespace, backend: str) -> None:
    ratios: list[float] = []
    ours: list[float] = []
    hashes: dict[str, str] = {}
    for scenario in args.scenario or list(SCENARIOS):
        print(f"\n== --emit-backend {backend}, {scenario}  (CPU seconds, fresh process each; emit = what "
              "--emit-tflite adds)")
        print(f"{'model':24} {'plan':>6} {'emit':>6} {'ratio':>6}   " + " ".join(f"{k:>8}" for k in BREAKDOWN)
              + f"   {'api':>6} {'rest':>6} {'rest/plan':>9}")
        for model in models:
            run = least(model, scenario, args.repeat, backend)
            hashes[f"{model.stem} {scenario}" + ("" if backend == EmitBackend.VELA else f" {backend}")] = run.sha256
            if math.isnan(run.emit_seconds):
                print(f"{model.stem:24} {run.plan_seconds:6.2f} {'-':>6} {'-':>6}   {run.sha256}", flush=True)
                continue
            ratios.append(run.ratio)
            ours.append(run.ours_ratio)
            print(f"{model.stem:24} {run.plan_seconds:6.2f} {run.emit_seconds:6.2f} {run.ratio:6.2f}   "
                  + " ".join(f"{run.steps[k]:8.3f}" for k in BREAKDOWN)
                  + f"   {run.vela_seconds:6.2f} {run.emit_seconds - run.vela_seconds:6.2f} {run.ours_ratio:9.2f}",
                  flush=True)
    print(f"\n--emit-backend {backend}:", end="")
    for name, values in (("emit/plan", ratios), ("emit less the backend's API calls, over plan", ours)):
        if values:
            print(f"\n{name} over {len(values)} runs: {min(values):.2f}-{max(values):.2f}, geomean "
                  f"{geomean(values):.2f}, {sum(r <= 1.0 for r in values)} at most 1x", end="")
    print()
    if args.hashes:
        Path(args.hashes).write_text(json.dumps(hashes, indent=1, sort_keys=True) + "\n")
    if args.against:
        _compare(hashes, json.loads(Path(args.against).read_text()))


def _compare(hashes: dict[str, str], before: dict[str, str]) -> None:
    common = sorted(set(hashes) & set(before))
    differ = [key for key in common if hashes[key] != before[key]]
    print(f"\nemitted files against {len(before)} earlier hashes: {len(common) - len(differ)} of {len(common)} "
          "byte-identical" + "".join(f"\n  differs: {key}" for key in differ))


if __name__ == "__main__":
    main()
