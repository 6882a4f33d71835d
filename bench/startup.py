"""Start-up of the ``npuplan`` program (issue 26: ``plan --help`` and planning a 3-op network under
0.15 s), and what it is made of.

Each figure is the CPU seconds (user + system, from the child's own rusage) of a fresh process, the
least of ``--repeat`` runs, with npuplan's bytecode cached under a temporary PYTHONPYCACHEPREFIX
(one untimed warm-up fills it), as an installed npuplan runs:

- ``python -c pass`` and ``python -c "import numpy"`` (one OpenBLAS thread, as the program asks):
  the floor any planning process pays before npuplan's own code;
- ``npuplan plan --help``;
- ``npuplan plan`` of chain_3 (tests/data/chain_3.tflite: a 1x1 conv, a 3x3 depthwise conv and a
  residual ADD, as bench/chain_nets.py writes it) and of zoo/op_abs (a conv then ABS), writing their
  reports.

The trees take turns: each repetition runs every command once per tree, so a machine whose load
changes during the run weighs on every tree alike.

Then, in one process per source tree, where a plan's time goes: numpy's import, ``npuplan.cli``'s,
``npuplan.api``'s, the run itself (planning and the report files), how many npuplan modules and
dataclasses and records were made, how many method sources they compiled (~0.7 M instructions
each: at import for a dataclass; for an ``npuplan.records`` record, on first use, one a method, or
one a shape of method since ``npuplan.record_methods``) and what making those classes cost (CPU
seconds of one process, so noisier than the least-of-N figures above).

With ``--instructions``, also the instructions each command executes, counted by valgrind's
callgrind (``PYTHONHASHSEED=0``, so the same tree counts the same to about 0.1%): a figure a loaded
machine does not move, for comparing trees. Slow (~30 s a command).

Several source trees side by side: ``--src before=/path/to/old/src --src after=src``.

Usage: python bench/startup.py [--src [LABEL=]DIR ...] [--repeat N] [--python PATH] [--instructions]
Results: python bench/record.py startup -- python bench/startup.py --src before=... --src after=src --repeat 5
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHAIN_3 = HERE.parent / "tests" / "data" / "chain_3.tflite"
OP_ABS = Path("/work/zoo/op_abs.tflite")

# Run in the timed tree's own process: phases of one plan, and the dataclasses its imports create.
_PHASES = r"""
import dataclasses, os, sys, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
created = [0, 0.0, 0]
compiled = [0]
_process = dataclasses._process_class
_create_fn = dataclasses._create_fn
def _timed(cls, *args, **kwargs):
    start, methods = time.process_time(), compiled[0]
    try:
        return _process(cls, *args, **kwargs)
    finally:
        if cls.__module__.startswith("npuplan"):
            created[0] += 1
            created[1] += time.process_time() - start
            created[2] += compiled[0] - methods
def _counted(*args, **kwargs):
    compiled[0] += 1
    return _create_fn(*args, **kwargs)
dataclasses._process_class = _timed
dataclasses._create_fn = _counted
# npuplan.records makes its records' methods on first use: older trees compiled each by records._compiled;
# newer ones make records without dataclass (timed here by records._make) and compile one template per
# shape (npuplan.record_methods._templates, counted at the end). npuplan.records loads typing, which every
# tree's npuplan.cli loads too: typing is loaded before the clock in every tree alike
import typing
try:
    import npuplan.record_methods as _templated
except ImportError:
    _templated = None
try:
    import npuplan.records as _records
except ImportError:
    _records = None
if _templated is not None:
    _make = _records._make
    def _timed_record(cls, *args, **kwargs):
        start = time.process_time()
        try:
            return _make(cls, *args, **kwargs)
        finally:
            created[0] += 1
            created[1] += time.process_time() - start
    _records._make = _timed_record
elif _records is not None:
    _compiled = _records._compiled
    def _counted_records(*args, **kwargs):
        made = _compiled(*args, **kwargs)
        created[2] += len(made)
        return made
    _records._compiled = _counted_records
from npuplan.lean_bindings import use_lean_bindings
use_lean_bindings()
t0 = time.process_time()
import numpy
t1 = time.process_time()
from npuplan.cli import main
t2 = time.process_time()
import npuplan.api
t3 = time.process_time()
status = main(["plan", sys.argv[1], "--output-dir", sys.argv[2], "--quiet"])
t4 = time.process_time()
modules = sum(name.startswith("npuplan") for name in sys.modules)
if _templated is not None:
    created[2] += sum(len(methods) for methods in _templated._templates.values())
