"""Scheduler decisions kept beside the graph: stripes, cascades, weight buffers, fast-storage FMs.

Search steps build new ``Decisions`` values with ``dataclasses.replace``; nothing is restored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from npuplan.hw.memory import Architecture
from npuplan.schedule.model.network import Network
from npuplan.schedule.model.types import WeightBuffering


@dataclass(frozen=True, slots=True)
class WeightPlan:
    """How one op's weights are fetched.

    ``depth_slices`` are OFM depth offsets closed at the end (``(0, 16, 64)``), ``slice_bytes`` the
    encoded bytes of each slice, ``buffer_bytes`` the fast-storage bytes held while the op runs,
    ``prebuffer`` whether the first buffer is filled while the previous op runs.
    """

    buffering: WeightBuffering = WeightBuffering.NONE
    stream_bytes: int = 0
    depth_slices: tuple[int, ...] = ()
    slice_bytes: tuple[int, ...] = ()
    buffer_bytes: int = 0
    prebuffer: bool = False

    @property
    def first_buffer_bytes(self) -> int:
        return self.slice_bytes[0] if self.slice_bytes else 0


NO_WEIGHT_BUFFER = WeightPlan()


@dataclass(frozen=True, slots=True)
class RollingBuffer:
    tensor_name: str
    rows: int
    size_bytes: int


@dataclass(frozen=True, slots=True)
class CascadeSpan:
    """NPU ops ``start..end`` (inclusive indices into ``Network.npu_ops``) run stripe by stripe."""

    id: int
    start: int
    end: int
    rolling: tuple[RollingBuffer, ...] = ()


@dataclass(frozen=True, slots=True)
class Decisions:
    """Everything chosen for one schedule; aligned with ``Network.npu_ops``.

    ``rolling_fms`` (derived from ``cascades``) names the cascades' rolling buffers.
    """

    ofm_rows: tuple[int, ...]
    weights: tuple[WeightPlan, ...]
    cascades: tuple[CascadeSpan, ...] = ()
    fast_fms: frozenset[str] = frozenset()
    staged_fms: frozenset[str] = frozenset()  # arena FMs DMA'd whole into fast storage before their one reader
    rolling_fms: frozenset[str] = field(init=False, repr=False, compare=False)
    _cascade_at: dict[int, CascadeSpan] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # derived once per value: every costing asks where the rolling buffers are
        rolling = frozenset(r.tensor_name for c in self.cascades for r in c.rolling) if self.cascades else frozenset()
        object.__setattr__(self, "rolling_fms", rolling)
        # op index -> its cascade, so cascade_of is a lookup, not a scan of every cascade per op
        at = {i: c for c in reversed(self.cascades) for i in range(c.start, c.end + 1)} if self.cascades else {}
        object.__setattr__(self, "_cascade_at", at)

    def cascade_of(self, index: int) -> CascadeSpan | None:
        return self._cascade_at.get(index)


def max_decisions(net: Network, arch: Architecture) -> Decisions:
    """Whole feature maps, no cascades, no weight buffers; FMs in fast storage iff the arena is."""
    fast = frozenset(net.fms) if not arch.is_dedicated_sram else frozenset()
    return Decisions(
        ofm_rows=tuple(op.ofm_shape.h for op in net.npu_ops),
        weights=tuple(NO_WEIGHT_BUFFER for _ in net.npu_ops),
        fast_fms=fast,
    )
