"""Cost model: weight-stream sizes, per-op cycles and bandwidth, DMA transfers.

The scheduler calls ``op_cost(CostQuery(...), arch)`` for whole ops and for stripes, and
``encoded_weight_size(op, accel, depth_step=...)`` / ``weight_slice_sizes(...)`` for weight-buffer
and weight-stream sizes.
"""

from npuplan.cost.model import datapath_cycles, op_cost
from npuplan.cost.query import (
    BlockChoice,
    CostQuery,
    Direction,
    FmStaging,
    LutAccess,
    Operand,
    OpCost,
    Purpose,
    StripeRows,
    TensorFormat,
    WeightAccess,
    WeightFetch,
)
from npuplan.cost.transfer import dma_cycles
from npuplan.cost.weights import WeightSlice, WeightStreamSize, encoded_weight_size, weight_slice_sizes

__all__ = [
    "BlockChoice",
    "CostQuery",
    "Direction",
    "FmStaging",
    "LutAccess",
    "OpCost",
    "Operand",
    "Purpose",
    "StripeRows",
    "TensorFormat",
    "WeightAccess",
    "WeightFetch",
    "WeightSlice",
    "WeightStreamSize",
    "datapath_cycles",
    "dma_cycles",
    "encoded_weight_size",
    "op_cost",
    "weight_slice_sizes",
]
