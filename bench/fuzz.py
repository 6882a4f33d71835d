"""Fuzz npuplan: mutated models, plan JSON and .ini files run through the CLI in this process.

Every case must end with a documented exit status and at most one line on stderr: a traceback,
a run over the time limit or files left behind by a failed run are bugs, saved to ``--crashes``.

Usage:
  python bench/fuzz.py [--cases N | --seconds S] [--seed K] [--kinds bytes,struct,json,ini]
                       [--seeds DIR ...] [--crashes DIR] [--time-limit 30] [--emit-tflite]

``bytes``: random byte edits, truncations and insertions of the seed models; ``struct``: valid
flatbuffers with odd content (zero and huge dims, broken quantization, dangling indices, aliased
buffers, wrong arity, other dtypes) written by the project's TFLite writer; ``json``: plan JSON
documents edited structurally; ``ini``: system-config files edited line by line.
``--emit-tflite``: model and ini cases plan deployably and write the TFLite file too.
Prints counts by kind and exit status; asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE.parent)]

from bench.fuzzing import Case, campaign, run_case, scratch_dir  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=None, help="stop after this many cases")
    parser.add_argument("--seconds", type=float, default=None, help="stop after this much wall time")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kinds", default="bytes,struct,json,ini")
    parser.add_argument("--seeds", nargs="*", type=Path, default=[HERE.parent / "tests" / "data",
                                                                     HERE.parent / "tests" / "data"])
    parser.add_argument("--crashes", type=Path, default=Path("fuzz-crashes"))
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--emit-tflite", action="store_true", help="plan deployably and emit the file")
    args = parser.parse_args()
    models = sorted({p.name: p for d in args.seeds if d.is_dir() for p in sorted(d.glob("*.tflite"))
                     if p.stat().st_size < 8_000_000}.values())
    if not models:
        raise SystemExit("no seed models found")
    kinds = args.kinds.split(",")
    limit = args.cases if args.cases is not None else (None if args.seconds else 1000)
    started = time.perf_counter()
    counts: collections.Counter[tuple[str, object]] = collections.Counter()
    slowest = 0.0
    bugs = 0
    with scratch_dir() as scratch:
        work = Path(scratch)
        cases = campaign(models, kinds, seed=args.seed, work=work)
        for n, case in enumerate(itertools.islice(cases, limit)):
            if args.seconds is not None and time.perf_counter() - started > args.seconds:
                break
            outcome = run_case(case, work, time_limit_s=args.time_limit, model_for_ini=models[0],
                               extra_args=("--emit-tflite",) if args.emit_tflite else ())
            slowest = max(slowest, outcome.seconds)
            status = "timeout" if outcome.timed_out else ("traceback" if outcome.traceback else outcome.status)
            counts[(case.kind + ":" + case.label.split(":")[0], status)] += 1
            if outcome.is_bug:
                bugs += 1
                _save(args.crashes, case, outcome)
            if (n + 1) % 500 == 0:
                print(f"{n + 1} cases, {bugs} bugs, {time.perf_counter() - started:.0f} s", flush=True)
    total = sum(counts.values())
    print(f"\n{total} cases in {time.perf_counter() - started:.0f} s, slowest {slowest:.2f} s, {bugs} bugs")
    for (kind, status), count in sorted(counts.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        print(f"  {kind:<22} exit {status!s:<10} {count}")


def _save(directory: Path, case: Case, outcome: object) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    stem = case.label.replace(":", "_").replace("/", "_")
    suffix = {"model": ".tflite", "plan_json": ".json", "ini": ".ini"}[case.kind]
    (directory / (stem + suffix)).write_bytes(case.payload)
    (directory / (stem + ".txt")).write_text(repr(outcome))


if __name__ == "__main__":
    main()
