"""The border with Vela's external API (``ethosu.vela.api``, the ``deploy`` extra).

This is the one module in npuplan that imports it, inside ``vela_api`` only, so ``import npuplan``
never loads Vela. A missing extra is a one-line ``EmitError`` naming the install command.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from types import ModuleType
from typing import Any

from npuplan.errors import EmitError

INSTALL_HINT = 'pip install "npuplan[deploy]"'


def vela_api() -> ModuleType:
    """The ``ethosu.vela.api`` module; raises ``EmitError`` when the deploy extra is missing."""
    try:
        from ethosu.vela import api
    except ImportError as error:
        raise EmitError(None, f"Vela's API (ethosu.vela.api) is not installed ({error}); {INSTALL_HINT}") from None
    return api


def accelerator(api: ModuleType, name: str) -> object:
    """The API's ``NpuAccelerator`` for an npuplan accelerator name (``"ethos-u55-128"``)."""
    key = name.lower().replace("ethos-u", "Ethos_U").replace("-", "_")
    found = getattr(api.NpuAccelerator, key, None)
    if found is None:
        raise EmitError(None, f"accelerator '{name}' has no NpuAccelerator in Vela's API")
    return found


def explicit_scaling(api: ModuleType, multiplier: int, shift: int) -> Any:
    """A pooling operation's explicit output scale (``multiplier * 2**-shift``), in the record
    the generator reads from the operation's ``rescale`` (then it sets the global scale, as Vela's
    compiler does for the pooling steps of its decompositions). npuplan's backend has the record
    (``emit.native.types.ExplicitScaling``); Vela keeps its own outside its external API, which
    npuplan does not import, so through Vela's API such an operation is refused (``EmitError``:
    the emitter keeps its operator on the CPU)."""
    record: Any = getattr(api, "ExplicitScaling", None)
    if record is None:
        raise EmitError(None, "an explicit pooling scale, which Vela's external API cannot carry (use "
                        "--emit-backend npuplan)")
    return record(False, [shift], [multiplier])


def quietly(call: Callable[..., Any], *args: Any) -> Any:
    """``call(*args)`` with Vela's console warnings (printed on stdout) captured and dropped."""
    with contextlib.redirect_stdout(io.StringIO()):
        return call(*args)
