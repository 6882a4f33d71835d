"""What a replay of a command stream needs besides the commands: every tensor's NHWC shape and the
network's input and output tensor names (the plan JSON reads the shapes too, without the replay)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from npuplan.ir.lowered import LoweredGraph, NpuOp
from npuplan.records import record


@record(eq=False)
class StreamContext:
    """What a replay needs besides the commands: every tensor's own NHWC shape and the network's
    input and output tensor names."""

    shapes: Mapping[str, tuple[int, int, int, int]]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


def stream_context(lowered: LoweredGraph) -> StreamContext:
    """The ``StreamContext`` of a lowered graph."""
    shapes: dict[str, tuple[int, int, int, int]] = {}
    for op in lowered.ops:
        tensors = (op.ifm, op.ifm2, op.ofm) if isinstance(op, NpuOp) else (*op.op.inputs, *op.op.outputs)
        for t in tensors:
            if t is not None:
                s = t.shape4d
                shapes[t.name] = (s.n, s.h, s.w, s.c)
    return StreamContext(MappingProxyType(shapes), tuple(t.name for t in lowered.inputs),
                         tuple(t.name for t in lowered.outputs))
