"""Costings shared by choices made for many decisions of one network (one architecture and oracle).

The Pareto search's ``choose`` and the cascade search's ``place_with_weights`` choose weight plans
and fast-storage feature maps for tens of decision sets that share most ops' stripes and feature-map
places. ``op_context`` names what an op's costing reads of a decision set, so a cost made under one
decision set answers the others with the same context.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from npuplan.schedule.decisions import Decisions
from npuplan.schedule.network import Network


def op_context(net: Network, dec: Decisions, i: int) -> tuple[Any, ...]:
    """What ``costing.cost_op`` reads of ``dec`` for op ``i`` besides its weight plan: its stripe
    rows, whether its IFM is staged, whether it is in a cascade, and whether each of its feature
    maps is a rolling buffer or in fast storage (their formats follow from that)."""
    op = net.npu_ops[i]
    rolling, fast = dec.rolling_fms, dec.fast_fms
    ifm, ofm = op.ifm.name, op.ofm.name
    ifm2 = op.ifm2.name if op.ifm2 is not None and not op.ifm2.is_constant else None
    return (i, min(dec.ofm_rows[i], op.ofm_shape.h), ifm in dec.staged_fms, dec.cascade_of(i) is not None,
            ifm in rolling, ifm in fast, ofm in rolling, ofm in fast, ifm2 in rolling, ifm2 in fast)


@dataclass(frozen=True)
class ChoiceMemo:
    """``weight_scores``: an op's weight plans scored (``weights._scored``), by context and, for
    the prefetching plans, the previous op's slack; ``fm_cycles``: an op's cycles by context,
    weight plan and the candidate feature map left out of fast storage (``fast_storage``)."""

    weight_scores: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict)
    fm_cycles: dict[tuple[Any, ...], int] = field(default_factory=dict)
