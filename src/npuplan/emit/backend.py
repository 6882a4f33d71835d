"""Which implementation of the Ethos-U operation interface emits the file.

``npuplan``: npuplan's own weight codec, block-config rules, register command stream generator
and driver payload (``emit.native``), no Vela needed. ``vela``: Vela's external API
(``ethosu.vela.api``, the ``deploy`` extra), the reference the native backend is tested against.
Both take the same operations from ``emit.operations``.
"""

from __future__ import annotations

from npuplan._compat import StrEnum
from types import ModuleType

from npuplan.emit.vela import vela_api


class EmitBackend(StrEnum):
    NPUPLAN = "npuplan"
    VELA = "vela"


def backend_api(backend: EmitBackend) -> ModuleType:
    """The module that implements the operation interface for ``backend``."""
    if backend is EmitBackend.VELA:
        return vela_api()
    from npuplan.emit.native import api

    return api
