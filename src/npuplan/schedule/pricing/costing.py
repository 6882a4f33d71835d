"""Cost of one op under a set of decisions (stripes, areas, weight fetch), via the oracle."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from npuplan.hw.lut_slots import reserved_table_banks
from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.lowered import NpuOp
from npuplan.schedule.model.decisions import Decisions, WeightPlan
from npuplan.schedule.model.geometry import ifm2_stripe_for, ifm_stripe_for
from npuplan.schedule.model.network import Network, OpView, rolling_format
from npuplan.schedule.pricing.oracle import Costed, CostOracle, StripeQuery
from npuplan.schedule.model.types import WeightBuffering


# Where a feature map lives under a ``Decisions``: the costing memo's key holds only this
_ARENA, _FAST, _ROLLING = 0, 1, 2


def _residence(dec: Decisions, name: str) -> int:
    """Rolling buffers are in fast storage as NHCWB16; other feature maps are where ``dec`` put them."""
    if name in dec.rolling_fms:
        return _ROLLING
    return _FAST if name in dec.fast_fms else _ARENA


def _format(net: Network, residence: int, name: str) -> str:
    if residence == _ROLLING:
        return rolling_format(net, name)
    fm = net.fms.get(name)
    return fm.format if fm is not None else "NHWC"


def fm_area(net: Network, dec: Decisions, arch: Architecture, name: str | None) -> MemArea:
    """Where a feature map lives: fast storage if placed or rolling there, else the arena."""
    if name is not None and _residence(dec, name) != _ARENA:
        return arch.fast_area
    return arch.arena_area


def op_context(net: Network, dec: Decisions, index: int, rows: int | None = None) -> tuple[Any, ...]:
    """Everything costing op ``index`` reads of ``dec`` besides its weight plan and the previous op's
    slack: the op, its stripe rows (``rows`` when given, else ``dec``'s), whether its IFM is staged,
    where each feature map lives (arena, fast storage or a rolling buffer; their formats follow).
    Costs made under one decision set answer every other with the same context (``cost_op``'s
    memo, and the choices of ``choice_memo.ChoiceMemo``)."""
    view = net.op_views()[index]
    # what the costing reads of the network last: the maps' storage formats (Size packs some NHWC)
    return (view.op, *_where(view, dec, index, rows), *view.stored)


def _where(view: OpView, dec: Decisions, index: int, rows: int | None) -> tuple[int, int, int, int, int | None]:
    """What op ``index`` (``view``) reads of ``dec`` besides its weight plan: its stripe rows, then
    0 where its IFM is not staged, 1 where it is and the op (its first reader) waits for the copy's
    DMA, 2 where it reads a copy made before an earlier reader, then where its IFM, OFM and IFM2
    live (``_ARENA``, ``_FAST``, ``_ROLLING``; None: no IFM2)."""
    rolling, fast = dec.rolling_fms, dec.fast_fms
    ifm, ofm, ifm2 = view.ifm, view.ofm, view.ifm2
    height = view.op.ofm_shape.h
    rows = dec.ofm_rows[index] if rows is None else rows
    return (
        rows if rows < height else height,
        0 if ifm not in dec.staged_fms else 1 if view.first_reader == index else 2,
        _ROLLING if ifm in rolling else _FAST if ifm in fast else _ARENA,
        _ROLLING if ofm in rolling else _FAST if ofm in fast else _ARENA,
        None if ifm2 is None else _ROLLING if ifm2 in rolling else _FAST if ifm2 in fast else _ARENA,
    )


def differing_ops(net: Network, a: Decisions, b: Decisions) -> list[int] | None:
    """The ops whose costings may differ between decision sets ``a`` and ``b`` after the same slack
    of the op before, ascending (an op past them costs the same under both): where their stripe
    rows, weight plans, cascades or rolling maps differ (all a costing reads of a decision set,
    ``_where`` and ``_memo_key``); None (any op may) where their fast-storage or staged maps do."""
    if a.fast_fms != b.fast_fms or a.staged_fms != b.staged_fms:
        return None
    found: set[int] = set()
    if a.ofm_rows != b.ofm_rows:
        found.update(i for i, (x, y) in enumerate(zip(a.ofm_rows, b.ofm_rows)) if x != y)
    if a.weights != b.weights:
        found.update(i for i, (x, y) in enumerate(zip(a.weights, b.weights)) if x is not y and x != y)
    if a.cascades != b.cascades:
        for cascade in set(a.cascades) ^ set(b.cascades):
            found.update(range(cascade.start, cascade.end + 1))
        touching = net.derived(_ops_by_map)
        for name in a.rolling_fms ^ b.rolling_fms:
            found.update(touching.get(name, ()))
    return sorted(found)


def _ops_by_map(net: Network) -> dict[str, list[int]]:
    """The NPU ops reading or writing each feature map, as their costings see them (``OpView``)."""
    found: dict[str, list[int]] = {}
    for i, view in enumerate(net.op_views()):
        for name in (view.ifm, view.ofm, view.ifm2):
            if name is not None:
                found.setdefault(name, []).append(i)
    return found


def _rolling_formats(view: OpView, ifm: int, ofm: int, ifm2: int | None) -> tuple[str | None, ...]:
    """The formats of the op's rolling maps (``rolling_format`` reads the network) where its IFM,
    OFM and IFM2 reside at ``ifm``, ``ofm``, ``ifm2``, so that the costing memo, shared by a
    model's lowerings, holds all a costing reads of the network."""
    formats = view.rolling
    return (formats[0] if ifm == _ROLLING else None, formats[1] if ofm == _ROLLING else None,
            formats[2] if ifm2 == _ROLLING else None)


def cost_op(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, index: int, *,
    weights: WeightPlan | None = None, prev_slack_cycles: int = 0, rows: int | None = None,
) -> Costed:
    """Cost op ``index`` with its stripe from ``dec`` and ``weights`` (default ``dec``'s plan);
    ``rows``: its OFM stripe rows instead of ``dec``'s (a search trying a cascade's stripes need
    not build decisions holding every op's rows for each try).

    Results are memoised in ``oracle.costed`` on everything the costing reads from ``dec``, and on
    ``prev_slack_cycles`` only where the oracle's costing reads it (``reads_prev_slack``)."""
    op, key = _memo_key(net, dec, arch, oracle, index, weights, prev_slack_cycles, rows)
    memo = oracle.costed
    found = memo.get(key)
    if found is None:
        found = memo[key] = _cost(net, arch, oracle, op, key)
    return found


def least_cycles(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, index: int, *,
    weights: WeightPlan | None = None, prev_slack_cycles: int = 0, rows: int | None = None,
) -> int:
    """Cycles ``cost_op`` with the same arguments comes to at least, without pricing it in full:
    its cycles where it is memoised, else the least of its blocks' screens (``_screens``) plus the
    weight DMA it waits for (``CostOracle.weight_wait_cycles``), less one for their roundings: a
    true lower bound whatever block or weight slicing the costing takes (the weight searches skip
    by it: ``weights._ranked``, ``cascades._single``). The wait only shrinks with the previous op's slack, so the bound at one slack
    holds at every larger one. ``bench/plan_bounds.py`` checks it against every costing of a plan
    and measures what it would let the searches leave uncosted."""
    op, key = _memo_key(net, dec, arch, oracle, index, weights, prev_slack_cycles, rows)
    found = oracle.costed.get(key)
    if found is not None:
        return found.cycles
    query, screens = _screens(net, arch, oracle, op, key)
    least = [s[0] for s in screens if s is not None]
    if not least:
        return 0  # none screened: ``_cheapest`` prices the query's own block, unscreened
    return min(least) + oracle.weight_wait_cycles(query) - 1


# ``cost_op``'s memo key is one flat tuple of small values (hashed and compared at every lookup):
# the op's view by ``_view_key``, what it reads of the decisions (``_where``), then of its weight
# plan, the previous op's slack, its prefetch, and its whole weight stream's bytes by block
_VIEW, _ROWS, _STAGED = 0, 1, 2
_BUFFERING, _STREAM_BYTES, _FIRST_BYTES, _DEPTH_SLICES, _PREV_SLACK, _PREFETCHED = 6, 7, 8, 9, 10, 11
_STREAMED, _LOADS_TABLE, _WHOLE_STREAMS = 12, 13, 14


def _memo_key(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, index: int, weights: WeightPlan | None,
    prev_slack_cycles: int, rows: int | None,
) -> tuple[NpuOp, tuple[Any, ...]]:
    """Op ``index`` and ``cost_op``'s memo key for these arguments: what its costing reads."""
    plan = dec.weights[index] if weights is None else weights
    view = net.op_views()[index]
    # only what the query reads: plans that differ in buffer size cost the same. A weight DMA runs
    # under the previous op only where its buffer is held there too (else the allocator may give the
    # buffer that op's memory and the stream waits for it): prebuffered, or inside a cascade but at
    # its start, where every op's weights are held for the whole cascade
    prefetched = plan.prebuffer
    if not prefetched:
        cascade = dec.cascade_of(index)
        prefetched = cascade is not None and cascade.start != index
    # an op after a CPU op starts a command stream of its own, which loads its tables itself; a
    # table an earlier op of the stream loaded is not loaded again (``hw.lut_slots``); where the
    # table banks are not reserved, an op without a table may use them, and the load waits for it
    banks = 0 if reserved_table_banks(arch.accelerator) else 1
    streamed, loads_table = view.streamed[banks], view.loads_table[banks]
    op = view.op
    buffering = plan.buffering
    if prev_slack_cycles and not oracle.reads_prev_slack(
            op, weight_fetch=buffering, weight_prefetched=prefetched,
            lut_prefetched=streamed, loads_table=loads_table):
        prev_slack_cycles = 0  # one costing serves every slack
    found = oracle.view_keys.get(id(view))
    view_key = found[1] if found is not None else _view_key(oracle, view)
    where = _where(view, dec, index, rows)
    return op, (
        view_key, *where,
        buffering, plan.stream_bytes, plan.slice_bytes[0] if plan.slice_bytes else 0, plan.depth_slices,
        prev_slack_cycles, prefetched, streamed, loads_table,
        None if plan.stream_bytes or op.weights is None else _whole_streams(oracle, op, view_key, where[0]),
    )


def _view_key(oracle: CostOracle, view: OpView) -> int:
    """A small int standing in ``cost_op``'s memo keys for what a costing reads of ``view``: the op
    by its costing signature (``op_keys``: the memo is the oracle's, shared by the model's lowerings
    and by the ops of a network that cost alike, distinct objects with other names and weights;
    weights count by their encoded bytes, the plan's or the whole stream's), its maps' storage and
    rolling formats (so one oracle's memo can serve every network variant of a model) and its
    table loads. Worked out once per view (kept alive with it, so its id stays its own)."""
    value = (oracle.op_keys.key(view.op), view.stored, view.rolling, view.loads_table, view.streamed)
    key = oracle.view_values.setdefault(value, len(oracle.view_values))
    oracle.view_keys[id(view)] = (view, key)
    return key


def _shapes(oracle: CostOracle, op: NpuOp, view_key: int, rows: int) -> tuple[Any, ...]:
    """``_stripe_shapes`` of ``op`` (of ``_view_key`` ``view_key``) at ``rows``, memoised."""
    shapes = oracle.stripe_shapes.get((view_key, rows))
    if shapes is None:
        shapes = oracle.stripe_shapes[(view_key, rows)] = _stripe_shapes(oracle, op, rows)
    return shapes


def _whole_streams(oracle: CostOracle, op: NpuOp, view_key: int, rows: int) -> tuple[int, ...]:
    """The encoded bytes of ``op``'s whole weight stream in the order of each block its costing at
    ``rows`` may price (what a costing reading the weights in place reads of them), memoised
    (``CostOracle.whole_streams``)."""
    found = oracle.whole_streams.get((op, rows))
    if found is None:
        shapes = _shapes(oracle, op, view_key, rows)
        whole = (0, op.ofm_shape.c)
        found = oracle.whole_streams[(op, rows)] = tuple(
            oracle.weight_slice_bytes(op, block, whole)[0] for block in (shapes[3], *shapes[4]))
    return found


def _cost(net: Network, arch: Architecture, oracle: CostOracle, op: NpuOp, key: tuple[Any, ...]) -> Costed:
    """The costing of ``op`` that ``cost_op``'s memo ``key`` stands for (its fields in key order):
    with the oracle's block config, or one of its alternatives when that costs less (``_screens``)."""
    shapes = _shapes(oracle, op, key[_VIEW], key[_ROWS])
    if not shapes[4]:
        return _costed(oracle, _query(net, arch, op, key, shapes))
    query, screens = _screens(net, arch, oracle, op, key)
    blocks = (shapes[3], *shapes[4])
    if op.weights is None or not oracle.charges_weight_rereads():
        return _cheapest(oracle, query, [(s[0], i - 1, b) for i, (s, b) in enumerate(zip(screens, blocks))
                                         if s is not None])
    charge = _RereadCharge(arch, oracle, key, screens[0][1])  # type: ignore[index]
    return _cheapest(oracle, query, [(s[0] + charge.extra_cycles(s[1]), i - 1, b)
                                     for i, (s, b) in enumerate(zip(screens, blocks)) if s is not None], charge)


def _screens(
    net: Network, arch: Architecture, oracle: CostOracle, op: NpuOp, key: tuple[Any, ...],
) -> tuple[StripeQuery, tuple[tuple[int, float] | None, ...]]:
    """The oracle's question for ``cost_op``'s memo ``key`` and the screens of its blocks (the
    oracle's, then its alternatives). Vela's block scores count neither the padding of blocks
    that do not tile the OFM nor the bursts a block writes (a copy into an 8-deep slice in DRAM
    with 16-deep blocks), nor that one block's fill and drain overlap nothing: the cost model
    prices a few other blocks too, the first of the cheapest is kept. Vela's block is screened
    with them: where an alternative costs less than Vela's block's least cycles, Vela's block is
    never priced in full. Where the oracle charges no weight re-reads, a block reading more
    weights than Vela's is screened out (None)."""
    shapes = _shapes(oracle, op, key[_VIEW], key[_ROWS])
    query = _query(net, arch, op, key, shapes)
    blocks = (shapes[3], *shapes[4])
    most = None
    if op.weights is not None and shapes[4] and not oracle.charges_weight_rereads():
        most = oracle.query_weight_read_bytes(query)
    return query, _screened(oracle, query, key, blocks, most)


def _screened(oracle: CostOracle, query: StripeQuery, key: tuple[Any, ...], blocks: tuple[Any, ...],
              most: float | None) -> tuple[tuple[int, float] | None, ...]:
    """``oracle.screen_blocks`` of ``query`` with ``blocks``, memoised (``CostOracle.screened``) on
    what it reads of ``cost_op``'s ``key``: the context, and of the weight plan only where the op
    reads its weights (in place or in a buffer), its depth slices (the operations it runs as) and
    its stream's bytes (the weights it reads; the whole stream's in place), not the buffer's kind and size, its prefetch nor
    the slack (the plans of one op share their screening)."""
    buffering = key[_BUFFERING]
    screen_key = (key[:_BUFFERING], buffering is WeightBuffering.NONE,
                  () if buffering is WeightBuffering.NONE else (key[_STREAM_BYTES], key[_DEPTH_SLICES]),
                  key[_WHOLE_STREAMS], most)
    found = oracle.screened.get(screen_key)
    if found is None:
        found = oracle.screened[screen_key] = oracle.screen_blocks(query, blocks, most_weight_read_bytes=most)
    return found


def _stripe_shapes(oracle: CostOracle, op: NpuOp, rows: int) -> tuple[Any, ...]:
    """``op``'s OFM, IFM and IFM2 stripes at ``rows`` OFM rows, the oracle's block config for them
    and its other blocks (``CostOracle.stripe_shapes``)."""
    ofm_stripe = op.ofm_shape.with_h(rows)
    ifm_stripe = ifm_stripe_for(op, ofm_stripe)
    block = oracle.block_config(op, ofm_stripe)
    others = tuple(b for b in oracle.block_alternatives(op, ofm_stripe) if b != block)
    return ofm_stripe, ifm_stripe, ifm2_stripe_for(op, ifm_stripe), block, others


class _RereadCharge:
    """What a costing counts for when blocks compete: its cycles, plus, for a block that reads the
    weight stream more often than Vela's block (which reads ``most_bytes``; the stream is re-read
    for each OFM block row), the transfer of its extra reads. Those reads share their memory with
    the DMAs of the ops around (the next op's weight prefetch), which this op's own cycles do not
    show, so they count as if they delayed those DMAs by their whole time. A block's screen
    (``CostOracle.screen_blocks``: its least cycles, its weight reads) plus ``extra_cycles`` of its
    reads is at most what its costing counts for."""

    __slots__ = ("_oracle", "_source", "_fast", "_most")

    def __init__(self, arch: Architecture, oracle: CostOracle, key: tuple[Any, ...], most_bytes: float) -> None:
        self._oracle, self._most, self._fast = oracle, most_bytes, arch.fast_area
        self._source = arch.const_area if key[_BUFFERING] is WeightBuffering.NONE else arch.fast_area

    def extra_cycles(self, read_bytes: float) -> int:
        """The charge for reading ``read_bytes`` of weights."""
        extra_bytes = int(read_bytes - self._most)
        return self._oracle.transfer_cycles(self._source, self._fast, extra_bytes) if extra_bytes > 0 else 0

    def __call__(self, costed: Costed) -> int:
        return costed.cycles + self.extra_cycles(self._oracle.weight_read_bytes(costed.cost))


def _cycles(costed: Costed) -> int:
    """A costing's cycles: what it counts for where no extra reads are charged."""
    return costed.cycles


def _cheapest(oracle: CostOracle, query: StripeQuery, screened: list[tuple[int, int, Any]],
              charged: Callable[[Costed], int] = _cycles) -> Costed:
    """The first of the cheapest by ``charged`` (at least its cycles) of ``query``'s costings with
    the ``screened`` blocks (least cycles, index in order: ``query``'s own block at -1, block
    config), pricing in full only the blocks whose least cycles can beat the cheapest so far,
    those least cycles first; ``query``'s costing when none is screened."""
    best: Costed | None = None
    best_index, best_charged = 0, 0
    for least, index, block in sorted(screened, key=lambda s: s[:2]):
        # a tie goes to the earlier in order: Vela's block first (index -1), then the alternatives'
        if best is not None and (least > best_charged or (least == best_charged and index > best_index)):
            break  # the rest are sorted after this one: none can win
        costed = _costed(oracle, query if block == query.block_config else dataclasses.replace(query, block_config=block))
        price = charged(costed)
        if best is None or price < best_charged or (price == best_charged and index < best_index):
            best, best_index, best_charged = costed, index, price
    return best if best is not None else _costed(oracle, query)


def _query(net: Network, arch: Architecture, op: NpuOp, key: tuple[Any, ...], shapes: tuple[Any, ...]) -> StripeQuery:
    """The oracle's question for ``op`` under ``_cost``'s ``key`` with its stripes and block config
    ``shapes`` (``_stripe_shapes``)."""
    staged, ifm, ofm, ifm2 = key[_STAGED:_BUFFERING]
    buffering, stream_bytes, first_bytes, depth_slices, prev_slack_cycles, prefetched, streamed, loads = \
        key[_BUFFERING:_WHOLE_STREAMS]
    fast, arena = arch.fast_area, arch.arena_area
    if ifm2 is not None:
        ifm2_area: MemArea | None = arena if ifm2 == _ARENA else fast
    else:
        ifm2_area = None if op.ifm2 is None else arch.const_area
    ofm_stripe, ifm_stripe, ifm2_stripe, block = shapes[:4]
    return StripeQuery(
        op=op, block_config=block, ofm_stripe=ofm_stripe, ifm_stripe=ifm_stripe, ifm2_stripe=ifm2_stripe,
        ofm_depth=op.ofm_shape.c,
        # a constant IFM (a pad's border fill) is read from where constants live, as Vela reads it
        ifm_area=arch.const_area if op.ifm.is_constant else fast if staged or ifm != _ARENA else arena,
        ifm2_area=ifm2_area,
        ofm_area=arena if ofm == _ARENA else fast,
        weight_area=arch.const_area if buffering is WeightBuffering.NONE else fast,
        ifm_format=_format(net, ifm, op.ifm.name),
        ofm_format=_format(net, ofm, op.ofm.name),
        ifm2_format="NHWC" if ifm2 is None else _format(net, ifm2, op.ifm2.name),  # type: ignore[union-attr]
        weight_source_area=arch.const_area,
        weight_fetch=str(buffering),
        weight_stream_bytes=stream_bytes,
        first_slice_bytes=first_bytes,
        depth_slices=depth_slices,
        prev_slack_cycles=prev_slack_cycles,
        staged_ifm_bytes=net.fms[op.ifm.name].size_bytes if staged == 1 else 0,
        weight_prefetched=prefetched,
        lut_prefetched=streamed,
        loads_table=loads,
    )


def _costed(oracle: CostOracle, query: StripeQuery) -> Costed:
    """The oracle's costing of ``query``."""
    cost = oracle.op_cost(query)
    cycles = oracle.cycles(cost)
    slack = int(getattr(cost, "slack_npu_cycles", cycles))  # NPU time of the last depth slice
    return Costed(query.block_config, query.ofm_stripe, query.ifm_stripe, query.ifm2_stripe, cost, cycles, slack)
