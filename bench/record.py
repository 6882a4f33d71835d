"""Run a bench and keep its output as the bench's one current results file, with a header.

  python bench/record.py NAME -- python bench/NAME.py [options]

Prints the command's output as it comes and writes ``bench/results/NAME.txt``: a header (the
command, the commit with ``+dirty`` when the tree has changes, the Vela version installed, the UTC
date), then the output. The file is replaced whole (git keeps the history), only when the command
succeeds; a failing command leaves the previous file and exits with its status.
"""

from __future__ import annotations

import argparse
import datetime
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(HERE), *args], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def header(name: str, command: list[str]) -> str:
    """The results file's header lines for ``command`` run now."""
    commit = _git("rev-parse", "--short", "HEAD") or "unknown"
    if _git("status", "--porcelain", "--untracked-files=no"):
        commit += "+dirty"
    try:
        vela = metadata.version("ethos-u-vela")
    except metadata.PackageNotFoundError:
        vela = "not installed"
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"# bench/results/{name}.txt\n# command: {shlex.join(command)}\n# commit: {commit}\n"
            f"# Vela version: {vela}\n# date: {date}\n\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="the bench's name: the results file is bench/results/NAME.txt")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command or "/" in args.name:
        parser.error("give a plain NAME, then -- and the command")
    text = header(args.name, command)
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as run:
        assert run.stdout is not None
        for line in run.stdout:
            sys.stdout.write(line)
            text += line
    if run.returncode:
        return run.returncode
    target = HERE / "results" / f"{args.name}.txt"
    staged = target.with_suffix(".txt.tmp")
    staged.write_text(text)
    staged.replace(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
