"""Vela's per-layer figures matched with npuplan's layers by output-tensor name.

One rule for every bench that compares layers: a layer agrees when its NPU cycles are within a
tolerance (10%) of Vela's, relative to Vela's figure (at least one cycle), or within a few
cycles when a caller allows that slack. Layers are matched by the name of their output tensor;
Vela's rows without an NPU figure (CPU ops, the header repeated) are not layers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

TOLERANCE = 0.10


def npu_cycles_by_name(rows: Iterable[Mapping[str, object]]) -> dict[str, float]:
    """Vela's per-layer NPU cycles by output-tensor name, from rows keyed by its CSV header
    (``Name``, ``NPU``); the last row of a name wins."""
    found: dict[str, float] = {}
    for row in rows:
        npu = row.get("NPU")
        if npu in (None, "", "NPU"):
            continue
        found[str(row["Name"])] = float(npu)  # type: ignore[arg-type]
    return found


def relative_error(ours: float, theirs: float) -> float:
    """(ours - theirs) / theirs, against at least one cycle."""
    return (ours - theirs) / max(theirs, 1.0)


def agrees(ours: float, theirs: float, *, tolerance: float = TOLERANCE, slack_cycles: float = 0.0) -> bool:
    return abs(relative_error(ours, theirs)) <= tolerance or abs(ours - theirs) <= slack_cycles


def layer_agreement(ours: Mapping[str, float], theirs: Mapping[str, float]) -> tuple[int, int]:
    """(layers that agree, layers matched): Vela's layers whose name npuplan also reports."""
    matched = [name for name in theirs if name in ours]
    return sum(agrees(ours[name], theirs[name]) for name in matched), len(matched)
