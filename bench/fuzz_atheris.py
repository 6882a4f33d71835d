"""Coverage-guided fuzzing of npuplan's model path with atheris (libFuzzer for Python).

atheris instruments npuplan's modules and mutates the seed models towards new coverage of the
reader, the verifier, lowering and planning. Each input runs the ``npuplan plan`` command in this
process; an exception escaping it, an undocumented exit status or files left behind by a failed
run is a crash, which libFuzzer saves as ``crash-<hash>`` in the working directory (replay it with
``npuplan plan crash-<hash> --debug``).

Needs atheris (not a dependency of npuplan): ``python3 -m venv v && v/bin/pip install atheris -e .``.
Usage:
  python bench/fuzz_atheris.py [--seconds 600] [--corpus DIR] [-- libFuzzer options...]
The corpus directory (default ``fuzz-corpus``) starts as a copy of tests/data's models and keeps
the inputs that found new coverage. Prints libFuzzer's progress; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import atheris  # noqa: E402

with atheris.instrument_imports(include=["npuplan"]):
    # the command imports the pipeline lazily: import it here so that it is instrumented too
    import npuplan.api  # noqa: F401
    import npuplan.commands  # noqa: F401
    import npuplan.report  # noqa: F401
    from npuplan.cli import main as npuplan_main

DOCUMENTED = {0, 1, 2, 3}
WORK = Path(tempfile.mkdtemp(prefix="npuplan-atheris-"))
MODEL, OUT = WORK / "input.tflite", WORK / "out"


def one_input(data: bytes) -> None:
    """Run ``npuplan plan`` on ``data``; raise when it ends in a way a user must never see."""
    if OUT.exists():
        shutil.rmtree(OUT)
    MODEL.write_bytes(data)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = npuplan_main(["plan", str(MODEL), "--output-dir", str(OUT), "--quiet",
                               "--accelerator-config", "ethos-u55-64", "--optimise", "Size"])
    if status not in DOCUMENTED:
        raise RuntimeError(f"exit status {status}: {err.getvalue().strip()}")
    if status != 0 and OUT.exists() and any(OUT.iterdir()):
        raise RuntimeError(f"a failed run (status {status}) left files: {sorted(p.name for p in OUT.iterdir())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--corpus", type=Path, default=Path("fuzz-corpus"))
    args, rest = parser.parse_known_args()
    if not args.corpus.exists():
        args.corpus.mkdir(parents=True)
        for seed in sorted((HERE.parent / "tests" / "data").glob("*.tflite")):
            shutil.copy(seed, args.corpus / seed.name)
    argv = [sys.argv[0], str(args.corpus), f"-max_total_time={args.seconds}", "-timeout=30", "-rss_limit_mb=4096",
            "-max_len=3000000", *[a for a in rest if a != "--"]]
    atheris.Setup(argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
