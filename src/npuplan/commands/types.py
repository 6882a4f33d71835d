"""The high-level command stream: frozen records for DMA transfers, NPU stripes and CPU ops.

Boxes are half-open NHWC coordinate ranges in the tensor's own shape. Every operand names the
buffer it touches and how that buffer is laid out, so the stream can be replayed without the
schedule (``npuplan.commands.replay``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from npuplan._compat import StrEnum
from npuplan.hw.memory import MemArea
from npuplan.records import record


class Address(NamedTuple):
    """Where one buffer lives: its memory area, byte offset and reserved size in bytes."""

    area: MemArea
    offset: int
    size_bytes: int


class BufferKind(StrEnum):
    """What a buffer holds."""

    FEATURE_MAP = "feature_map"  # a whole tensor, row after row
    ROLLING = "rolling"  # ``rows`` rows of a tensor, row r at slot r % rows
    WEIGHT_BUFFER = "weight_buffer"  # fast-storage copy of an op's weight slices
    CONSTANT = "constant"  # permanent constant data (encoded weights, constant operands)
    STAGED = "staged"  # a whole feature map copied by DMA into fast storage for its reader


class DmaPurpose(StrEnum):
    WEIGHTS = "weights"
    FEATURE_MAP = "feature_map"  # a staged feature map copied whole before its reader


@record
class Box:
    """Half-open NHWC box: ``start`` inclusive, ``end`` exclusive."""

    start: tuple[int, int, int, int]
    end: tuple[int, int, int, int]

    @property
    def rows(self) -> tuple[int, int]:
        return self.start[1], self.end[1]

    def is_empty(self) -> bool:
        return any(e <= s for s, e in zip(self.start, self.end))

    def as_json(self) -> dict[str, list[int]]:
        return {"start": list(self.start), "end": list(self.end)}


@record
class BufferRef:
    """One operand's buffer: name, address, and layout.

    ``row_bytes`` is the stride of one tensor row in the buffer; ``rows`` the rows a rolling buffer
    holds (``None`` when the whole tensor is resident); ``base_bytes`` the byte offset of this
    operand's data inside the buffer (the weight slot of a double buffer, a slice inside a stream).
    """

    name: str
    address: Address
    kind: BufferKind
    row_bytes: int = 0
    rows: int | None = None
    base_bytes: int = 0

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "buffer": self.name, "area": str(self.address.area), "address": self.address.offset + self.base_bytes,
        }
        if self.rows is not None:
            out["rolling_rows"] = self.rows
        return out


@record
class WeightSlice:
    """OFM depth range ``[depth_start, depth_end)`` of an op's weights, ``stream_offset_bytes`` into
    its encoded stream and ``size_bytes`` long."""

    index: int
    depth_start: int
    depth_end: int
    stream_offset_bytes: int
    size_bytes: int


@record
class DmaCommand:
    """Copy ``size_bytes`` from ``src_area``/``src_address`` to ``dst_area``/``dst_address``.

    ``tensor`` names the data moved (``"conv1#weights"``), ``purpose`` why, ``src``/``dst`` the
    buffers involved and ``weight_slice`` the slice moved (for weights). ``ahead``: fetched under the
    op before its own (a prefetch): it may run while that op runs, so its destination is live from
    that op's first stripe (``addresses.buffer_lifetimes``).
    """

    src_area: MemArea
    src_address: int
    dst_area: MemArea
    dst_address: int
    size_bytes: int
    tensor: str
    purpose: DmaPurpose
    src: BufferRef
    dst: BufferRef
    weight_slice: WeightSlice | None = None
    op: str = ""  # the op whose data is moved
    ahead: bool = False


@record
class Operand:
    """A feature-map operand of a stripe: the tensor, the box touched and its buffer."""

    tensor: str
    box: Box
    buffer: BufferRef


@record
class NpuStripeCommand:
    """One NPU stripe of ``op``: reads ``ifm``/``ifm2`` boxes, writes the ``ofm`` box.

    ``weights`` is the buffer the stripe reads its weight slice from (``None`` without weights).
    """

    op: str
    ifm: Operand | None
    ifm2: Operand | None
    ofm: Operand
    weight_slice: WeightSlice | None
    weights: BufferRef | None
    block_config: str
    weights_tensor: str = ""  # content name of the weight stream ("conv1#weights")
    # a pointwise op's stripe (``NpuOp.pointwise``: elementwise, or a pool copying element for
    # element): it reads each element before writing it, so its OFM may overwrite an input
    elementwise: bool = False


@record
class CpuCommand:
    """A CPU operator between NPU work: reads ``inputs`` and writes ``outputs`` completely."""

    op: str
    inputs: tuple[Operand, ...]
    outputs: tuple[Operand, ...]


Command = DmaCommand | NpuStripeCommand | CpuCommand
