"""The cost model's input and output records (frozen values, units in names)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Literal

from npuplan._compat import StrEnum
from npuplan.hw.accelerator import Block
from npuplan.hw.memory import MemArea
from npuplan.ir.lowered import NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.records import record

TensorFormat = Literal["NHWC", "NHCWB16"]


class Purpose(StrEnum):
    """What a memory access is for."""

    FEATURE_MAP = "feature_map"
    WEIGHTS = "weights"
    SCALES = "scales"  # encoded scale & bias (Vela's FSBias)
    LUT = "lut"


class Direction(StrEnum):
    READ = "read"
    WRITE = "write"


class WeightFetch(StrEnum):
    """How encoded weights reach the NPU."""

    DIRECT = "direct"  # read by the NPU straight from their permanent area
    BUFFERED = "buffered"  # DMA'd into one fast-storage buffer; the op waits for it
    DOUBLE_BUFFERED = "double_buffered"  # DMA of slice n+1 overlaps compute of slice n


@record
class Operand:
    """One feature-map operand as the NPU accesses it.

    ``shape`` is the box read or written (the stripe; the whole tensor when not cascaded),
    ``bits`` the element size in bits; ``step_x`` the columns between those the NPU accesses (a
    strided view's step, ``NpuOp.ifm_step``: its pixels are never one run of bytes).
    """

    shape: Shape4D
    area: MemArea
    format: TensorFormat = "NHWC"
    bits: int = 8
    step_x: int = 1


@record
class BlockChoice:
    """The block configuration the NPU runs with (from ``hw.block_config``).

    ``ofm_block``/``ifm_block`` are h x w x depth; ``acc40`` selects 40-bit accumulators;
    ``part_kernel`` part-kernel-first traversal (convolutions only).
    """

    ofm_block: Block
    ifm_block: Block
    acc40: bool = False
    part_kernel: bool = False

    @classmethod
    def of(cls, config: object) -> "BlockChoice":
        """Adapt a ``hw.block_config.BlockConfig`` (``ofm_block``, ``ifm_block``, accumulator)."""
        acc = getattr(config, "acc_type", getattr(config, "accumulator", ""))
        return cls(
            ofm_block=getattr(config, "ofm_block"),
            ifm_block=getattr(config, "ifm_block"),
            acc40="40" in str(acc),
            part_kernel=bool(getattr(config, "is_partkernel", getattr(config, "part_kernel", False))),
        )


@record
class WeightAccess:
    """Where the op's encoded weights come from and how.

    ``stream_bytes`` is the whole encoded stream (weights + scales + alignment, all slices and
    cores; Vela's ``len(npu_weights_tensor.buffer)``); ``first_slice_bytes`` the first OFM depth
    slice over all cores, each core's range rounded up to 16 (what must arrive before the op can
    start); ``source_area`` the permanent area; ``buffer_area`` the fast-storage buffer when
    fetched by DMA. ``depth_slices`` are the OFM depth offsets of the slices, closed at the end
    (``(0, 16, 64)``). ``prefetched``: the buffer is reserved while the previous op runs, so the
    first slice's DMA may run under it (its slack); else the buffer may share that op's memory
    and the DMA waits for it. ``full_stream_bytes`` is the size of the stream encoded as one
    slice (Vela times the whole copy with it); ``slack_npu_cycles`` overrides the window this op
    leaves for the next op's weight DMA (the scheduler's choice; default the last slice's cycles).
    """

    stream_bytes: int
    source_area: MemArea
    fetch: WeightFetch = WeightFetch.DIRECT
    buffer_area: MemArea | None = None
    first_slice_bytes: int = 0
    depth_slices: tuple[int, ...] = ()
    scale_bytes_per_channel: int = 10
    full_stream_bytes: int | None = None  # unsliced encoding used to time the full copy (default: stream)
    slack_npu_cycles: float | None = None  # own DMA window for the next op (default: last slice's cycles)
    prefetched: bool = True  # the buffer is held under the previous op, so the DMA may run under it

    @property
    def read_area(self) -> MemArea:
        """Where the NPU itself reads the weights from."""
        if self.fetch is WeightFetch.DIRECT or self.buffer_area is None:
            return self.source_area
        return self.buffer_area


@record
class LutAccess:
    """A lookup table DMA'd from ``source_area`` into the shared buffer before the op; under the
    previous op (its slack) when ``prefetched``, not when the op starts a command stream of its own
    (each ethos-u operator's stream loads its tables itself)."""

    size_bytes: int
    source_area: MemArea
    prefetched: bool = True


@record
class FmStaging:
    """A feature map copied whole by DMA from ``source_area`` into ``dest_area`` before the op
    (the op then reads it from ``dest_area``); the op waits for the whole copy."""

    size_bytes: int
    source_area: MemArea
    dest_area: MemArea


@record
class StripeRows:
    """``count`` NPU operations of one op, each computing ``ofm_rows`` OFM rows from ``ifm_rows``
    IFM rows (and ``ifm2_rows`` of its second input, 0 without one)."""

    count: int
    ofm_rows: int
    ifm_rows: int
    ifm2_rows: int = 0


@record
class CostQuery:
    """Everything the cost model needs about one op (or one stripe of it).

    ``ofm`` is the OFM box computed (the stripe), ``ifm``/``ifm2`` the boxes read for it.
    ``prev_slack_npu_cycles`` is the previous op's ``OpCost.slack_npu_cycles``: NPU time under
    which this op's first weight slice (and LUT) can be fetched. ``stripes``: the operations the
    op runs as, stripe by stripe over the boxes' rows (empty: one operation over the boxes).
    """

    op: NpuOp
    block: BlockChoice
    ifm: Operand
    ofm: Operand
    ifm2: Operand | None = None
    weights: WeightAccess | None = None
    lut: LutAccess | None = None
    prev_slack_npu_cycles: float = 0.0
    staging: FmStaging | None = None
    stripes: tuple[StripeRows, ...] = ()


BandwidthKey = tuple[MemArea, Purpose, Direction]


@record
class OpCost:
    """The cost of one op (or stripe).

    ``npu_cycles`` is Vela's per-layer "NPU" figure: datapath cycles plus the weight and LUT DMA
    the op has to wait for. ``access_cycles`` are per-area cycles to move the burst-scaled bytes;
    ``total_cycles`` the maximum of all of them. ``bytes`` are raw bytes per (area, purpose,
    direction); ``op_cycles`` the datapath cycles alone; ``dma_cycles`` weight + LUT DMA cycles;
    ``slack_npu_cycles`` the cycles under which the next op may prefetch its weights.
    """

    nn_macs: int
    hw_macs: int
    op_cycles: int
    npu_cycles: float
    access_cycles: Mapping[MemArea, float]
    total_cycles: float
    bytes: Mapping[BandwidthKey, float] = field(default_factory=lambda: MappingProxyType({}))
    dma_cycles: float = 0.0
    slack_npu_cycles: float = 0.0

    def bytes_in(self, area: MemArea, purpose: Purpose | None = None, direction: Direction | None = None) -> float:
        """Sum of ``bytes`` matching ``area`` and, if given, ``purpose`` and ``direction``."""
        return sum(
            v
            for (a, p, d), v in self.bytes.items()
            if a == area and (purpose is None or p == purpose) and (direction is None or d == direction)
        )
