"""The scheduler's read-only view of a lowered graph: NPU ops, time steps and feature maps.

Time steps are positions in ``LoweredGraph.ops`` (CPU ops included), so live ranges of tensors
crossing CPU ops are right. Built once per ``plan_schedule`` call; never mutated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Any, TypeVar

import numpy as np

from npuplan.hw.lut_slots import TableSlots
from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import CpuOp, LoweredGraph, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.lowering.formats import brick_format_tensors, linear_format_tensors
from npuplan.records import record
from npuplan.schedule.model.geometry import storage_bytes
from npuplan.units import BRICK_DEPTH

_T = TypeVar("_T")


@record
class FeatureMap:
    """A non-constant tensor: its storage size, format and the time steps it must live over."""

    name: str
    size_bytes: int
    format: str
    start: int
    end: int
    producer: int  # index into ``Network.npu_ops`` of the NPU producer, -1 if none
    consumers: tuple[int, ...]  # indices into ``Network.npu_ops`` of NPU consumers, in op (time) order
    whole_reason: str  # why it must stay whole ("" if it may be striped)
    writers: int = 1  # how many NPU ops write it (a concatenation written in slices has several)

    @property
    def first_reader(self) -> int:
        """The NPU op that reads it first (``consumers`` is in op order; -1 if none reads it)."""
        return self.consumers[0] if self.consumers else -1

    @property
    def last_reader(self) -> int:
        """The NPU op that reads it last (-1 if none reads it)."""
        return self.consumers[-1] if self.consumers else -1


@record(eq=False, slots=False)
class Network:
    """The lowered graph as the scheduler sees it: its NPU ops in order with their time steps, and
    its feature maps (``FeatureMap``) by name."""

    graph: LoweredGraph
    npu_ops: tuple[NpuOp, ...]
    times: tuple[int, ...]  # time step of each NPU op
    fms: dict[str, FeatureMap]
    last_time: int
    # maps that must be linear (NHWC) and are written in slices (a concatenation at depth offsets
    # that are not multiples of 16): if one rolls, its rolling buffer is NHWC too
    linear_slices: frozenset[str] = frozenset()
    # maps of unaligned depth stored NHWC for Size (``pack_unaligned``): rolled, they stay packed
    packed: frozenset[str] = frozenset()
    # whether each NPU op loads its lookup table (``hw.lut_slots``), with the table banks reserved
    # for tables and without (an op without a table has none to load)
    table_loads: tuple[tuple[bool, ...], tuple[bool, ...]] = ((), ())
    # ``op_views``, built on first use (every costing reads them)
    _views: tuple[OpView, ...] | None = field(default=None, init=False, repr=False, compare=False)
    # ``derived`` values, by the function that works each out
    _derived: dict[Callable[[Any], Any], Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def op_views(self) -> tuple[OpView, ...]:
        """``OpView`` of each NPU op, in order: what a costing reads of the network."""
        if self._views is None:
            object.__setattr__(self, "_views", tuple(_op_view(self, k) for k in range(len(self.npu_ops))))
        return self._views  # type: ignore[return-value]

    def derived(self, work_out: Callable[[Network], _T]) -> _T:
        """``work_out(self)``, worked out on the first call only: a fact about the network that
        every search step asks (the network never changes, so neither does the answer)."""
        if work_out not in self._derived:
            self._derived[work_out] = work_out(self)
        return self._derived[work_out]  # type: ignore[no-any-return]

    def loads_table(self, index: int, reserved: bool) -> bool:
        """Whether NPU op ``index`` loads its table (the accelerator's table banks ``reserved``)."""
        loads = self.table_loads[0 if reserved else 1]
        return loads[index] if index < len(loads) else self.npu_ops[index].lut is not None

    def fm(self, tensor: Tensor | None) -> FeatureMap | None:
        return None if tensor is None else self.fms.get(tensor.name)


@record
class OpView:
    """What costing NPU op ``index`` reads of its network, worked out once per op: its feature maps'
    names (``ifm2``: None when absent or constant), their storage (format, bytes; None for a
    tensor that is no feature map), their formats when rolled (``rolling``: NHWC for a map written
    in depth slices or kept packed, else NHCWB16), the op reading ``ifm`` first, and whether the op
    loads its table and follows an NPU op of its command stream that keeps the table (each with
    the accelerator's table banks reserved, then not)."""

    op: NpuOp
    ifm: str
    ofm: str
    ifm2: str | None
    stored: tuple[tuple[str, int] | None, tuple[str, int] | None, tuple[str, int] | None]
    rolling: tuple[str, str, str | None]
    first_reader: int
    loads_table: tuple[bool, bool]
    streamed: tuple[bool, bool]


def rolling_format(net: Network, name: str) -> str:
    """A rolling buffer's format: NHCWB16, except for a map written in depth slices the brick
    format cannot hold (``Network.linear_slices``) or one Size keeps packed (``Network.packed``)."""
    return "NHWC" if name in net.linear_slices or name in net.packed else "NHCWB16"


def _op_view(net: Network, index: int) -> OpView:
    op = net.npu_ops[index]

    def stored(name: str) -> tuple[str, int] | None:
        fm = net.fms.get(name)
        return None if fm is None else (fm.format, fm.size_bytes)

    ifm2 = op.ifm2
    fm = net.fms.get(op.ifm.name)
    first = -1 if fm is None else fm.first_reader
    follows = index > 0 and net.times[index] == net.times[index - 1] + 1
    return OpView(
        op, op.ifm.name, op.ofm.name, None if ifm2 is None or ifm2.is_constant else ifm2.name,
        (stored(op.ifm.name), stored(op.ofm.name), None if ifm2 is None else stored(ifm2.name)),
        (rolling_format(net, op.ifm.name), rolling_format(net, op.ofm.name),
         None if ifm2 is None else rolling_format(net, ifm2.name)),
        first, (net.loads_table(index, True), net.loads_table(index, False)),
        # reserved banks: a table an earlier op of the stream loaded stays; else only after a table op
        (follows, follows and net.npu_ops[index - 1].lut is not None),
    )


def _op_tensors(op: NpuOp | CpuOp) -> tuple[list[Tensor], list[Tensor]]:
    if isinstance(op, NpuOp):
        ins = [t for t in (op.ifm, op.ifm2) if t is not None]
        return ins, [op.ofm]
    return [t for t in op.op.inputs if t is not None], list(op.op.outputs)


def _shape_of(tensor: Tensor, npu_views: dict[str, Shape4D]) -> Shape4D:
    return npu_views.get(tensor.name, tensor.shape4d)


def build_network(graph: LoweredGraph, *, pack_unaligned: bool = False) -> Network:
    """Index the graph: NPU ops with their time steps and every feature map's live range.

    With ``pack_unaligned`` (Size), a feature map whose depth is not a multiple of 16 is stored
    NHWC rather than in bricks, which would pad its depth (a 4-channel map takes 4x the bytes)."""
    npu_ops = tuple(op for op in graph.ops if isinstance(op, NpuOp))
    npu_index = {id(op): i for i, op in enumerate(npu_ops)}
    times = tuple(t for t, op in enumerate(graph.ops) if isinstance(op, NpuOp))
    last = max(len(graph.ops) - 1, 0)
    first_use: dict[str, int] = {}
    last_use: dict[str, int] = {}
    tensors: dict[str, Tensor] = {}
    producer: dict[str, int] = {}
    consumers: dict[str, list[int]] = {}
    cpu_touch: set[str] = set()
    writers: dict[str, int] = {}
    for t, op in enumerate(graph.ops):
        ins, outs = _op_tensors(op)
        for tensor in ins + outs:
            if tensor.is_constant:
                continue
            tensors.setdefault(tensor.name, tensor)
            first_use.setdefault(tensor.name, t)
            last_use[tensor.name] = t
            if isinstance(op, CpuOp):
                cpu_touch.add(tensor.name)
        if isinstance(op, NpuOp):
            producer.setdefault(op.ofm.name, npu_index[id(op)])
            writers[op.ofm.name] = writers.get(op.ofm.name, 0) + 1
            for tensor in ins:
                if not tensor.is_constant:
                    consumers.setdefault(tensor.name, []).append(npu_index[id(op)])
    graph_in = {t.name for t in graph.inputs}
    graph_out = {t.name for t in graph.outputs}
    linear, bricked = linear_format_tensors(graph), brick_format_tensors(graph)
    fms: dict[str, FeatureMap] = {}
    for name, tensor in tensors.items():
        start = 0 if name in graph_in else first_use[name]
        end = last if name in graph_out else last_use[name]
        reason = _whole_reason(name, graph_in, graph_out, cpu_touch)
        npu_only = name not in cpu_touch and name not in graph_in and name not in graph_out
        fmt = "NHCWB16" if npu_only and name not in linear else "NHWC"
        if pack_unaligned and tensor.shape4d.c % BRICK_DEPTH and name not in bricked:
            fmt = "NHWC"  # bricks would pad the depth to a multiple of 16: keep the bytes packed
        size = storage_bytes(tensor.shape4d, tensor.dtype.size_bytes, fmt)
        fms[name] = FeatureMap(name, size, fmt, start, end, producer.get(name, -1),
                               tuple(consumers.get(name, ())), reason, writers.get(name, 0))
    sliced = {op.ofm.name for op in npu_ops if op.ofm_write_offset is not None}
    packed = frozenset(name for name, t in tensors.items()
                       if pack_unaligned and t.shape4d.c % BRICK_DEPTH and name not in bricked)
    return Network(graph, npu_ops, times, fms, last, frozenset(sliced & set(linear)), packed,
                   (_table_loads(graph, reserved=True), _table_loads(graph, reserved=False)))


def _table_loads(graph: LoweredGraph, *, reserved: bool) -> tuple[bool, ...]:
    """Whether each NPU op of ``graph`` loads its table, op by op in order (each run of NPU ops
    between CPU ops is a command stream of its own)."""
    slots = TableSlots(reserved)
    loads: list[bool] = []
    for op in graph.ops:
        if isinstance(op, CpuOp):
            slots.reset()
            continue
        table = None if op.lut is None else np.ascontiguousarray(op.lut).tobytes()
        loads.append(slots.place(table, 0 if op.lut is None else op.lut.nbytes)[1])
    return tuple(loads)


def _whole_reason(name: str, graph_in: set[str], graph_out: set[str], cpu_touch: set[str]) -> str:
    if name in graph_in:
        return "network input must be whole"
    if name in graph_out:
        return "network output must be whole"
    if name in cpu_touch:
        return "tensor shared with a CPU operator must be whole"
    return ""
