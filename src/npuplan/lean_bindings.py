"""Import only the schema-binding modules a run reads (for the command line).

The ``tflite`` package's ``__init__`` imports all of its ~190 generated modules, about 60 ms of a
run that needs about fifteen of them. ``use_lean_bindings`` registers the package without running
its ``__init__``, so each ``tflite.<Name>`` module is imported when the reader first asks for it.
Only the program entry ``npuplan.cli.run`` calls it: in a library process, other code importing
``tflite`` expects the package's full namespace, so there the reader leaves the package alone.
"""

from __future__ import annotations

import importlib.util
import sys


def use_lean_bindings() -> None:
    """Register ``tflite`` as a bare package (its submodules importable, its ``__init__`` not run),
    unless it is already imported or not installed (the reader's import then names what is missing)."""
    if "tflite" in sys.modules:
        return
    spec = importlib.util.find_spec("tflite")
    if spec is None or spec.submodule_search_locations is None:
        return
    sys.modules["tflite"] = importlib.util.module_from_spec(spec)
