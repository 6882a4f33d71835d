"""The scheduler: stripes, cascades, weight buffering, feature-map placement, search strategies."""

from npuplan.schedule.planner import plan_schedule
from npuplan.schedule.types import (
    BufferMode,
    Cascade,
    Schedule,
    ScheduledOp,
    TensorPlacement,
    WeightBuffering,
)

__all__ = [
    "BufferMode", "Cascade", "Schedule", "ScheduledOp", "TensorPlacement", "WeightBuffering", "plan_schedule",
]
