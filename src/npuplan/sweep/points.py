"""Sweep points: every combination of the swept option values, one frozen record each.

A point's ``key`` names what its result depends on (the model's bytes, its name, every plan option
and the npuplan version), so a re-run finds the points a sweep CSV already holds.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from npuplan.records import record
from npuplan.version import __version__
from npuplan.api import make_options
from npuplan.cli_options import SIZE_FORMAT, parse_size_bytes
from npuplan.errors import ConfigError, ModelError, UsageError
from npuplan.hw.accelerator import accelerator
from npuplan.hw.config import read_memory_mode, read_system_config
from npuplan.hw.ini import load_database
from npuplan.options import DEFAULT_CONFIG, PlanOptions

# The swept options: the command line's name and the ``make_options`` keyword of each.
AXES = (
    ("accelerator-config", "accelerator_config"),
    ("system-config", "system_config"),
    ("memory-mode", "memory_mode"),
    ("optimise", "optimise"),
    ("arena-cache-size", "arena_cache_size"),
)
# One column per plan option, after the model's.
OPTION_COLUMNS = tuple(f"option_{f.name}" for f in fields(PlanOptions))
# The value of ``--arena-cache-size`` that keeps the memory mode's own size.
DEFAULT_SIZE = "default"



@record
class ModelFile:
    """A model file of the sweep: its path and the SHA-256 of its bytes (hex)."""

    path: str
    sha256: str

    @property
    def network(self) -> str:
        """The network's name in reports: the file name without its suffix."""
        return Path(self.path).stem


@record
class SweepPoint:
    """One plan of a sweep: ``index`` is its place in the sweep's order, ``key`` its resume key."""

    index: int
    model: ModelFile
    options: PlanOptions
    key: str

    def cells(self) -> dict[str, object]:
        """The point's own CSV cells: model, its hash, every option, version and key."""
        cells: dict[str, object] = {"model": self.model.path, "model_sha256": self.model.sha256}
        cells.update(zip(OPTION_COLUMNS, option_values(self.options)))
        cells["npuplan_version"] = __version__
        cells["key"] = self.key
        return cells


def option_values(options: PlanOptions) -> list[object]:
    """``options`` as plain values, one per ``OPTION_COLUMNS`` (config files joined by ';',
    an arena cache size of ``None`` as an empty cell)."""
    values: list[object] = []
    for f in fields(PlanOptions):
        value = getattr(options, f.name)
        if isinstance(value, tuple):
            value = ";".join(value)
        values.append("" if value is None else str(value))
    return values


def point_key(model: ModelFile, options: PlanOptions, config_sha256: str = "") -> str:
    """The SHA-256 (hex) of what a point's result depends on: the model's bytes and name, every
    plan option, the contents of the .ini files (``config_sha256``) and the npuplan version."""
    what = [__version__, model.sha256, model.network, option_values(options), config_sha256]
    return hashlib.sha256(json.dumps(what).encode()).hexdigest()


def config_digest(config_files: Iterable[str]) -> str:
    """The SHA-256 (hex) of the .ini files' contents in order ('' for none), so editing one
    re-plans the points that read it. The files were read (and checked) already."""
    files = tuple(config_files)
    if not files:
        return ""
    digest = hashlib.sha256()
    for path in files:
        digest.update(hashlib.sha256(Path(path).read_bytes()).digest())
    return digest.hexdigest()


def parse_size(text: str) -> int | None:
    """A size in bytes from ``128k`` (131072), ``1M`` or ``4096``; ``None`` for ``default``.
    Raises ``ConfigError`` (one line) on anything else."""
    if text.strip().lower() == DEFAULT_SIZE:
        return None
    try:
        return parse_size_bytes(text)
    except UsageError:
        raise UsageError(f"invalid value '{text}' for --arena-cache-size: expected {SIZE_FORMAT}, "
                          f"or '{DEFAULT_SIZE}'") from None


def split_values(text: str, option: str) -> tuple[str, ...]:
    """The comma-separated values of ``--option`` (no empty ones, duplicates dropped, in order)."""
    values = tuple(dict.fromkeys(v.strip() for v in text.split(",")))
    if not values or any(not v for v in values):
        raise UsageError(f"invalid value '{text}' for --{option}: expected a comma-separated list of values")
    return values


def model_file(path: str) -> ModelFile:
    """``path`` with the SHA-256 of its bytes; ``ModelError`` if it cannot be read."""
    file = Path(path)
    if not file.is_file():
        raise ModelError(f"model file not found: {path}")
    try:
        digest = hashlib.sha256(file.read_bytes()).hexdigest()
    except OSError as error:
        raise ModelError(f"cannot read model file {path}: {error.strerror or error}") from None
    return ModelFile(path, digest)


def sweep_points(models: Sequence[str], axes: dict[str, tuple[str, ...]], fixed: dict[str, Any]) -> tuple[SweepPoint, ...]:
    """Every combination of ``axes`` (command-line name -> its values) for every model, models
    outermost and then the axes in ``AXES`` order (so the points of one model and accelerator are
    neighbours); ``fixed`` holds the other ``make_options`` keywords.

    Raises ``ConfigError``/``ModelError`` (one line) for any value that is bad on its own: an
    unknown accelerator, system config, memory mode or optimise goal, a bad size, a missing model or
    a broken .ini file. A combination that is bad only together (a size beyond an accelerator's
    address space) is a point; planning it reports why.
    """
    files = [model_file(path) for path in dict.fromkeys(models)]
    lists: list[tuple[str | None, ...]] = [tuple(axes.get(option, ())) or (None,) for option, _ in AXES]
    _check_names(lists, fixed.get("config", ()))
    config_sha256 = config_digest(fixed.get("config", ()))
    points: list[SweepPoint] = []
    seen: set[str] = set()
    for model in files:
        for combo in itertools.product(*lists):
            keywords = dict(fixed)
            for (option, keyword), value in zip(AXES, combo):
                if value is not None:
                    keywords[keyword] = parse_size(value) if option == "arena-cache-size" else value
            options = make_options(**keywords)
            key = point_key(model, options, config_sha256)
            if key not in seen:  # the same bytes under the same name in two folders: one point
                seen.add(key)
                points.append(SweepPoint(len(points), model, options, key))
    return tuple(points)


def _check_names(lists: list[tuple[str | None, ...]], config_files: Iterable[str]) -> None:
    """Raise ``ConfigError`` for an unknown accelerator, system config or memory mode, a broken
    .ini file, or a default name beside config files (as ``plan`` would for every point)."""
    accelerators, systems, modes, _, sizes = lists
    for name in accelerators:
        if name is not None:
            accelerator(name)
    for size in sizes:
        if size is not None:
            parse_size(size)
    files = tuple(config_files)
    db = load_database(files)
    for option, names, read in (("system config", systems, read_system_config), ("memory mode", modes, read_memory_mode)):
        for name in names:
            if name is None or name == DEFAULT_CONFIG:
                if files:
                    raise ConfigError(f"a config file was given but the {option} is '{DEFAULT_CONFIG}'; name one "
                                      "explicitly (Vela does not allow config files with a default configuration)")
                continue
            read(db, name)
