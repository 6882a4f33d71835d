"""What the scheduler asks of the cost model, as a narrow Protocol, plus a built-in estimate.

The scheduler never calls the cost module directly: it goes through a ``CostOracle`` so it can be
tested with tiny stand-ins, and so the search can memoise queries. ``cost_adapter.default_oracle(arch)``
adapts ``npuplan.cost`` / ``npuplan.hw.block_config``; ``estimate_oracle.EstimateOracle`` (a
roofline estimate) is a stand-in for tests.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol

from npuplan.hw.memory import MemArea
from npuplan.memory.allocators import PlacementMemo
from npuplan.ir.lowered import NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.records import record
from npuplan.schedule.model.stripes import RollingRowsMemo
from npuplan.schedule.pricing.op_keys import OpKeys

log = logging.getLogger(__name__)

OFM_SPLIT_DEPTH = 16  # weight depth slices are multiples of this many OFM channels


@record
class StripeQuery:
    """The scheduler's costing question, in its own terms: ``op`` producing ``ofm_stripe`` per step
    (the whole OFM when unstriped). ``cost_adapter`` translates it into the cost model's one
    question, ``npuplan.cost.CostQuery``.

    ``ofm_depth`` limits the OFM depth costed (a weight depth slice); areas say where each operand
    is read from / written to; ``weight_area`` is where the NPU reads encoded weights during the op.
    """

    op: NpuOp
    block_config: Any
    ofm_stripe: Shape4D
    ifm_stripe: Shape4D
    ifm2_stripe: Shape4D | None
    ofm_depth: int
    ifm_area: MemArea
    ifm2_area: MemArea | None
    ofm_area: MemArea
    weight_area: MemArea
    ifm_format: str = "NHWC"
    ofm_format: str = "NHWC"
    ifm2_format: str = "NHWC"
    weight_source_area: MemArea | None = None  # permanent area the DMA reads buffered weights from
    weight_fetch: str = "none"  # a WeightBuffering value: none/full/single/double
    weight_stream_bytes: int = 0
    first_slice_bytes: int = 0
    depth_slices: tuple[int, ...] = ()
    prev_slack_cycles: int = 0
    staged_ifm_bytes: int = 0  # IFM bytes DMA'd from the arena into fast storage before the op
    weight_prefetched: bool = True  # the weight buffer is held under the previous op (its DMA may run there)
    lut_prefetched: bool = True  # the table may load under the previous op (not first in a command stream)
    loads_table: bool = True  # the op loads its table (no earlier op of its stream left it loaded)


@record(eq=False)
class Costed:
    """One op's block config, stripes and cost, with the NPU cycles the next op may prefetch under
    (what ``schedule.costing.cost_op`` answers)."""

    block_config: Any
    ofm_stripe: Shape4D
    ifm_stripe: Shape4D
    ifm2_stripe: Shape4D | None
    cost: Any
    cycles: int
    slack_cycles: int


class CostOracle(Protocol):
    """The cost-model services the scheduler needs.

    ``costed`` is the memo of ``schedule.costing.cost_op``: the costings made through this oracle,
    keyed there on everything a costing reads, so they live as long as the oracle's answers.
    ``placements`` is the HillClimb memo (``memory.allocators.PlacementMemo``) of the plans priced
    through it: a plan's schedule and its command stream often allocate the same ranges.
    ``rolling_rows`` is the memo of the rows rolling buffers need (``model.stripes.RollingRowsMemo``,
    keyed on geometry alone): every branch-cascade search of every lowering planned through the
    oracle walks the same runs' stripes. ``op_keys`` gives ``costed`` each op by its costing
    signature, so that the ops that cost alike (of the model's lowerings, or repeated in a network:
    distinct objects) share their costings. ``stripe_shapes`` is the memo of ``costing.cost_op``'s
    stripes per op signature and stripe height (the stripes, the block config and its
    alternatives): the costings of such ops at one height ask them alike. ``whole_streams`` is the
    memo of the whole weight stream's bytes an op's costing at one stripe height reads (per op
    object and height). ``screened`` is the memo of ``costing``'s block screening
    (``screen_blocks``), which the weight plans of one op in one context share. ``view_keys``
    (by the id of a ``model.network.OpView``: the view and its key) and ``view_values`` (by value)
    give ``costed`` each op's view as one small int (``costing._view_key``).
    """

    costed: dict[tuple[Any, ...], Costed]
    stripe_shapes: dict[tuple[int, int], Any]
    whole_streams: dict[tuple[NpuOp, int], tuple[int, ...]]
    screened: dict[tuple[Any, ...], tuple[tuple[int, float] | None, ...]]
    view_keys: dict[int, tuple[Any, int]]
    view_values: dict[tuple[Any, ...], int]
    placements: PlacementMemo
    rolling_rows: RollingRowsMemo
    op_keys: OpKeys

    def block_config(self, op: NpuOp, ofm_stripe: Shape4D) -> Any: ...

    def block_alternatives(self, op: NpuOp, ofm_stripe: Shape4D) -> tuple[Any, ...]:
        """Block configs besides ``block_config``'s that ``costing`` prices for ``op`` producing
        ``ofm_stripe``, keeping the cheapest (``hw.block_config.alternative_block_configs``)."""
        ...

    def charges_weight_rereads(self) -> bool:
        """Whether ``costing`` charges a block alternative that reads an op's weight stream more
        often than ``block_config``'s the transfer of its extra reads (True: the cut blocks of
        Performance) or drops it (False)."""
        ...

    def op_cost(self, query: StripeQuery) -> Any: ...

    def screen_blocks(self, query: StripeQuery, blocks: Sequence[Any], *,
                      most_weight_read_bytes: float | None) -> tuple[tuple[int, float] | None, ...]:
        """For each of ``blocks``, cycles that ``cycles(op_cost(q))`` is at least for ``q``,
        ``query`` with that block config, from cheap parts of the costing (its datapath cycles,
        its memories' access cycles), and ``weight_read_bytes(op_cost(q))``; None for a block
        whose weight reads would be above ``most_weight_read_bytes`` (when given). ``costing``
        prices a block alternative in full only when it can beat the cheapest block so far."""
        ...

    def weight_wait_cycles(self, query: StripeQuery) -> int:
        """Cycles ``cycles(op_cost(query))`` is at least above ``screen_blocks``' least cycles of
        ``query`` (its block or any other), less one for their roundings: what the op waits for
        its buffered weights before it reads or writes anything (0 where it reads them in place)."""
        ...

    def reads_prev_slack(self, op: NpuOp, *, weight_fetch: str, weight_prefetched: bool, lut_prefetched: bool,
                         loads_table: bool) -> bool:
        """Whether ``op_cost``'s answer for ``op`` with these query fields can depend on the
        query's ``prev_slack_cycles`` (when not, ``costing.cost_op`` keeps one costing for every
        slack)."""
        ...

    def cycles(self, cost: Any) -> int: ...

    def weight_read_bytes(self, cost: Any) -> float:
        """Bytes of encoded weights and scales ``cost``'s op reads, from wherever they are (the
        stream once per OFM block row: a block config may make it more)."""
        ...

    def query_weight_read_bytes(self, query: StripeQuery) -> float:
        """``weight_read_bytes(op_cost(query))`` without pricing ``query`` in full."""
        ...

    def weight_slice_bytes(self, op: NpuOp, block_config: Any, depth_slices: tuple[int, ...]) -> tuple[int, ...]:
        """Encoded weight + scale bytes of each OFM depth slice ``[d0, d1)``, ``[d1, d2)``..."""
        ...

    def transfer_cycles(self, src: MemArea, dst: MemArea, size_bytes: int) -> int: ...


class OracleMemos:
    """The search's memos an oracle carries (``CostOracle``'s fields, each new and empty): every
    oracle starts them here."""

    def __init__(self) -> None:
        self.costed: dict[tuple[Any, ...], Costed] = {}
        self.placements = PlacementMemo()
        self.rolling_rows = RollingRowsMemo()
        self.op_keys = OpKeys()
        self.stripe_shapes: dict[tuple[int, int], Any] = {}
        self.whole_streams: dict[tuple[NpuOp, int], tuple[int, ...]] = {}
        self.screened: dict[tuple[Any, ...], tuple[tuple[int, float] | None, ...]] = {}
        self.view_keys: dict[int, tuple[Any, int]] = {}
        self.view_values: dict[tuple[Any, ...], int] = {}


class MemoOracle(OracleMemos):
    """Wraps an oracle and memoises its block configs (by the op's costing signature, ``op_keys``:
    a block config reads nothing else of the op) and weight slice sizes (the stripe search asks
    the same ones often); its ``costed`` memo is its own."""

    def __init__(self, inner: CostOracle) -> None:
        self._inner = inner
        self._blocks: dict[tuple[int, Shape4D], Any] = {}
        self._alternatives: dict[tuple[int, Shape4D], tuple[Any, ...]] = {}
        self._weights: dict[tuple[Any, ...], tuple[int, ...]] = {}
        OracleMemos.__init__(self)

    def block_config(self, op: NpuOp, ofm_stripe: Shape4D) -> Any:
        key = (self.op_keys.key(op), ofm_stripe)
        if key not in self._blocks:
            self._blocks[key] = self._inner.block_config(op, ofm_stripe)
        return self._blocks[key]

    def block_alternatives(self, op: NpuOp, ofm_stripe: Shape4D) -> tuple[Any, ...]:
        key = (self.op_keys.key(op), ofm_stripe)
        if key not in self._alternatives:
            self._alternatives[key] = self._inner.block_alternatives(op, ofm_stripe)
        return self._alternatives[key]

    def charges_weight_rereads(self) -> bool:
        return self._inner.charges_weight_rereads()

    def op_cost(self, query: StripeQuery) -> Any:
        """Not memoised here: ``costing.cost_op`` memoises its costings first (in ``costed``), so
        the queries that reach this point are almost never repeated."""
        return self._inner.op_cost(query)

    def screen_blocks(self, query: StripeQuery, blocks: Sequence[Any], *,
                      most_weight_read_bytes: float | None) -> tuple[tuple[int, float] | None, ...]:
        return self._inner.screen_blocks(query, blocks, most_weight_read_bytes=most_weight_read_bytes)

    def weight_wait_cycles(self, query: StripeQuery) -> int:
        return self._inner.weight_wait_cycles(query)

    def reads_prev_slack(self, op: NpuOp, *, weight_fetch: str, weight_prefetched: bool, lut_prefetched: bool,
                         loads_table: bool) -> bool:
        return self._inner.reads_prev_slack(op, weight_fetch=weight_fetch, weight_prefetched=weight_prefetched,
                                            lut_prefetched=lut_prefetched, loads_table=loads_table)

    def cycles(self, cost: Any) -> int:
        return self._inner.cycles(cost)

    def weight_read_bytes(self, cost: Any) -> float:
        return self._inner.weight_read_bytes(cost)

    def query_weight_read_bytes(self, query: StripeQuery) -> float:
        return self._inner.query_weight_read_bytes(query)

    def weight_slice_bytes(self, op: NpuOp, block_config: Any, depth_slices: tuple[int, ...]) -> tuple[int, ...]:
        key = (op, id(block_config), depth_slices)
        if key not in self._weights:
            self._weights[key] = self._inner.weight_slice_bytes(op, block_config, depth_slices)
        return self._weights[key]

    def transfer_cycles(self, src: MemArea, dst: MemArea, size_bytes: int) -> int:
        return self._inner.transfer_cycles(src, dst, size_bytes)

