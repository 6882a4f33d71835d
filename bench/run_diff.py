"""Differential run: npuplan's compiled file and Vela's, each run by ``npuplan run``'s machinery (the NPU
simulator and LiteRT for CPU operators), against the original model run by LiteRT.

Usage:
  python bench/run_diff.py [--set public|testdata|zoo|zoo2|zoo3|lstm ...] [--models DIR ...] [--random SEED:COUNT]
                           [--scenario NAME ...] [--samples 5] [--seed 0] [--jobs 1] [--reference-kernels]
                           [--out FILE] [MODEL ...]

For each model and scenario (default: the three public ones of bench/scenarios.py): compile with
npuplan (native backend, ``emit.plan_and_emit``) and with Vela 5.2 (``--vela``, its default core),
run both files and the original on the same seeded inputs (``--samples``, uniform over each input
type's range; the samples run in turn on one loaded model, so variable tensors evolve alike) and
print per output, side by side, the largest absolute difference from LiteRT, how many elements
differ (summed over the samples) and the wall seconds one sample takes (the compiled file and
LiteRT's run of the original, on a machine shared with other work: a rough figure).

Which side to trust: LiteRT is the functional reference. Vela's file runs on silicon, so where it
differs from LiteRT the difference is the NPU's (a rounding TFLite does not share) unless the
simulator is wrong; npuplan's file should differ no more than Vela's (verdict ``ok``: no larger
difference and no more differing elements; ``WORSE`` otherwise; without a Vela file, ``exact`` or
``DIFF``). A tool that cannot compile a model, and a file the simulator cannot run, is a row, not an
exception; so is a worker process that dies (LiteRT's reference kernels segfault on depthwise
networks): verdict ``crashed``, and the run goes on. ``bench/run_bisect.py`` finds the operator where a file starts to differ.

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
from dataclasses import dataclass
from pathlib import Path

from scenarios import SCENARIOS, cli_flags

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE.parent)]

from npuplan.api import plan_and_emit  # noqa: E402
from npuplan.errors import NpuplanError  # noqa: E402
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


def _short(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}"[:150]


def vela_file(model: Path, options: dict[str, str], vela: Path) -> tuple[bytes | None, str]:
    """Vela's compiled file of ``model`` with ``options`` (its default core), or why there is none."""
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run([str(vela), str(model), *cli_flags(options), "--output-dir", out],
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
    except NpuplanError as error:
        return Side(error=f"run: {str(error)[:150]}")
    except Exception as error:  # noqa: BLE001 - a crash is a finding
        return Side(error=f"run CRASH {_short(error)}")


def verdict(ours: OutputDiff | None, theirs: OutputDiff | None) -> str:
    if ours is None:
        return "-"
    if theirs is None:
        return "exact" if ours.agrees else "DIFF"
    return "ok" if (ours.max_abs_diff <= theirs.max_abs_diff and ours.differing <= theirs.differing) else "WORSE"


Job = tuple[Path, str, int, int, str, bool]  # model, scenario, samples, seed, vela, reference kernels


def one(job: Job) -> list[tuple[str, str]]:
    """(verdict, line) per output of one model in one scenario."""
    path, scenario, samples, seed, vela, kernels = job
    options = SCENARIOS[scenario]
    original = path.read_bytes()
    try:
        ReferenceModel(original, label="the original", reference_kernels=kernels)
    except NpuplanError as error:
        return [("no reference", f"{path.stem} {scenario}: no reference: {str(error)[:150]}")]
    ours = run_side(*npuplan_file(path, options), original, samples, seed, reference_kernels=kernels)
    theirs = run_side(*vela_file(path, options, Path(vela)), original, samples, seed, reference_kernels=kernels)
    count = max(len(ours.diffs), len(theirs.diffs))
    if count == 0:
        return [("no run", f"{path.stem} {scenario}: npuplan [{ours.error}] | vela [{theirs.error}]")]
    rows = []
    for k in range(count):
        a = ours.diffs[k] if k < len(ours.diffs) else None
        b = theirs.diffs[k] if k < len(theirs.diffs) else None
        v = verdict(a, b)
        left = f"{format_diff(a)} ({ours.seconds_per_sample:.1f} s/sample)" if a else ours.error
        right = f"{format_diff(b)} ({theirs.seconds_per_sample:.1f} s/sample)" if b else theirs.error
        rows.append((v, f"{path.stem} {scenario} out {k}: {v:5s} | npuplan {left} | vela {right}"))
    return rows


def _crashed(job: Job) -> list[tuple[str, str]]:
    path, scenario = job[0], job[1]
    return [("crashed", f"{path.stem} {scenario}: crashed | the worker process died (a segfault: LiteRT's "
                        f"reference kernels crash on some networks); the run goes on")]


def _alone(job: Job) -> list[tuple[str, str]]:
    """``one(job)`` in a worker of its own, so a crash is this job's: then a row saying so."""
    with ProcessPoolExecutor(1) as pool:
        try:
            return pool.submit(one, job).result()
        except BrokenProcessPool:
            return _crashed(job)


def run_all(jobs: list[Job], workers: int) -> Iterator[list[tuple[str, str]]]:
    """``one`` of every job, in order, over ``workers`` processes. A worker that dies (LiteRT's
    reference kernels segfault on some networks) breaks the pool and every job in flight: the first
    of those is rerun alone (a crashed row if it dies again), and a fresh pool takes the rest."""
    start = 0
    while start < len(jobs):
        broken_at = None
        with ProcessPoolExecutor(workers) as pool:
            futures = [pool.submit(one, job) for job in jobs[start:]]
            for k, future in enumerate(futures):
                try:
                    rows = future.result()
                except BrokenProcessPool:
                    broken_at = start + k
                    break
                yield rows
        if broken_at is None:
            return
        yield _alone(jobs[broken_at])
        start = broken_at + 1


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
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
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
        for rows in run_all(jobs, max(1, args.jobs)):
            for v, line in rows:
                counts[v] += 1
                emit(line)
        emit("# outputs by verdict: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))


if __name__ == "__main__":
    main()
