"""Costings and placement candidates shared by choices made for many decisions of one network
(one architecture and oracle).

The Pareto search's ``choose`` and the cascade search's ``placements_with_weights`` choose weight plans
and fast-storage feature maps for tens of decision sets that share most ops' stripes and feature-map
places. ``costing.op_context`` names what an op's costing reads of a decision set, so a cost made
under one decision set answers the others with the same context.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from npuplan.records import record


@record(eq=False, slots=False)
class ChoiceMemo:
    """``plain_scores``: an op's weight plans read without prefetch, scored (``weights._plain``),
    by context; ``candidates``: its candidate weight plans and their least cycles (``weights._candidates``), by context; ``weight_scores``: all of them ranked with reading in place and the prefetching
    plans (``weights._scored``), by context and the previous op's slack; ``cascade_offers``: a
    cascade's offers of whole weights, by its ops' contexts and the slack before it
    (``weights._cascade_offers``); ``fm_cycles``: an op's cycles by context, weight plan and the
    candidate feature map left out of fast storage (``fast_storage``); ``fm_candidates``: the
    feature maps that may go to fast storage and their unscored ``placement_groups.Candidate``
    values, by the cascades of the decisions (all they read); ``rechosen``: decisions with their
    weights chosen again (``pareto.rebuffered``), by the decisions without weight plans and the
    limit (all the choice reads)."""

    plain_scores: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict)
    candidates: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict)
    weight_scores: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict)
    cascade_offers: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict)
    fm_cycles: dict[tuple[Any, ...], int] = field(default_factory=dict)
    fm_candidates: dict[tuple[Any, ...], tuple[tuple[Any, ...], tuple[Any, ...]]] = field(default_factory=dict)
    rechosen: dict[tuple[Any, ...], Any] = field(default_factory=dict)
