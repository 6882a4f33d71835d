"""Live ranges, address allocators and the allocation verifier."""

from npuplan.memory.allocators import Allocation, PlacementMemo, allocate
from npuplan.memory.hillclimb import HillClimbSettings
from npuplan.memory.live_range import (
    LiveRange,
    LiveRangeSet,
    TensorUse,
    build_live_ranges,
    live_bytes_lower_bound,
)
from npuplan.memory.verify import verify_allocation

__all__ = [
    "Allocation",
    "HillClimbSettings",
    "LiveRange",
    "LiveRangeSet",
    "PlacementMemo",
    "TensorUse",
    "allocate",
    "build_live_ranges",
    "live_bytes_lower_bound",
    "verify_allocation",
]