print(status, t1 - t0, t2 - t1, t3 - t2, t4 - t3, modules, created[0], created[1], created[2])
"""


def cpu_seconds(cmd: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of ``cmd`` in a fresh process; raises when it fails."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return usage.ru_utime + usage.ru_stime


def instructions(cmd: list[str], env: dict[str, str]) -> int:
    """Instructions ``cmd`` executes (callgrind's count; fixed hash seed); raises when it fails."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
                          env={**env, "PYTHONHASHSEED": "0"}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode or not found:
        raise SystemExit(f"failed under valgrind: {' '.join(cmd)}")
    return int(found.group(1))


def tree_env(src: Path, pycache: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return {**env, "PYTHONPATH": str(src), "PYTHONPYCACHEPREFIX": str(pycache)}


def commands(python: str, out: Path, models: dict[str, Path]) -> dict[str, list[str]]:
    """The timed command lines, by label."""
    program = [python, "-m", "npuplan"]
    timed = {"python -c pass": [python, "-c", "pass"], "python -c 'import numpy'": [python, "-c", "import numpy"],
             "npuplan plan --help": [*program, "plan", "--help"]}
    for name, model in models.items():
        timed[f"npuplan plan {name}"] = [*program, "plan", str(model), "--output-dir", str(out)]
    return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", action="append", default=None, metavar="[LABEL=]DIR",
                        help="npuplan source tree(s) to time (default: this checkout's src)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure; the least is kept")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs npuplan")
    parser.add_argument("--instructions", action="store_true", help="also count instructions (valgrind)")
    args = parser.parse_args()
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs valgrind")
    trees = [(s.split("=", 1) if "=" in s else [Path(s).name, s]) for s in (args.src or [str(HERE.parent / "src")])]
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "out"
        models = {"chain_3": CHAIN_3}
        if OP_ABS.exists():
            models["op_abs"] = OP_ABS
        timed = commands(args.python, out, models)
        print(f"CPU seconds, fresh process, least of {args.repeat}; bytecode cached")
        print(f"{'command':34}" + "".join(f"{label:>12}" for label, _ in trees))
        envs = [tree_env(Path(src).resolve(), Path(work) / f"pycache_{label}") for label, src in trees]
        for env in envs:
            for cmd in timed.values():
                cpu_seconds(cmd, env)  # warm-up: fills the bytecode cache
        figures = {name: [float("inf")] * len(envs) for name in timed}
        for _ in range(args.repeat):
            for i, env in enumerate(envs):
                for name, cmd in timed.items():
                    figures[name][i] = min(figures[name][i], cpu_seconds(cmd, env))
        for name, values in figures.items():
            print(f"{name:34}" + "".join(f"{v:12.3f}" for v in values))
        if args.instructions:
            print("\nInstructions executed (millions; callgrind, PYTHONHASHSEED=0)")
            for name, cmd in timed.items():
                counts = [instructions(cmd, env) / 1e6 for env in envs]
                print(f"{name:34}" + "".join(f"{c:12.1f}" for c in counts))
        print("\nOne plan of chain_3 in one process (CPU s; least total of "
              f"{args.repeat}): numpy import, npuplan.cli import, npuplan.api import, run; modules, dataclasses")
        for (label, _), env in zip(trees, envs):
            runs = []
            for _ in range(args.repeat):
                done = subprocess.run([args.python, "-c", _PHASES, str(models["chain_3"]), str(out)], env=env,
                                      capture_output=True, text=True, check=True)
                runs.append([float(v) for v in done.stdout.split()])
            status, numpy_s, cli_s, api_s, run_s, modules, classes, classes_s, methods = min(
                runs, key=lambda r: sum(r[1:5]))
            print(f"  {label}: numpy {numpy_s:.3f}, cli {cli_s:.3f}, api {api_s:.3f}, run {run_s:.3f} "
                  f"(status {status:.0f}); {modules:.0f} npuplan modules, {classes:.0f} dataclasses created "
                  f"in {classes_s:.3f}, {methods:.0f} methods generated")


if __name__ == "__main__":
    main()
