"""Every command the README and docs print runs from a clone.

- Each line of a ```sh block is run: ``npuplan ...`` in this process (``cli.main``), in a fresh
  folder holding the clone's ``examples/``, block after block of a page in the same folder, so a
  ``validate`` finds what the line before it wrote. ``pip install ...`` and ``python3 -m pytest``
  (the two-command rule's installs and this very suite) are the only parts not run.
- Each ``python3 bench/NAME.py`` named anywhere answers ``--help`` (it exists and parses its
  options); a bench that needs an optional outside package (TensorFlow, atheris) is skipped, saying
  which. Every ``bench/NAME.py`` named exists.
- The README stays short (at most about 250 lines) and cites no commit.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from npuplan.cli import main

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)
_BENCH_RUN = re.compile(r"python3? (bench/[A-Za-z0-9_/]+\.py)")
_BENCH_NAMED = re.compile(r"(?<![/A-Za-z0-9_.])(bench/[A-Za-z0-9_/]+\.py)")
_NOT_RUN = ("pip install", "python3 -m pytest", "python -m pytest")
_OPTIONAL = {"tensorflow": "TensorFlow (the zoo generators run in a TensorFlow venv)", "atheris": "atheris",
             "torch": "PyTorch (bench/zoo/zoo10_models.py runs in a torch + litert-torch venv)"}


def sh_commands(page: Path) -> list[str]:
    """The commands of ``page``'s sh blocks, in order (``a && b`` as two; installs and the test
    suite left out)."""
    commands = []
    for block in _BLOCK.findall(page.read_text(encoding="utf-8")):
        for line in block.splitlines():
            for part in line.split("&&"):
                part = part.strip()
                if part and not part.startswith("#") and not part.startswith(_NOT_RUN):
                    commands.append(part)
    return commands


@pytest.mark.parametrize("page", [p for p in PAGES if sh_commands(p)], ids=lambda p: p.name)
def test_sh_commands_run(page, tmp_path, monkeypatch, capsys):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    for command in sh_commands(page):
        words = shlex.split(command)
        assert words[0] == "npuplan", f"{page.name}: only npuplan commands belong in sh blocks: {command}"
        try:
            status = main(words[1:])
        except SystemExit as done:  # --help
            status = int(done.code or 0)
        captured = capsys.readouterr()
        assert status == 0, f"{page.name}: `{command}` exited {status}: {captured.err[-500:]}"


def _benches_run() -> list[str]:
    return sorted({m for page in PAGES for m in _BENCH_RUN.findall(page.read_text(encoding="utf-8")) if "NAME" not in m})


@pytest.mark.parametrize("bench", _benches_run())
def test_cited_benches_answer_help(bench):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, bench, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=env)
    missing = re.search(r"No module named '([A-Za-z0-9_]+)", done.stderr)
    if done.returncode and missing and missing.group(1) in _OPTIONAL:
        pytest.skip(f"{bench} needs {_OPTIONAL[missing.group(1)]}")
    assert done.returncode == 0, done.stderr[-800:]


def test_named_benches_exist():
    named = {m for page in PAGES for m in _BENCH_NAMED.findall(page.read_text(encoding="utf-8"))}
    assert not {n for n in named if "NAME" not in n and not (ROOT / n).is_file()}


def test_readme_is_short_and_cites_no_commit():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    hashes = [h for h in re.findall(r"(?<![A-Za-z0-9_])[0-9a-f]{7,40}(?![A-Za-z0-9_])", text)
              if re.search("[a-f]", h) and re.search("[0-9]", h)]
    assert not hashes
