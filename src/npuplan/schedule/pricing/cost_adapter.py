"""The project's cost model and block-config chooser behind the scheduler's ``CostOracle``."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

from npuplan.cost import (
    BlockChoice, CostQuery, FmStaging, LutAccess, Operand, StripeRows, WeightAccess, WeightFetch,
    dma_cycles, op_cost,
)
from npuplan.cost.model import CostMemo, least_weight_wait, screen, weight_read_bytes, weight_read_total
from npuplan.cost.weights import WeightEncodings, encoding_order
from npuplan.hw.block_config import alternative_block_configs, choose_block_config
from npuplan.hw.memory import Architecture, MemArea
from npuplan.options import Optimise
from npuplan.ir.lowered import Activation, NpuOp, element_type
from npuplan.ir.shape import Shape4D
from npuplan.schedule.model.geometry import input_rows
from npuplan.schedule.pricing.oracle import Costed, CostOracle, MemoOracle, OracleMemos, StripeQuery

log = logging.getLogger(__name__)

_FETCH = {
    "none": WeightFetch.DIRECT,
    "full": WeightFetch.BUFFERED,
    "single": WeightFetch.BUFFERED,
    "double": WeightFetch.DOUBLE_BUFFERED,
}
# Bytes of an activation lookup table by OFM element size in bits (int8: 256 x 1; the softmax
# exp table: 256 x int32; int16: 512 x int32)
_LUT_BYTES = {8: 256, 16: 2048, 32: 1024}


def stripe_rows(op: NpuOp, ofm_rows: int) -> tuple[StripeRows, ...]:
    """The operations ``op`` runs as when it makes ``ofm_rows`` OFM rows a step, as the command
    stream issues them (``commands.stream``): stripes from row 0, each reading the IFM rows its
    kernel needs (``geometry.input_rows``) and its second input's rows alongside (all of them when
    broadcast); none when one step makes the whole OFM."""
    height = op.ofm_shape.h
    if ofm_rows >= height:
        return ()
    found: dict[tuple[int, int, int], int] = {}
    for a in range(0, height, max(ofm_rows, 1)):
        b = min(a + ofm_rows, height)
        lo, hi = input_rows(op, op.ifm_shape, (a, b))
        ifm2 = 0 if op.ifm2_shape is None else b - a if op.ifm2_shape.h == height else op.ifm2_shape.h
        key = (b - a, hi - lo, ifm2)
        found[key] = found.get(key, 0) + 1
    return tuple(StripeRows(count, *key) for key, count in found.items())


def lut_access(op: NpuOp, arch: Architecture, *, prefetched: bool = True) -> LutAccess | None:
    """The LUT an op DMAs into the shared buffer before it runs (Vela copies it for every LUT op);
    ``prefetched``: under the previous op (not at the start of a command stream)."""
    if op.activation is not Activation.LUT:
        return None
    return LutAccess(_LUT_BYTES.get(op.ofm.dtype.bits, 256), arch.const_area, prefetched)


class CostModelOracle(OracleMemos):
    """Adapts ``npuplan.cost.op_cost`` and ``hw.block_config.choose_block_config``."""

    def __init__(self, arch: Architecture, *, encodings: WeightEncodings | None = None, cut_blocks: bool = True) -> None:
        """``encodings`` is the plan's shared weight-encoding memo (a new one when not given);
        ``cut_blocks``: whether the block alternatives include cut blocks (``alternative_block_configs``)."""
        self._arch = arch
        self._cut_blocks = cut_blocks
        self._encodings = encodings or WeightEncodings(arch.accelerator)
        self._memo = CostMemo()  # what cost.model may reuse between queries
        self._stripes: dict[tuple[NpuOp, int], tuple[StripeRows, ...]] = {}
        OracleMemos.__init__(self)
        self._streams: dict[tuple[NpuOp, Any], int] = {}  # (op, block config or encoding order) -> its whole stream's bytes
        self._last: tuple[StripeQuery, CostQuery] | None = None  # the last query translated, and its translation
        self._choices: dict[Any, BlockChoice] = {}  # block config -> its BlockChoice

    def block_config(self, op: NpuOp, ofm_stripe: Shape4D) -> Any:
        box = None if ofm_stripe == op.ofm_shape else ofm_stripe
        return choose_block_config(op, self._arch.accelerator, ofm_box=box)

    def block_alternatives(self, op: NpuOp, ofm_stripe: Shape4D) -> tuple[Any, ...]:
        box = None if ofm_stripe == op.ofm_shape else ofm_stripe
        return alternative_block_configs(op, self._arch.accelerator, ofm_box=box, cut=self._cut_blocks)

    def charges_weight_rereads(self) -> bool:
        """Where cut blocks are priced, those re-read the weight stream and pay for it; elsewhere
        (Size) an alternative reading it more often than Vela's block is dropped, as before them."""
        return self._cut_blocks

    def op_cost(self, query: StripeQuery) -> Any:
        return op_cost(self._model_query(query), self._arch, memo=self._memo)

    def screen_blocks(self, query: StripeQuery, blocks: Sequence[Any], *,
                      most_weight_read_bytes: float | None) -> tuple[tuple[int, float] | None, ...]:
        """``cost.model.screen`` with each block (its least cycles an int: ``cycles`` rounds the total)."""
        base = self._model_query(query)
        return tuple(screen(self._with_block(query, base, block), self._arch, memo=self._memo,
                            most_weight_read_bytes=most_weight_read_bytes) for block in blocks)

    def weight_wait_cycles(self, query: StripeQuery) -> int:
        """``cost.model.least_weight_wait`` of ``query``, rounded down."""
        return int(least_weight_wait(self._model_query(query), self._arch))

    def _with_block(self, query: StripeQuery, translated: CostQuery, block_config: Any) -> CostQuery:
        """``_translate(query)`` with ``block_config`` instead of ``query``'s, from ``translated``
        (``_translate(query)``): the block and, when it is the whole stream, the stream's size
        are all the translation reads of it."""
        weights = translated.weights
        if weights is not None and not query.weight_stream_bytes:
            stream = self._whole_stream_bytes(query.op, block_config)
            if stream != weights.stream_bytes:
                weights = dataclasses.replace(weights, stream_bytes=stream)
        t = translated  # every other field as it is (constructed: each costing asks for several blocks)
        return CostQuery(t.op, self._block_choice(block_config), t.ifm, t.ofm, t.ifm2, weights, t.lut,
                         t.prev_slack_npu_cycles, t.staging, t.stripes)

    def _block_choice(self, block_config: Any) -> BlockChoice:
        """``BlockChoice.of(block_config)``, made once per block config (one object: the cost
        model's memos hash and compare it at every lookup)."""
        found = self._choices.get(block_config)
        if found is None:
            found = self._choices[block_config] = BlockChoice.of(block_config)
        return found

    def _model_query(self, query: StripeQuery) -> CostQuery:
        """``query`` as the cost model's question, kept for the last one translated (a costing
        screens Vela's block and its alternatives from that query, then prices some in full: one
        that differs from it only in its block is translated from it, ``_with_block``)."""
        last = self._last
        if last is not None:
            if last[0] is query:
                return last[1]
            if (query.op is last[0].op and query.block_config != last[0].block_config
                    and _same_but_block(query, last[0])):
                return self._with_block(query, last[1], query.block_config)
        found = self._translate(query)
        self._last = (query, found)
        return found

    def _translate(self, query: StripeQuery) -> CostQuery:
        op = query.op
        bits_in = element_type(op.ifm).bits  # an int64 map is read and written as 32-bit halves
        weights = None
        if op.weights is not None:
            stream = query.weight_stream_bytes or self._whole_stream_bytes(op, query.block_config)
            fetch = _FETCH.get(query.weight_fetch, WeightFetch.DIRECT)
            weights = WeightAccess(
                stream_bytes=stream,
                source_area=query.weight_source_area or self._arch.const_area,
                fetch=fetch,
                buffer_area=None if fetch is WeightFetch.DIRECT else query.weight_area,
                first_slice_bytes=query.first_slice_bytes,
                depth_slices=query.depth_slices,
                prefetched=query.weight_prefetched,
            )
        ifm2 = None
        if op.ifm2 is not None and query.ifm2_stripe is not None and query.ifm2_area is not None:
            ifm2 = Operand(query.ifm2_stripe, query.ifm2_area, query.ifm2_format,  # type: ignore[arg-type]
                           element_type(op.ifm2).bits)
        # Vela costs the box an op writes, not all its OFM (a concatenation copy writes its slice)
        written = op.ofm_write_shape if op.ofm_write_shape is not None else op.ofm_shape.with_c(query.ofm_depth)
        stripes = self._stripes.get((op, query.ofm_stripe.h))
        if stripes is None:
            stripes = self._stripes[(op, query.ofm_stripe.h)] = stripe_rows(op, query.ofm_stripe.h)
        model_query = CostQuery(
            op=op,
            block=self._block_choice(query.block_config),
            # a striped op: its whole boxes, run as one operation per stripe (``stripes``)
            ifm=Operand(op.ifm_shape, query.ifm_area, query.ifm_format, bits_in,  # type: ignore[arg-type]
                        abs(op.ifm_step[1]) if op.ifm_step else 1),
            # a mirrored view (step -1) walks its columns backwards, each still a run of bytes
            ofm=Operand(written, query.ofm_area, query.ofm_format,  # type: ignore[arg-type]
                        element_type(op.ofm).bits, abs(op.ofm_step[1]) if op.ofm_step else 1),
            ifm2=ifm2,
            weights=weights,
            lut=lut_access(op, self._arch, prefetched=query.lut_prefetched) if query.loads_table else None,
            prev_slack_npu_cycles=float(query.prev_slack_cycles),
            staging=FmStaging(query.staged_ifm_bytes, self._arch.arena_area, query.ifm_area)
            if query.staged_ifm_bytes else None,
            stripes=stripes,
        )
        return model_query

    def reads_prev_slack(self, op: NpuOp, *, weight_fetch: str, weight_prefetched: bool, lut_prefetched: bool,
                         loads_table: bool) -> bool:
        """The cost model hides under the previous op's slack only a DMA it may prefetch there
        (``cost.model._npu_cycles``): buffered weights marked prefetched, else a table loaded under
        the previous op."""
        if op.weights is not None and _FETCH.get(weight_fetch, WeightFetch.DIRECT) is not WeightFetch.DIRECT:
            return weight_prefetched
        return loads_table and lut_prefetched and lut_access(op, self._arch) is not None

    def _whole_stream_bytes(self, op: NpuOp, block_config: Any) -> int:
        """Encoded bytes of all of ``op``'s weights run with ``block_config`` (asked once per costing)."""
        key = (op, block_config)
        found = self._streams.get(key)
        if found is None:
            # the sizes read only the encoder's order (``weight_slice_bytes``), which many blocks share
            order = encoding_order(op, block_config)
            by_order = (op, order)
            found = self._streams.get(by_order)
            if found is None:
                found = self._streams[by_order] = self._encodings.slice_bytes(op, 0, op.ofm_shape.c, order)
            self._streams[key] = found
        return found

    def cycles(self, cost: Any) -> int:
        return int(round(cost.total_cycles))

    def weight_read_bytes(self, cost: Any) -> float:
        return weight_read_total(cost.bytes)

    def query_weight_read_bytes(self, query: StripeQuery) -> float:
        return weight_read_bytes(self._model_query(query), memo=self._memo)

    def weight_slice_bytes(self, op: NpuOp, block_config: Any, depth_slices: tuple[int, ...]) -> tuple[int, ...]:
        """The encoder's sizes (``cost.weights``), walked in the order ``block_config`` makes the
        encoder use (its OFM block depth and traversal decide the zeros it pads)."""
        if op.weights is None:
            return tuple(0 for _ in depth_slices[1:])
        order = encoding_order(op, block_config)
        return tuple(self._encodings.slice_bytes(op, a, b, order) for a, b in zip(depth_slices, depth_slices[1:]))

    def transfer_cycles(self, src: MemArea, dst: MemArea, size_bytes: int) -> int:
        return int(dma_cycles(self._arch, src, dst, size_bytes))


_BUT_BLOCK = tuple(f.name for f in dataclasses.fields(StripeQuery) if f.name != "block_config")


def _same_but_block(a: StripeQuery, b: StripeQuery) -> bool:
    """Whether ``a`` and ``b`` ask the same but, perhaps, of another block config."""
    return all(getattr(a, name) == getattr(b, name) for name in _BUT_BLOCK)


def default_oracle(arch: Architecture, *, encodings: WeightEncodings | None = None,
                   optimise: Optimise = Optimise.PERFORMANCE) -> CostOracle:
    """The project's cost model behind the oracle interface, memoised.

    An oracle and its memos serve the plans of one accelerator, system config, memory mode and goal
    (any budget or network variant: the costing memo's keys hold what it reads of those). Only
    Performance prices cut blocks (``alternative_block_configs``): a faster op never buys a Size
    plan memory, and Size's search, steered by the faster ops, found plans with more of it
    (effnet_int16_32 +896 B).

    ``encodings`` is the plan's weight-encoding memo, to share with the command stream and report.
    """
    return MemoOracle(CostModelOracle(arch, encodings=encodings, cut_blocks=optimise is Optimise.PERFORMANCE))
