"""The scheduler's output contract: frozen records the reports and the allocator consume.

A ``Schedule`` is a decision *beside* the lowered graph: it never mutates ``NpuOp`` or ``Tensor``.
Sizes are bytes; stripes are NHWC ``Shape4D`` boxes; cycles live in each op's ``OpCost``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from npuplan._compat import StrEnum
from npuplan.hw.memory import MemArea
from npuplan.ir.lowered import NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.records import record

if TYPE_CHECKING:  # the cost module lands separately; keep this module importable without it
    from npuplan.cost import OpCost  # noqa: F401

TensorFormat = Literal["NHWC", "NHCWB16"]


class BufferMode(StrEnum):
    """How a feature map is held in memory."""

    FULL = "full"  # the whole tensor is resident
    ROLLING = "rolling"  # a rolling buffer of ``rows`` rows between two ops of a cascade


class WeightBuffering(StrEnum):
    """How an op's encoded weights reach the NPU."""

    NONE = "none"  # read straight from their permanent area (no fast-storage copy)
    FULL = "full"  # copied whole into fast storage before the op runs
    SINGLE = "single"  # one OFM depth slice at a time in a single buffer
    DOUBLE = "double"  # OFM depth slices double-buffered (DMA overlaps compute)


@record
class TensorPlacement:
    """Where one feature map (or weight buffer) lives and how big it is there.

    ``rows`` is the number of rows held for a rolling buffer (``None`` for full tensors).
    """

    tensor_name: str
    area: MemArea
    size_bytes: int
    format: TensorFormat = "NHWC"
    buffer_mode: BufferMode = BufferMode.FULL
    rows: int | None = None


@record
class ScheduledOp:
    """One NPU op with every decision the scheduler made for it.

    ``ofm_stripe``/``ifm_stripe``/``ifm2_stripe`` are the boxes produced/consumed per step (the
    whole feature map when not cascaded). ``cascade_id`` is -1 when the op is not in a cascade.
    ``weight_buffer_bytes`` is the fast-storage weight buffer size (0 when unbuffered),
    ``weight_depth_slice`` the OFM depth per weight slice (0 when unbuffered),
    ``prebuffered_weight_bytes`` the part of the first slice fetched while the previous op ran.
    ``weight_depth_slices`` the OFM depth offsets of the weight slices closed by the depth
    (``(0, 16, 64)``; empty when not recorded) and ``weight_slice_bytes`` the encoded bytes of each
    slice as the schedule sized its buffer (the command stream's weight DMAs use the same).
    ``cost`` is the cost model's ``OpCost`` for the chosen configuration (``None`` only in stubs).
    ``sram_usage_bytes`` is the fast-storage bytes in use while the op runs (Vela's "SRAM Usage").
    """

    op: NpuOp
    block_config: Any
    ofm_stripe: Shape4D
    ifm_stripe: Shape4D
    ifm2_stripe: Shape4D | None = None
    cascade_id: int = -1
    weight_buffering: WeightBuffering = WeightBuffering.NONE
    weight_buffer_bytes: int = 0
    weight_depth_slice: int = 0
    prebuffered_weight_bytes: int = 0
    cost: OpCost | None = None
    sram_usage_bytes: int = 0
    weight_depth_slices: tuple[int, ...] = ()
    weight_slice_bytes: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def npu_cycles(self) -> int:
        """Total cycles of the op per the cost model (0 if it was not costed)."""
        if self.cost is None:
            return 0
        return int(getattr(self.cost, "total_cycles", getattr(self.cost, "cycles", 0)))


@record
class Cascade:
    """A chain of ops run stripe by stripe; ``rolling_buffers`` are the intermediate tensors."""

    id: int
    op_names: tuple[str, ...]
    rolling_buffers: tuple[TensorPlacement, ...] = ()
    sram_bytes: int = 0  # fast-storage bytes the cascade needs at its peak


@record(eq=False)
class Schedule:
    """The scheduler's result for one NPU subgraph (or a whole lowered graph).

    ``ops`` in execution order; ``placements`` by tensor name; ``sram_peak_bytes`` the real peak of
    fast storage over the schedule (Vela's ``sram_memory_used`` for the subgraph); ``notes`` short
    human-readable remarks on the strategy chosen ("search=cascade", "evicted x to Dram"...).
    ``staged_fms`` names arena feature maps copied whole by DMA into fast storage (buffer
    ``<name>#staged``) just before the first op that reads them, held until the last.
    ``buffer_aliases`` pairs ``(ofm, ifm)``: an elementwise op's OFM written over the buffer of an
    input that dies there; an allocator gives both one buffer (one live range over both).
    """

    ops: tuple[ScheduledOp, ...]
    placements: Mapping[str, TensorPlacement] = field(default_factory=lambda: MappingProxyType({}))
    cascades: tuple[Cascade, ...] = ()
    sram_peak_bytes: int = 0
    notes: tuple[str, ...] = ()
    buffer_aliases: tuple[tuple[str, str], ...] = ()
    staged_fms: tuple[str, ...] = ()  # arena FMs DMA'd whole into fast storage before their first reader (read by all)

    def op(self, name: str) -> ScheduledOp:
        for s in self.ops:
            if s.op.name == name:
                return s
        raise KeyError(name)

    @property
    def total_npu_cycles(self) -> int:
        return sum(s.npu_cycles for s in self.ops)
