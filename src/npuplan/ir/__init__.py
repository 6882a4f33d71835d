"""The frozen intermediate representation."""

from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
from npuplan.ir.lowered import (
    Activation,
    BlockType,
    CpuOp,
    Kernel,
    LoweredGraph,
    LoweredOp,
    NpuOp,
    Padding,
    Partition,
    Placement,
    PoolKind,
)
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.ir.verify import verify

__all__ = [
    "Activation", "BlockType", "CpuOp", "DataType", "Graph", "Kernel", "LoweredGraph", "LoweredOp",
    "Model", "NpuOp", "Op", "Padding", "Partition", "Placement", "PoolKind", "Quantization",
    "Shape4D", "Tensor", "frozen_options", "verify",
]
