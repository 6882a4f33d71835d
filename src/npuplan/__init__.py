"""npuplan: an open planner and performance estimator for Arm Ethos-U55/U65 microNPUs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from npuplan.version import __version__

if TYPE_CHECKING:
    from npuplan.result import Plan


def plan(path: Any, **options: Any) -> "Plan":
    """Plan a TFLite network; see ``npuplan.api.plan``."""
    from npuplan.api import plan as _plan

    return _plan(path, **options)


__all__ = ["plan", "__version__"]
