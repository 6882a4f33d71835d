"""Differential run: npuplan's compiled file and Vela's, each run by ``npuplan run``'s machinery (the NPU
simulator and LiteRT for CPU operators), against the original model run by LiteRT.

Usage:
  python bench/run_diff.py [--set public|testdata|zoo|zoo2|zoo3|lstm ...] [--models DIR ...] [--random SEED:COUNT]
                           [--scenario NAME ...] [--samples 5] [--seed 0] [--jobs 1] [--reference-kernels]
                           [--out FILE] [MODEL ...]

For each model and scenario (default: the three public ones of bench/scenarios.py; ``--scenario`` names any of its ALL): compile with
npuplan (native backend, ``emit.plan_and_emit``) and with Vela 5.2 (``--vela``), run both files and
the original on the same seeded inputs (``--samples``, uniform over each input type's range, token ids within their table; the
samples run in turn on one loaded model, so variable tensors evolve alike) and print per output,
side by side, the largest absolute difference from LiteRT, how many elements differ (summed over the
samples) and the wall seconds one sample takes (the compiled file and LiteRT's run of the original,
on a machine shared with other work: a rough figure).

Vela's file is its default core's (the file Vela users get), even where another would be closer.
Where that core cannot compile the model or its file does not run, in this order:
- a model exported with a dynamic batch (the default core refuses its run-time RESHAPE targets:
  "RESHAPE ... Does not have valid TFLite Semantics"; transformers, tiny_yolo's upsampling): the
  default core's file of its static copy (``static_copy.py``: the batch planned as 1, the shape
  arithmetic folded), used only when LiteRT runs the copy bit for bit as the original on the same
  seeded inputs; the row says ``vela (static copy)``. Not the legacy core: Vela 5.2.0's legacy core
  folds SHAPE into int64 bytes under an INT32 tensor, so its file computes wrong RESHAPE targets
  on any runtime (``static_copy.py`` has the detail; run_diff shows it as the legacy core's error);
- the legacy core's file (``--debug-force-legacy-core``), ``vela (legacy core)``.

Which side to trust: LiteRT is the functional reference. Vela's file runs on silicon, so where it
differs from LiteRT the difference is the NPU's (a rounding TFLite does not share) unless the
simulator is wrong; npuplan's file should differ no more than Vela's (verdict ``ok``: no larger
difference and no more differing elements; ``WORSE`` otherwise; without a Vela file that runs, ``exact`` or
``DIFF``). A tool that cannot compile a model, a file the simulator cannot run, LiteRT crashing
inside its kernels (``reference crashed``: with ``--reference-kernels`` LiteRT runs in a child
process, ``run.isolated``) and a worker process that dies all the same (``worker crashed``: the
job is run again alone, so the row names the model that killed it) are rows, not exceptions.
``bench/run_bisect.py`` finds the operator where a file starts to differ.

Writes the table, with a header (command, commit, Vela version, date), to ``--out`` (default
bench/results/run_diff.txt), row by row; the jobs run set by set in the order given (files,
--models, --set, --random), each set scenario by scenario, so a long run stopped early keeps whole
sets. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import glob
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scenarios import ALL, SCENARIOS, cli_flags
from static_copy import static_copy

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE.parent)]

from npuplan.api import plan_and_emit  # noqa: E402
from npuplan.errors import LiteRTCrash, NpuplanError  # noqa: E402
from npuplan.run import CompiledModel, OutputDiff, ReferenceModel, compare_runs  # noqa: E402
from npuplan.run.compare import format_diff  # noqa: E402

VELA = Path("/work/velavenv/bin/vela")
SETS = {"public": "/work/shared/models", "testdata": str(HERE.parent / "tests" / "data"), "zoo": "/work/zoo",
        "zoo2": "/work/zoo2", "zoo3": "/work/zoo3", "lstm": "/work/zoo_lstm"}


@dataclass(frozen=True)
class Side:
    """One compiled file's differences from LiteRT per output, or why there are none."""

    diffs: tuple[OutputDiff, ...] = ()
    error: str = ""
    seconds_per_sample: float = 0.0  # wall time of one compiled-file and one LiteRT invocation
    label: str = "vela"  # which tool (and Vela core) wrote the file


def _short(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}"[:150]


def vela_file(model: Path, options: dict[str, str], vela: Path, *extra: str) -> tuple[bytes | None, str]:
    """Vela's compiled file of ``model`` with ``options`` (its default core; ``extra`` flags, e.g.
    ``--debug-force-legacy-core``), or why there is none."""
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run([str(vela), str(model), *cli_flags(options), *extra, "--output-dir", out],
                              capture_output=True, text=True, check=False)
        files = glob.glob(f"{out}/*_vela.tflite")
        if proc.returncode != 0 or not files:
            return None, "vela: " + (proc.stderr.strip().splitlines() or ["no output"])[-1][:120]
        return Path(files[0]).read_bytes(), ""


