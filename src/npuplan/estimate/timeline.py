"""Time a decoded command stream: NPU operations and DMAs on two engines, ordered by its waits.

The command processor reads the stream in order. An operation starts when the processor reaches
it and the previous operation has ended (operations run one after the other), and the processor
moves on once it has started; a DMA starts when the processor reaches it and the previous DMA has
ended, and the processor moves on at once; ``NPU_OP_DMA_WAIT n`` holds the processor until at most
``n`` DMAs are pending, ``NPU_OP_KERNEL_WAIT n`` until at most ``n`` operations are. So a DMA
issued after an operation overlaps it, and one the next operation waits for delays it.

An operation's own time is the cost model's: the slower of its datapath and each memory's
accesses (``cost.op_cost``, its weights read where the registers point); a DMA's is
``cost.dma_cycles`` from its source region's memory to its destination's.
"""

from __future__ import annotations

from collections.abc import Mapping

from npuplan.cost import OpCost, dma_cycles, op_cost
from npuplan.estimate.queries import cost_query, region_areas
from npuplan.hw.memory import Architecture, MemArea
from npuplan.records import record
from npuplan.regstream.events import DmaEvent, Event, NpuEvent, WaitEvent


@record
class TimedOp:
    """One NPU operation: its cost, and when it started and ended (cycles from the stream's start);
    ``wait_cycles`` it stood idle after the previous operation ended (waiting for a DMA)."""

    name: str
    event: NpuEvent
    cost: OpCost
    start_cycles: float
    end_cycles: float
    wait_cycles: float


@record
class TimedDma:
    """One DMA: source and destination memory (``None``: the NPU's internal memory), bytes, times."""

    src_area: MemArea | None
    dst_area: MemArea | None
    size_bytes: int
    start_cycles: float
    end_cycles: float
    to_flash_region: bool  # from region 0 (constants: weights, or a table)


@record(slots=False)
class TimedStream:
    """A stream's operations and DMAs with their times, and its makespan (cycles)."""

    ops: tuple[TimedOp, ...]
    dmas: tuple[TimedDma, ...]
    total_cycles: float


class _Engines:
    """The command processor's clock and the two engines' queues (end times)."""

    def __init__(self) -> None:
        self.clock = 0.0
        self.npu_ends: list[float] = []
        self.dma_ends: list[float] = []
        self.memory_free: dict[MemArea, float] = {}  # when the last op's own traffic there ends

    def wait(self, event: WaitEvent) -> None:
        ends = self.dma_ends if event.kind == "dma" else self.npu_ends
        if len(ends) > event.outstanding:
            self.clock = max(self.clock, ends[len(ends) - event.outstanding - 1])

    def run_op(self, cycles: float, access_cycles: Mapping[MemArea, float]) -> tuple[float, float]:
        start = max(self.clock, self.npu_ends[-1] if self.npu_ends else 0.0)
        self.clock = start
        self.npu_ends.append(start + cycles)
        # the op's own traffic holds each memory from its start: a DMA from there waits for it
        # (one memory's bandwidth is shared; the cost model's window for a prefetch says the same:
        # cost.model.source_free_cycles)
        self.memory_free = {area: start + a for area, a in access_cycles.items() if a > 0}
        return start, start + cycles

    def run_dma(self, cycles: float, source: MemArea | None) -> tuple[float, float]:
        start = max(self.clock, self.dma_ends[-1] if self.dma_ends else 0.0,
                    self.memory_free.get(source, 0.0) if source is not None else 0.0)
        self.dma_ends.append(start + cycles)
        return start, start + cycles


def time_stream(events: tuple[Event, ...], arch: Architecture, *, names: list[str]) -> TimedStream:
    """The times of ``events`` on ``arch`` (``names``: one per NPU operation, in order). No cost memo:
    each operation's query is built afresh and dropped, and a memo keyed on a dropped operation's id
    would hand a later operation of the same maps and block another kernel's cycles."""
    areas = region_areas(arch)
    engines = _Engines()
    ops: list[TimedOp] = []
    dmas: list[TimedDma] = []
    for event in events:
        if isinstance(event, WaitEvent):
            engines.wait(event)
        elif isinstance(event, DmaEvent):
            src, dst = areas.get(event.src.region, arch.arena_area), areas.get(event.dst.region, arch.arena_area)
            cycles = dma_cycles(arch, src or arch.fast_area, dst, event.src.length)
            start, end = engines.run_dma(cycles, src)
            dmas.append(TimedDma(src, dst, event.src.length, start, end, event.src.region == 0))
        else:
            cost = op_cost(cost_query(event, names[len(ops)], arch), arch)
            previous_end = ops[-1].end_cycles if ops else 0.0
            start, end = engines.run_op(float(cost.total_cycles), cost.access_cycles)
            ops.append(TimedOp(names[len(ops)], event, cost, start, end, start - previous_end))
    total = max([0.0, *engines.npu_ends, *engines.dma_ends])
    return TimedStream(tuple(ops), tuple(dmas), total)
