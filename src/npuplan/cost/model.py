"""The per-op cost model: ``op_cost(query, arch) -> OpCost``.

Combines datapath cycles (``cycles``), element accesses (``access``) and memory-transfer timing
(``transfer``) the way Vela 5.2.0 does for its per-layer report: the op's "NPU" cycles are the
datapath cycles plus any weight/LUT DMA it has to wait for; each memory area's access cycles are
its burst-scaled bytes over its bandwidth; the op's total is the maximum of these, each memory's
access after the DMA wait (the wait comes first in the stream; Vela overlaps the two).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import NamedTuple

from npuplan.cost.access import ElementAccess, element_access
from npuplan.cost.access import weight_reads as access_weight_reads
from npuplan.cost.cycles import PER_CHANNEL, hw_macs, nn_macs, op_cycles
from npuplan.cost.query import (
    BandwidthKey, CostQuery, Direction, Operand, OpCost, Purpose, StripeRows, WeightAccess, WeightFetch,
)
from npuplan.cost.tables import output_timing
from npuplan.cost.transfer import burst_scaled_bytes, dma_cycles
from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.lowered import NpuOp


def _const_area(query: CostQuery) -> MemArea | None:
    """Where scales and biases are read from (``None`` for ops without them)."""
    return query.weights.read_area if query.weights is not None else None


class CostMemo:
    """Parts of ``op_cost`` that one search may reuse between the queries it asks about one op.

    Datapath cycles, element accesses, feature-map bytes and MACs read only the op, its block and
    operands (cycles: and where its scales come from), not the weight fetch plan or the previous
    op's slack, which is what a search mostly varies; and the whole cost but the last step reads
    everything but that slack. Keyed on what the cost model reads of the op (``op_key``), so the
    repeated cells of a network (recurrent steps, chains of blocks) share their costings; that key
    is remembered by ``id(op)``: one memo must only see ops that stay alive while it is used (one
    network's; ``estimate`` builds each operation afresh and so asks without a memo).
    """

    __slots__ = ("cycles", "feature_maps", "slack_free", "operations", "_op_keys", "_by_value")

    def __init__(self) -> None:
        self.cycles: dict[tuple[object, ...], int] = {}
        self.operations: dict[tuple[object, ...], tuple[_Operation, ...]] = {}
        self.feature_maps: dict[tuple[object, ...], _FeatureMapSide] = {}
        self.slack_free: dict[tuple[object, ...], _SlackFree] = {}
        self._op_keys: dict[int, int] = {}
        self._by_value: dict[tuple[object, ...], int] = {}

    def op_key(self, op: NpuOp) -> int:
        """Everything ``cycles``, ``access`` and this module read of ``op`` (its kind, kernel,
        activation and shapes; the operands' shapes, areas and formats come in the query), as a
        small int, the same for ops of equal such values (the memos hash it at every lookup)."""
        found = self._op_keys.get(id(op))
        if found is None:
            value = (
                op.block_type, op.tflite_type, op.op_type, op.elementwise, op.pool, op.activation, op.kernel,
                op.resampling, op.ifm_shape, op.ofm_shape, op.ifm2_shape,
            )
            found = self._op_keys[id(op)] = self._by_value.setdefault(value, len(self._by_value))
        return found


def _op_key(query: CostQuery, memo: CostMemo | None) -> object:
    return id(query.op) if memo is None else memo.op_key(query.op)


def _cycles(
    query: CostQuery, arch: Architecture, const_area: MemArea | None, memo: CostMemo | None, part: _Operation
) -> int:
    """Datapath cycles of one operation ``part`` of ``query`` (its boxes instead of ``query``'s)."""
    key = (_op_key(query, memo), id(arch), query.block, part.ifm, part.ofm, part.ifm2, const_area)
    found = None if memo is None else memo.cycles.get(key)
    if found is None:
        found = op_cycles(_part_query(query, part), arch, output_timing(arch.accelerator.name), const_area=const_area)
        if memo is not None:
            memo.cycles[key] = found
    return found


def _slicing(query: CostQuery) -> tuple[int, ...]:
    """The OFM depth slices ``operation_queries`` splits ``query`` by, or none."""
    w = query.weights
    return () if w is None or w.fetch is WeightFetch.DIRECT else w.depth_slices


def _depth_parts(query: CostQuery) -> dict[int, int]:
    """How many operations of each OFM depth the weight slicing makes (the whole depth once when
    the weights are not fetched slice by slice)."""
    slices, depth = _slicing(query), query.ofm.shape.c
    if len(slices) <= 2 or slices[-1] != depth:
        return {depth: 1}
    depths: dict[int, int] = {}
    for start, end in zip(slices, slices[1:]):
        depths[end - start] = depths.get(end - start, 0) + 1
    return depths


def _with(operand: Operand, *, rows: int | None = None, depth: int | None = None) -> Operand:
    shape = operand.shape
    shape = shape if rows is None else shape.with_h(rows)
    shape = shape if depth is None else shape.with_c(depth)
    return operand if shape == operand.shape else Operand(shape, operand.area, operand.format, operand.bits, operand.step_x)


class _Operation(NamedTuple):
    """One NPU operation of an op (``operation_queries``): the boxes it reads and writes, and how
    many operations of these boxes the op runs as."""

    ifm: Operand
    ofm: Operand
    ifm2: Operand | None
    times: int


def _part_query(query: CostQuery, part: _Operation) -> CostQuery:
    """``query`` as its operation ``part`` (``query`` itself when ``part`` is all of it)."""
    if part.ifm is query.ifm and part.ofm is query.ofm and part.ifm2 is query.ifm2 and not query.stripes:
        return query
    # every field but the boxes and stripes as they are (constructed, not ``dataclasses.replace``:
    # each costing asks for several)
    return CostQuery(query.op, query.block, part.ifm, part.ofm, part.ifm2, query.weights, query.lut,
                     query.prev_slack_npu_cycles, query.staging, ())


def operation_queries(query: CostQuery, *, memo: CostMemo | None = None) -> tuple[tuple[CostQuery, int], ...]:
    """The NPU operations ``query`` runs as, each with how many times, as the command stream issues
    them: one per stripe of ``query.stripes`` (each reading its own IFM rows, the rows shared with
    the next stripe twice), times one per OFM depth slice of weights fetched into a buffer slice
    by slice (each re-reading its IFM: all of it for a convolution, its own channels for a
    depthwise or pooling op). Operations of one shape are one entry; the query itself once when
    neither splits it."""
    return tuple((_part_query(query, part), part.times) for part in _operations(query, memo))


def _operations(query: CostQuery, memo: CostMemo | None) -> tuple[_Operation, ...]:
    """``operation_queries``' operations as boxes alone (memoised: they read only the boxes, the
    slicing and the stripes)."""
    per_channel = query.op.block_type in PER_CHANNEL
    key = (per_channel, query.ifm, query.ofm, query.ifm2, _slicing(query), query.stripes)
    found = None if memo is None else memo.operations.get(key)
    if found is None:
        found = _split(query, per_channel)
        if memo is not None:
            memo.operations[key] = found
    return found


def _split(query: CostQuery, per_channel: bool) -> tuple[_Operation, ...]:
    depths = _depth_parts(query)
    if not query.stripes and len(depths) == 1 and next(iter(depths.values())) == 1:
        return (_Operation(query.ifm, query.ofm, query.ifm2, 1),)
    rows = query.stripes or (StripeRows(1, query.ofm.shape.h, query.ifm.shape.h,
                                        query.ifm2.shape.h if query.ifm2 is not None else 0),)
    out: list[_Operation] = []
    for stripe in rows:
        for depth, count in depths.items():
            ifm2 = query.ifm2
            if ifm2 is not None:
                ifm2 = _with(ifm2, rows=stripe.ifm2_rows or None, depth=depth if per_channel else None)
            out.append(_Operation(_with(query.ifm, rows=stripe.ifm_rows, depth=depth if per_channel else None),
                                  _with(query.ofm, rows=stripe.ofm_rows, depth=depth), ifm2, stripe.count * count))
    return tuple(out)


def datapath_cycles(query: CostQuery, arch: Architecture, *, memo: CostMemo | None = None) -> int:
    """NPU datapath cycles of ``query`` alone (no DMA waits): of each operation it runs as
    (``operation_queries``), each with its own pipeline fill and drain."""
    return _datapath(query, arch, memo, _operations(query, memo))


def _datapath(query: CostQuery, arch: Architecture, memo: CostMemo | None, parts: tuple[_Operation, ...]) -> int:
    """``datapath_cycles`` of ``query`` run as ``parts`` (its ``_operations``)."""
    const_area = _const_area(query)
    return sum(part.times * _cycles(query, arch, const_area, memo, part) for part in parts)


def _tail_slack_cycles(query: CostQuery, arch: Architecture, cycles: int, memo: CostMemo | None) -> float:
    """Cycles of the op's last weight slice: the window in which the next op's weights can stream."""
    w = query.weights
    if w is not None and w.slack_npu_cycles is not None:
        return w.slack_npu_cycles
    if w is None or len(w.depth_slices) <= 2:
        return float(cycles)
    o = query.ofm
    tail = Operand(o.shape.with_c(w.depth_slices[-1] - w.depth_slices[-2]), o.area, o.format, o.bits)
    return float(_cycles(query, arch, arch.fast_area, memo, _Operation(query.ifm, tail, query.ifm2, 1)))


class _Bytes:
    """Accumulates raw and burst-scaled bytes per (area, purpose, direction)."""

    def __init__(
        self, raw: Iterable[tuple[BandwidthKey, float]] = (), scaled: Iterable[tuple[MemArea, float]] = ()
    ) -> None:
        self.raw: dict[BandwidthKey, float] = defaultdict(float, raw)
        self.scaled: dict[MemArea, float] = defaultdict(float, scaled)

    def add(self, key: BandwidthKey, raw: float, scaled: float | None) -> None:
        self.raw[key] += raw
        if scaled is not None:
            self.scaled[key[0]] += scaled


def _feature_map_bytes(query: CostQuery, arch: Architecture, acc: ElementAccess, out: _Bytes) -> None:
    block = query.block
    moves = [(query.ofm, acc.ofm_elements, False, block.ofm_block), (query.ifm, acc.ifm_elements, True, block.ifm_block)]
    if query.ifm2 is not None:
        moves.append((query.ifm2, acc.ifm2_elements, True, block.ifm_block))
    for operand, elements, is_read, blk in moves:
        raw = elements * operand.bits // 8
        scaled = burst_scaled_bytes(
            arch, operand.area, is_read=is_read, fmt=operand.format, element_bits=operand.bits,
            block=blk, shape=operand.shape, raw_bytes=raw, step_x=operand.step_x,
        )
        direction = Direction.READ if is_read else Direction.WRITE
        out.add((operand.area, Purpose.FEATURE_MAP, direction), raw, scaled)


class _FeatureMapSide(NamedTuple):
    """The parts of an op's cost that read only the op, its block and its operands (and how its
    weights are sliced): feature-map bytes and MACs."""

    raw: tuple[tuple[BandwidthKey, float], ...]  # feature-map bytes, in ``_Bytes`` order
    scaled: tuple[tuple[MemArea, float], ...]
    nn_macs: int
    hw_macs: int


class _BlockReads(NamedTuple):
    """How much of its weights and scales an op's operations read: ``weight_reads`` whole weight
    streams, ``scale_reads`` scale entries."""

    weight_reads: float
    scale_reads: int


def _block_reads(query: CostQuery, parts: tuple[_Operation, ...]) -> _BlockReads:
    """The weights and scales ``query``'s operations ``parts`` read (``access.weight_reads`` of each)."""
    weight_reads, scale_reads = 0.0, 0
    op_depth = max(query.op.ofm_shape.c, 1)
    block_type, ofm_block = query.op.block_type, query.block.ofm_block
    for part in parts:
        refetches, entries = access_weight_reads(block_type, part.ofm.shape, ofm_block)
        weight_reads += part.times * refetches * part.ofm.shape.c / op_depth
        scale_reads += part.times * refetches * entries
    return _BlockReads(weight_reads, scale_reads)


def _feature_map_side(query: CostQuery, arch: Architecture, memo: CostMemo | None) -> _FeatureMapSide:
    key = (_op_key(query, memo), id(arch), query.block, query.ifm, query.ofm, query.ifm2, _slicing(query), query.stripes)
    found = None if memo is None else memo.feature_maps.get(key)
    if found is None:
        fm_bytes = _Bytes()
        for part, count in operation_queries(query, memo=memo):
            acc = element_access(part)
            part_bytes = _Bytes()
            _feature_map_bytes(part, arch, acc, part_bytes)
            for bw_key, raw in part_bytes.raw.items():
                fm_bytes.raw[bw_key] += count * raw
            for area, scaled in part_bytes.scaled.items():
                fm_bytes.scaled[area] += count * scaled
        accel = arch.accelerator
        found = _FeatureMapSide(
            tuple(fm_bytes.raw.items()), tuple(fm_bytes.scaled.items()),
            nn_macs(query), hw_macs(query, accel.ofm_ublock, accel.ifm_ublock.depth),
        )
        if memo is not None:
            memo.feature_maps[key] = found
    return found


def _weight_bytes(query: CostQuery, w: WeightAccess, fm: _BlockReads, out: _Bytes) -> None:
    """The NPU reads the encoded weights and scales of the OFM depth it computes once per OFM block
    position in height and width (Vela 5.2.0's default core; its legacy core counted the weights
    of whole OFM blocks, depth rounded up), from wherever they are: in place, or the buffer a DMA
    copied them to, whose memory's bandwidth these reads use all the same (Vela 5.2.0's default
    core counts them in the buffer's access cycles too)."""
    op_depth = query.op.ofm_shape.c
    weight_bytes = max(w.stream_bytes - op_depth * w.scale_bytes_per_channel, 0)
    if fm.weight_reads > 0 and weight_bytes > 0:
        raw = fm.weight_reads * weight_bytes
        out.add((w.read_area, Purpose.WEIGHTS, Direction.READ), raw, raw)
    if fm.scale_reads > 0 and w.scale_bytes_per_channel > 0:
        scales = fm.scale_reads * w.scale_bytes_per_channel
        out.add((w.read_area, Purpose.SCALES, Direction.READ), scales, scales)
    if w.fetch is not WeightFetch.DIRECT and w.buffer_area is not None:
        out.add((w.source_area, Purpose.WEIGHTS, Direction.READ), w.stream_bytes, None)
        out.add((w.buffer_area, Purpose.WEIGHTS, Direction.WRITE), w.stream_bytes, None)


def weight_read_bytes(query: CostQuery, *, memo: CostMemo | None = None) -> float:
    """The encoded weight and scale bytes ``op_cost(query)`` reads (``weight_read_total`` of its
    ``bytes``), without pricing the rest: what a block config changes of them is how often the
    NPU reads its stream (once per OFM block position in height and width)."""
    return _weight_read_bytes(query, _operations(query, memo))


def _weight_read_bytes(query: CostQuery, parts: tuple[_Operation, ...]) -> float:
    if query.weights is None:
        return 0.0
    out = _Bytes()
    _weight_bytes(query, query.weights, _block_reads(query, parts), out)
    return weight_read_total(out.raw)


class Screen(NamedTuple):
    """What ``op_cost`` of a query comes to at least, from its cheap parts (``screen``)."""

    least_cycles: int  # cycles its total takes at least, rounded as the total
    weight_read_bytes: float  # ``weight_read_bytes`` of the query (exactly)


def screen(query: CostQuery, arch: Architecture, *, memo: CostMemo | None = None,
           most_weight_read_bytes: float | None = None) -> Screen | None:
    """Cycles ``op_cost(query)`` takes at least, from its parts that read neither the DMAs it
    waits for nor the previous op's slack: its datapath cycles and each memory's access cycles
    by the feature maps and weights the NPU reads and writes there (the waits only add to them);
    with the weight bytes it reads (``weight_read_bytes``). None when it reads more than
    ``most_weight_read_bytes`` of weights (when given), which is cheaper still. What a search
    choosing among block configs prices first."""
    parts = _operations(query, memo)
    reads = _weight_read_bytes(query, parts)
    if most_weight_read_bytes is not None and reads > most_weight_read_bytes:
        return None
    scaled = _npu_traffic(query, arch, memo, parts)[1].scaled
    access = max((scaled[area] / arch.bytes_per_cycle(area) for area in scaled), default=0.0)
    return Screen(max(_datapath(query, arch, memo, parts), int(round(access))), reads)


def least_cycles(query: CostQuery, arch: Architecture, *, memo: CostMemo | None = None,
                 most_weight_read_bytes: float | None = None) -> int | None:
    """``screen``'s least cycles (None where it screens ``query`` out)."""
    found = screen(query, arch, memo=memo, most_weight_read_bytes=most_weight_read_bytes)
    return None if found is None else found.least_cycles


def weight_read_total(traffic: Mapping[BandwidthKey, float]) -> float:
    """Bytes of encoded weights and scales read in ``traffic`` (an ``OpCost.bytes``), from
    wherever they are: the NPU's reads and a buffer DMA's."""
    return float(sum(v for (_, purpose, direction), v in traffic.items()
                     if purpose in (Purpose.WEIGHTS, Purpose.SCALES) and direction is Direction.READ))


class _WeightDma(NamedTuple):
    """The DMA of buffered weights: the whole stream's cycles and the first slice's. A cascade's whole
    weights are charged too (Vela charges nothing for them; the copy is real DMA all the same)."""

    double_buffered: bool
    full_cycles: float
    first_cycles: float
    prefetched: bool  # may start under the previous op (its slack)
    slice_depths: tuple[int, ...]  # OFM depth of each slice, in order
    slice_cycles: tuple[float, ...]  # DMA cycles of each slice (the first's, then the rest's by depth)
    source_area: MemArea  # where the DMA reads the weights


def _weight_dma(query: CostQuery, arch: Architecture) -> _WeightDma | None:
    w = query.weights
    if w is None or w.fetch is WeightFetch.DIRECT or w.buffer_area is None:
        return None
    full_bytes = w.full_stream_bytes if w.full_stream_bytes is not None else w.stream_bytes
    full = dma_cycles(arch, w.source_area, w.buffer_area, full_bytes)
    first = dma_cycles(arch, w.source_area, w.buffer_area, w.first_slice_bytes)
    depths = tuple(b - a for a, b in zip(w.depth_slices, w.depth_slices[1:])) or (query.op.ofm_shape.c,)
    rest_bytes, rest_depth = max(w.stream_bytes - w.first_slice_bytes, 0), max(sum(depths[1:]), 1)
    cycles = {d: dma_cycles(arch, w.source_area, w.buffer_area, rest_bytes * d // rest_depth) for d in set(depths[1:])}
    return _WeightDma(w.fetch is WeightFetch.DOUBLE_BUFFERED, full, first, w.prefetched, depths,
                      (first, *(cycles[d] for d in depths[1:])), w.source_area)


class _SlackFree(NamedTuple):
    """Everything in an op's cost that does not read the previous op's slack (a search asks for
    the same op under many slacks)."""

    cycles: int
    tail_cycles: float  # the op's own slack: its last weight slice's cycles
    lut_cycles: float
    lut_prefetched: bool  # the table may load under the previous op
    staging_cycles: float
    weight_dma: _WeightDma | None  # None: weights read in place (or none)
    fm: _FeatureMapSide
    access_cycles: Mapping[MemArea, float]
    bytes: Mapping[BandwidthKey, float]


def _npu_cycles(f: _SlackFree, prev_slack: float) -> tuple[float, float]:
    """(NPU cycles including the weight and LUT DMA waits, weight DMA cycles)."""
    dma, cycles = f.weight_dma, f.cycles
    if dma is None:
        return cycles + max(f.lut_cycles - (prev_slack if f.lut_prefetched else 0.0), 0.0), 0.0
    full = dma.full_cycles
    slack = prev_slack if dma.prefetched else 0.0
    if dma.double_buffered and len(dma.slice_depths) > 1:
        busy = max(cycles, *f.access_cycles.values())
        waits = double_buffer_wait_cycles(busy, dma.slice_depths, dma.slice_cycles, slack,
                                          source_busy_cycles=f.access_cycles.get(dma.source_area, 0.0))
        return cycles + waits + f.lut_cycles, full
    npu = weight_wait_npu_cycles(cycles, full, dma.first_cycles, slack, double_buffered=dma.double_buffered,
                                 tail_cycles=f.tail_cycles)
    return npu + f.lut_cycles, full


def double_buffer_wait_cycles(busy_cycles: float, depths: tuple[int, ...], dma_cycles_each: tuple[float, ...],
                              prev_slack: float, *, source_busy_cycles: float = 0.0) -> float:
    """Cycles an op of ``busy_cycles`` (its slices' share by OFM depth ``depths``) waits for its
    weights fetched slice by slice into two buffers, as the stream runs them: the first slice's
    DMA under the previous op (``prev_slack``), each next one issued when the slice before it
    starts and once the DMA before it is done, and once that slice's own traffic in the DMA's
    source memory is done (``source_busy_cycles``: the op's, shared by depth; one memory's
    bandwidth is shared, as ``source_free_cycles`` says of the previous op), each slice starting
    when the one before it has ended and its weights have arrived."""
    total_depth = sum(depths)
    dma_end = dma_cycles_each[0] - prev_slack
    start = max(0.0, dma_end)
    end = start + busy_cycles * depths[0] / total_depth
    source_free = start + source_busy_cycles * depths[0] / total_depth
    for depth, dma in zip(depths[1:], dma_cycles_each[1:]):
        dma_end = max(start, dma_end, source_free) + dma
        start = max(end, dma_end)
        end = start + busy_cycles * depth / total_depth
        source_free = start + source_busy_cycles * depth / total_depth
    return end - busy_cycles


def least_weight_wait(query: CostQuery, arch: Architecture) -> float:
    """Cycles the NPU waits at least for ``query``'s buffered weights (0 when it reads them in
    place): its first slice's DMA (a double buffer) or its whole stream's (a single one), less
    what the previous op's slack hides of it where the DMA may start there. ``op_cost(query)``'s
    total is at least this plus ``screen``'s least cycles of the same query (the waits come before
    the op's own datapath and memory traffic, ``_npu_cycles``), within the rounding of each."""
    dma = _weight_dma(query, arch)
    if dma is None:
        return 0.0
    slack = query.prev_slack_npu_cycles if dma.prefetched else 0.0
    if dma.double_buffered:
        return max(dma.first_cycles - slack, 0.0)
    return max(dma.full_cycles - min(dma.first_cycles, slack), 0.0)


def weight_wait_npu_cycles(cycles: float, full_cycles: float, first_cycles: float, prev_slack: float, *,
                           double_buffered: bool, tail_cycles: float = 0.0) -> float:
    """The NPU cycles of an op of ``cycles`` whose weights are DMA'd into a buffer (Vela's rule; the
    cost model times double buffers slice by slice, ``double_buffer_wait_cycles``):
    a single buffer waits for the whole stream (``full_cycles``) less what was prefetched under the
    previous op (its slack, up to the first slice's ``first_cycles``); a double buffer overlaps the
    slices with compute and waits for the first slice only, or for the stream less the slack and
    plus the op's own last slice (``tail_cycles``), whichever is longer."""
    if double_buffered:
        return max(full_cycles - prev_slack + tail_cycles, cycles + max(first_cycles - prev_slack, 0.0))
    return cycles + full_cycles - min(first_cycles, prev_slack)


def _staging(query: CostQuery, arch: Architecture, out: _Bytes) -> float:
    """DMA cycles the op waits for its staged feature map (bytes counted, timed as a DMA)."""
    s = query.staging
    if s is None or s.size_bytes <= 0:
        return 0.0
    out.add((s.source_area, Purpose.FEATURE_MAP, Direction.READ), s.size_bytes, None)
    out.add((s.dest_area, Purpose.FEATURE_MAP, Direction.WRITE), s.size_bytes, None)
    return dma_cycles(arch, s.source_area, s.dest_area, s.size_bytes)


def _npu_traffic(query: CostQuery, arch: Architecture, memo: CostMemo | None,
                 parts: tuple[_Operation, ...]) -> tuple[_FeatureMapSide, _Bytes]:
    """The feature-map side of ``query`` and the bytes its operations ``parts`` read and write:
    its feature maps, its weights and scales (and the copy of buffered weights), not its table's
    nor a staged map's DMA."""
    fm = _feature_map_side(query, arch, memo)
    traffic = _Bytes(fm.raw, fm.scaled)
    if query.weights is not None:
        _weight_bytes(query, query.weights, _block_reads(query, parts), traffic)
    return fm, traffic


def _slack_free(query: CostQuery, arch: Architecture, memo: CostMemo | None) -> _SlackFree:
    key = (_op_key(query, memo), id(arch), query.block, query.ifm, query.ofm, query.ifm2, query.weights, query.lut,
           query.staging, query.stripes)
    found = None if memo is None else memo.slack_free.get(key)
    if found is not None:
        return found
    parts = _operations(query, memo)
    cycles = _datapath(query, arch, memo, parts)
    fm, traffic = _npu_traffic(query, arch, memo, parts)
    lut_cycles = 0.0
    if query.lut is not None:
        lut_cycles = dma_cycles(arch, query.lut.source_area, None, query.lut.size_bytes)
        traffic.add((query.lut.source_area, Purpose.LUT, Direction.READ), query.lut.size_bytes, None)
    staging_cycles = _staging(query, arch, traffic)
    access_cycles = {area: traffic.scaled[area] / arch.bytes_per_cycle(area) if area in traffic.scaled else 0.0
                     for area in MemArea}
    found = _SlackFree(
        cycles, _tail_slack_cycles(query, arch, cycles, memo), lut_cycles,
        query.lut is not None and query.lut.prefetched, staging_cycles, _weight_dma(query, arch),
        fm, MappingProxyType(access_cycles), MappingProxyType(dict(traffic.raw)),
    )
    if memo is not None:
        memo.slack_free[key] = found
    return found


def op_cost(query: CostQuery, arch: Architecture, *, memo: CostMemo | None = None) -> OpCost:
    """Cycles, MACs and memory traffic of one op (or one stripe of it) on ``arch``
    (``memo``: see ``CostMemo``)."""
    f = _slack_free(query, arch, memo)
    npu, weight_dma = _npu_cycles(f, query.prev_slack_npu_cycles)
    npu += f.staging_cycles
    # the DMAs the op waits for run before it reads or writes anything: its memory traffic follows
    # the wait (as the stream runs it), it does not hide under it
    wait = max(npu - f.cycles, 0.0)
    total = max([npu, *(wait + a for a in f.access_cycles.values())])
    return OpCost(
        nn_macs=f.fm.nn_macs,
        hw_macs=f.fm.hw_macs,
        op_cycles=f.cycles,
        npu_cycles=npu,
        access_cycles=f.access_cycles,
        total_cycles=total,
        bytes=f.bytes,
        dma_cycles=weight_dma + f.lut_cycles + f.staging_cycles,
        slack_npu_cycles=min(f.tail_cycles, source_free_cycles(total - wait, f.access_cycles, arch.const_area)),
    )


def source_free_cycles(busy_cycles: float, access_cycles: Mapping[MemArea, float], source: MemArea) -> float:
    """Cycles of an op's ``busy_cycles`` (after its own waits) in which a DMA from ``source`` (where
    the next op's weights come from) finds that memory free: one memory's bandwidth is shared by the
    op's own reads and writes there and the DMA, so an op that streams its weights from flash leaves
    no window to prefetch the next op's weights from flash. The estimator's timeline holds a DMA back
    by the same rule (``estimate.timeline``)."""
    return max(0.0, busy_cycles - access_cycles.get(source, 0.0))