def npuplan_file(model: Path, options: dict[str, str]) -> tuple[bytes | None, str]:
    try:
        return plan_and_emit(model, **options)[1].data, ""
    except NpuplanError as error:
        return None, f"npuplan: {str(error)[:120]}"
    except Exception as error:  # noqa: BLE001 - a crash is a finding
        return None, f"npuplan CRASH {_short(error)}"


def run_side(data: bytes | None, why: str, original: bytes, samples: int, seed: int, *,
             reference_kernels: bool = False) -> Side:
    """The compiled file against a fresh LiteRT reference (its own variable tensors)."""
    if data is None:
        return Side(error=why)
    try:
        compiled = CompiledModel(data, label="the compiled file", reference_kernels=reference_kernels)
        reference = ReferenceModel(original, label="the original", reference_kernels=reference_kernels)
        started = time.perf_counter()
        diffs = tuple(compare_runs(compiled, reference, samples=samples, seed=seed))
        return Side(diffs, seconds_per_sample=(time.perf_counter() - started) / samples)
    except LiteRTCrash as error:
        return Side(error=f"reference crashed: {str(error)[:150]}")
    except NpuplanError as error:
        return Side(error=f"run: {str(error)[:150]}")
    except Exception as error:  # noqa: BLE001 - a crash is a finding
        return Side(error=f"run CRASH {_short(error)}")


LEGACY = "--debug-force-legacy-core"


def vela_side(model: Path, options: dict[str, str], vela: Path, original: bytes, samples: int, seed: int, *,
              reference_kernels: bool = False) -> Side:
    """Vela's default core's file run against LiteRT, else (module docstring) its file of the
    model's static copy, else its legacy core's file; every error kept when none runs."""
    def run(data: bytes | None, why: str) -> Side:
        return run_side(data, why, original, samples, seed, reference_kernels=reference_kernels)

    errors = []
    default = run(*vela_file(model, options, vela))
    if default.diffs:
        return default
    errors.append(f"default core: {default.error}")
    copy, why = static_side(model, options, vela, original, samples, seed, reference_kernels=reference_kernels)
    if copy is not None and copy.diffs:
        return replace(copy, label="vela (static copy)")
    if why:
        errors.append(f"static copy: {why}")
    legacy = run(*vela_file(model, options, vela, LEGACY))
    if legacy.diffs:
        return replace(legacy, label="vela (legacy core)")
    errors.append(f"legacy core: {legacy.error}")
    return Side(error="; ".join(errors))


def static_side(model: Path, options: dict[str, str], vela: Path, original: bytes, samples: int, seed: int, *,
                reference_kernels: bool = False) -> tuple[Side | None, str]:
    """Vela's default core's file of ``model``'s static copy run against the original, or (None, why
    not): no dynamic dimension (why ''), a copy LiteRT does not run as the original, Vela failing."""
    try:
        data = static_copy(original)
    except NpuplanError as error:
        return None, f"not made: {str(error)[:100]}"
    if data is None:
        return None, ""
    try:
        same = compare_runs(ReferenceModel(data, label="the static copy", reference_kernels=reference_kernels),
                            ReferenceModel(original, label="the original", reference_kernels=reference_kernels),
                            samples=samples, seed=seed)
    except NpuplanError as error:
        return None, f"LiteRT: {str(error)[:100]}"
    if not all(d.agrees for d in same):
        return None, "LiteRT does not run it as the original"
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / model.name
        path.write_bytes(data)
        side = run_side(*vela_file(path, options, vela), original, samples, seed, reference_kernels=reference_kernels)
    return side, side.error


def verdict(ours: OutputDiff | None, theirs: OutputDiff | None) -> str:
    if ours is None:
        return "-"
    if theirs is None:
        return "exact" if ours.agrees else "DIFF"
    return "ok" if (ours.max_abs_diff <= theirs.max_abs_diff and ours.differing <= theirs.differing) else "WORSE"


