"""What the program loads, each checked in a fresh interpreter: ``import npuplan.cli`` (and so
``plan --help``) loads no numpy and none of the planner; a plan printed to a pipe loads none of the
emitter, the HTML report, the sweeps (nor their options), the Vela command line, the command
stream's replay validator, the weight encoder and decoder, the estimator, the runner, the simulator, Vela's
compat tables, rich, tempfile, hashlib (its OpenSSL bindings) or
numpy.typing, and ends by freezing the collector's objects (issue 26: start-up)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_LOADED = """
import gc, json, sys
before = set(sys.modules)  # what the interpreter loaded at start (site, .pth files of the machine) is not ours
sys.argv = ["npuplan", *sys.argv[1:]]
if sys.argv[1:]:
    from npuplan.cli import run
    status = run()
else:
    import npuplan.cli
    status = 0
print(json.dumps([status, sorted(set(sys.modules) - before), gc.get_freeze_count()]))
"""

_NOT_FOR_HELP = ("numpy", "npuplan.api", "npuplan.schedule", "npuplan.lowering", "npuplan.cost", "npuplan.report",
                 "flatbuffers", "tflite", "rich")
_NOT_FOR_PLAN = ("npuplan.emit", "npuplan.report.html", "npuplan.report.sweep_html", "npuplan.sweep",
                 "npuplan.velacli", "npuplan.cli_estimate", "npuplan.codec.encode", "npuplan.codec.decode", "npuplan.estimate.run",
                 "npuplan.run.runner", "npuplan.sim", "npuplan.regstream", "npuplan.velacli.supported_ops",
                 "npuplan.commands.replay", "npuplan.commands.contents", "npuplan.commands.plan_file",
                 "npuplan.schedule.pricing.estimate_oracle",
                 "npuplan.velacli.compile", "ethosu", "rich", "plotly", "tempfile", "numpy.typing", "hashlib")


def _loaded(*argv: str) -> tuple[int, set[str], int]:
    """The exit status, the modules loaded and the objects frozen (``gc.freeze``) after ``npuplan ARGV``
    (no ARGV: after ``import npuplan.cli``). Modules the interpreter had loaded before (a machine's
    ``.pth`` files may import tempfile at start-up) are left out: the check is of what the program loads."""
    done = subprocess.run([sys.executable, "-c", _LOADED, *argv], capture_output=True, text=True, check=True)
    status, modules, frozen = json.loads(done.stdout.splitlines()[-1])
    return status, set(modules), frozen


def _under(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


def test_importing_the_cli_loads_no_numpy_and_no_planner() -> None:
    _, modules, _ = _loaded()
    assert "npuplan.cli" in modules
    assert _under(modules, _NOT_FOR_HELP) == []


def test_a_plan_loads_neither_emitter_nor_html_nor_sweeps(tmp_path: Path, ds_cnn: Path) -> None:
    status, modules, frozen = _loaded("plan", str(ds_cnn), "--output-dir", str(tmp_path / "out"))
    assert status == 0
    assert frozen > 0  # the program's last step: the final collection at exit skips what the run made
    assert "npuplan.api" in modules and "numpy" in modules  # the check is of a real plan
    assert _under(modules, _NOT_FOR_PLAN) == []


def test_the_command_package_names_load_on_first_use() -> None:
    """``npuplan.commands`` keeps its public names, each loaded from its module when first asked for;
    ``validate`` is the replay function, not a module."""
    code = ("import sys, npuplan.commands as c; assert 'npuplan.commands.replay' not in sys.modules; "
            "from npuplan.commands import validate, AddressPlan, stream_context; import npuplan.commands.replay as r; "
            "assert validate is r.validate and callable(validate); assert sorted(c.__all__) == c.__all__; "
            "assert all(getattr(c, name) is not None for name in c.__all__); print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "ok"
