"""Shape views left by removed reshapes: an op reads (or writes) a tensor in another shape.

When ``drop_noop_reshapes`` removes a RESHAPE, its neighbour is rewired to the tensor on the other
side, which has the other shape. The op records the shape it was written for as a view
(``input_views`` / ``output_views`` options: pairs of tensor and shape), and conversion sees the
tensor in that shape (a conv after a flatten's inverse sees 1x4x4xC, not 1x1x16xC) while the NPU
operations it produces still name the real tensor, so buffers and live ranges stay shared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import CpuOp, LoweredOp, NpuOp
from npuplan.lowering._util import with_options

INPUT_VIEWS = "input_views"
OUTPUT_VIEWS = "output_views"


def add_view(op: Op, key: str, tensor: Tensor, shape: tuple[int, ...]) -> Op:
    """``op`` recording that it sees ``tensor`` as ``shape`` (a no-op when the 4D shapes agree)."""
    if tensor.shape4d == Tensor(tensor.name, shape, tensor.dtype).shape4d:
        return op
    kept = tuple((t, s) for t, s in op.options.get(key, ()) if t is not tensor)
    return with_options(op, **{key: (*kept, (tensor, tuple(shape)))})


def _viewed(tensor: Tensor, shape: tuple[int, ...]) -> Tensor:
    data = tensor.data
    if data is not None and data.size == Tensor(tensor.name, shape, tensor.dtype).elements:
        data = data.reshape(shape)
    return replace(tensor, shape=shape, data=data)


def lower_with_views(op: Op, lower_op: Callable[[Op], tuple[LoweredOp, ...]]) -> tuple[LoweredOp, ...]:
    """``lower_op(op)`` with the op's views applied, the real tensors put back in the result."""
    views: dict[Tensor, tuple[int, ...]] = {}
    for key in (INPUT_VIEWS, OUTPUT_VIEWS):
        views.update(dict(op.options.get(key, ())))
    if not views:
        return lower_op(op)
    shown = {t: _viewed(t, shape) for t, shape in views.items()}
    real = {v: t for t, v in shown.items()}

    def swap(ts: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(shown.get(t, t) if t is not None else None for t in ts)

    lowered = lower_op(replace(op, inputs=swap(op.inputs), outputs=swap(op.outputs)))
    result: list[LoweredOp] = []
    for item in lowered:
        if isinstance(item, CpuOp):
            result.append(CpuOp(op, item.reason))
            continue
        assert isinstance(item, NpuOp)
        ifm2 = real.get(item.ifm2, item.ifm2) if item.ifm2 is not None else None
        result.append(replace(item, ifm=real.get(item.ifm, item.ifm), ifm2=ifm2, ofm=real.get(item.ofm, item.ofm)))
    return tuple(result)
