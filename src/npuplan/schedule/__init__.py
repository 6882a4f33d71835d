"""The scheduler, in four layers whose imports point one way (model <- pricing <- moves <- search):

- ``model``: the problem and its rules: the network view, decisions, stripe geometry, fast-storage
  usage, rolling stripes, in-place outputs, the output records (``types``) and ``Limits`` (the
  SRAM budget, its fit checks and Size's trade rule);
- ``pricing``: the one cost interface (``oracle.CostOracle``), its adapter to ``npuplan.cost``,
  the costing of one op in context and the assembling of a priced ``Schedule``;
- ``moves``: what proposes decisions: cascades (chains and branches), weight buffering,
  fast-storage placement, staging, trimming, operator order;
- ``search``: what chooses: the cascade and Pareto strategies, frontiers, the floor schedule and
  the top-level ``plan_schedule``.
"""

from npuplan.schedule.model.types import (
    BufferMode,
    Cascade,
    Schedule,
    ScheduledOp,
    TensorPlacement,
    WeightBuffering,
)
from npuplan.schedule.search.planner import plan_schedule

__all__ = [
    "BufferMode", "Cascade", "Schedule", "ScheduledOp", "TensorPlacement", "WeightBuffering", "plan_schedule",
]