def one(job: tuple[Path, str, int, int, str, bool]) -> list[tuple[str, str]]:
    """(verdict, line) per output of one model in one scenario."""
    path, scenario, samples, seed, vela, kernels = job
    options = ALL[scenario]
    original = path.read_bytes()
    try:
        reference = ReferenceModel(original, label="the original", reference_kernels=kernels)
        reference.invoke(zero_inputs(reference))  # a reference that crashes is the row: nothing to compare with
    except LiteRTCrash as error:
        return [("reference crashed", f"{path.stem} {scenario}: reference crashed: {str(error)[:150]}")]
    except NpuplanError as error:
        return [("no reference", f"{path.stem} {scenario}: no reference: {str(error)[:150]}")]
    ours = run_side(*npuplan_file(path, options), original, samples, seed, reference_kernels=kernels)
    theirs = vela_side(path, options, Path(vela), original, samples, seed, reference_kernels=kernels)
    count = max(len(ours.diffs), len(theirs.diffs))
    if count == 0:
        return [("no run", f"{path.stem} {scenario}: npuplan [{ours.error}] | {theirs.label} [{theirs.error}]")]
    rows = []
    for k in range(count):
        a = ours.diffs[k] if k < len(ours.diffs) else None
        b = theirs.diffs[k] if k < len(theirs.diffs) else None
        v = verdict(a, b)
        left = f"{format_diff(a)} ({ours.seconds_per_sample:.1f} s/sample)" if a else ours.error
        right = f"{format_diff(b)} ({theirs.seconds_per_sample:.1f} s/sample)" if b else theirs.error
        rows.append((v, f"{path.stem} {scenario} out {k}: {v:5s} | npuplan {left} | {theirs.label} {right}"))
    return rows


def zero_inputs(reference: ReferenceModel) -> list[np.ndarray]:
    """Zero inputs of the reference's shapes and types (a first invocation that tells whether LiteRT runs it)."""
    return [np.zeros(shape, dtype) for shape, dtype in reference.input_specs]


def _alone(job: tuple[Path, str, int, int, str, bool]) -> list[tuple[str, str]]:
    """``job`` in a worker of its own: its rows, or a row saying the worker died."""
    with ProcessPoolExecutor(1) as pool:
        try:
            return pool.submit(one, job).result()
        except BrokenProcessPool:
            path, scenario = job[0], job[1]
            return [("worker crashed", f"{path.stem} {scenario}: worker crashed (the process died: a fault in "
                                       "LiteRT or Vela's native code)")]


def rows_of(jobs: list[tuple[Path, str, int, int, str, bool]], workers: int) -> Iterator[tuple[str, str]]:
    """Every job's rows, in order, over ``workers`` processes. A worker that dies breaks the pool for
    every job in flight: the job waited on runs again alone (a second death is its row) and the rest
    go to a fresh pool."""
    pending = list(jobs)
    while pending:
        with ProcessPoolExecutor(max(1, workers)) as pool:
            futures = [pool.submit(one, job) for job in pending]
            for k, (job, future) in enumerate(zip(pending, futures)):
                try:
                    rows = future.result()
                except BrokenProcessPool:
                    rows = _alone(job)
                    pending = pending[k + 1:]
                    yield from rows
                    break
                yield from rows
            else:
                pending = []


def _model_groups(args: argparse.Namespace, scratch: Path) -> list[list[Path]]:
    """The models to run, in groups: the named files, each --models directory, each --set, the
    random networks (written into ``scratch``)."""
    groups = [[Path(m) for m in args.models]]
    groups += [sorted(Path(directory).glob("*.tflite")) for directory in args.dir or []]
    groups += [sorted(Path(SETS[name]).glob("*.tflite")) for name in args.set or []]
    if args.random:
        from bench.random_graphs import network_bytes

        first, count = (int(v) for v in args.random.split(":"))
        group = []
        for seed in range(first, first + count):
            path = scratch / f"random_{seed}.tflite"
            path.write_bytes(network_bytes(seed))
            group.append(path)
        groups.append(group)
    return [g for g in groups if g]


def _header(argv: list[str], vela: str) -> list[str]:
    commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    version = subprocess.run([vela, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [f"# python bench/run_diff.py {' '.join(argv)}", f"# commit {commit}, Vela {version}, {now}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*")
    parser.add_argument("--models", dest="dir", action="append", metavar="DIR")
    parser.add_argument("--set", action="append", choices=sorted(SETS))
    parser.add_argument("--random", metavar="SEED:COUNT", help="seeded random networks (tests/random_graphs.py)")
    parser.add_argument("--scenario", action="append", choices=sorted(ALL))
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--vela", default=str(VELA))
    parser.add_argument("--reference-kernels", action="store_true",
                        help="LiteRT's reference kernels (as TensorFlow Lite Micro) instead of its optimised ones")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "run_diff.txt")
    args = parser.parse_args()
    counts: collections.Counter[str] = collections.Counter()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as results, tempfile.TemporaryDirectory() as scratch:

        def emit(line: str) -> None:  # printed and written as it comes: a long run killed keeps its rows
            print(line, flush=True)
            results.write(line + "\n")
            results.flush()

        for line in _header(sys.argv[1:], args.vela):
            emit(line)
        jobs = [(p, s, args.samples, args.seed, args.vela, args.reference_kernels)
                for group in _model_groups(args, Path(scratch)) for s in args.scenario or list(SCENARIOS) for p in group]
        for v, line in rows_of(jobs, args.jobs):
            counts[v] += 1
            emit(line)
        emit("# outputs by verdict: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))


if __name__ == "__main__":
    main()
