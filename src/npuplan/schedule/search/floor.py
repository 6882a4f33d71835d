"""The smallest fast-storage plan npuplan can build, and the error naming it when it still does not fit.

The floor schedule keeps whole only what must be whole (network inputs and outputs, tensors shared
with CPU ops, tensors between cascades) and cascades every chain with the split of least peak
(``build_cascades`` for Size), with no weight buffers. Its *allocated* peak is the figure the
``InfeasiblePlan`` error names: raising the budget to it always gives a plan (the planner falls
back to this schedule), so the figure is a floor the user can act on, not a guess.
"""

from __future__ import annotations

from dataclasses import replace

from npuplan.errors import InfeasiblePlan
from npuplan.hw.memory import Architecture
from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.options import Optimise
from npuplan.schedule.moves.branch_cascades import with_branch_cascades
from npuplan.schedule.moves.cascade_split import build_cascades
from npuplan.schedule.model.decisions import NO_WEIGHT_BUFFER, Decisions
from npuplan.schedule.model.geometry import is_cascadable
from npuplan.schedule.model.limits import Limits
from npuplan.schedule.model.network import Network
from npuplan.schedule.pricing.oracle import CostOracle
from npuplan.schedule.model.usage import Buffer, fast_buffers, usage_by_time


def floor_decisions(net: Network, start: Decisions, arch: Architecture, oracle: CostOracle) -> Decisions:
    """Chain cascades of least peak from the max schedule ``start``, no weight buffers
    (budget-independent)."""
    dec = build_cascades(net, start, arch, oracle, 0, Optimise.SIZE)
    return replace(dec, weights=tuple(NO_WEIGHT_BUFFER for _ in net.npu_ops))


def branched_floor(net: Network, floor: Decisions, arch: Architecture, oracle: CostOracle) -> Decisions:
    """``floor`` with cascades through branches wherever they lower its peak (least peak, whatever
    the cycles; ``branch_cascades``)."""
    return with_branch_cascades(net, floor, arch, oracle, least=True)


def infeasible(net: Network, dec: Decisions, *, allocated_bytes: int, limits: Limits) -> InfeasiblePlan:
    """The error for a floor schedule ``dec`` whose allocated peak ``allocated_bytes`` exceeds ``limits``."""
    buffers = fast_buffers(net, dec)
    usage = usage_by_time(net, buffers)
    t = max(range(len(usage)), key=usage.__getitem__) if usage else 0
    live = [b for b in buffers if b.start <= t <= b.end]
    why = _explain(net, dec, live, usage[t] if usage else 0, allocated_bytes)
    return InfeasiblePlan(
        op=short_name(_op_at(net, t)), needed_bytes=allocated_bytes, budget_bytes=limits.sram_budget_bytes, why=why,
        hint=f"raise --arena-cache-size to at least {allocated_bytes} bytes, or use a memory mode "
             "with the arena off-chip (Dedicated_Sram)",
    )


def _op_at(net: Network, t: int) -> str:
    if not 0 <= t < len(net.graph.ops):
        return f"time step {t}"
    return net.graph.ops[t].name


def _explain(net: Network, dec: Decisions, live: list[Buffer], live_bytes: int, allocated_bytes: int) -> str:
    """One clause per kind of buffer live at the peak, largest first."""
    parts: list[str] = []
    whole = sorted((b for b in live if b.kind == "fm"), key=lambda b: -b.size_bytes)
    named = [b for b in whole[:3] if b.size_bytes * 50 >= live_bytes]
    for b in named:
        reason = net.fms[b.name].whole_reason or _between_reason(net, dec, b.name)
        parts.append(f"'{short_name(b.name)}' {b.size_bytes} B ({reason})")
    rest = [b for b in whole if b not in named]
    if rest:
        parts.append(f"{len(rest)} other whole tensors {sum(b.size_bytes for b in rest)} B")
    rolling = [b for b in live if b.kind == "rolling"]
    if rolling:
        parts.append(f"{len(rolling)} rolling buffers {sum(b.size_bytes for b in rolling)} B")
    frag = allocated_bytes - live_bytes
    tail = f", plus {frag} B lost to allocation" if frag > 0 else ""
    return (f"the smallest plan (least-peak cascades, no weight buffers) holds {live_bytes} B here: "
            + ", ".join(parts) + tail)


def short_name(name: str, limit: int = 60) -> str:
    """A tensor name fit for a one-line message: its first ``;`` part, at most ``limit`` characters."""
    first = name.split(";")[0]
    return first if len(first) <= limit else "..." + first[-(limit - 3):]


def _between_reason(net: Network, dec: Decisions, name: str) -> str:
    fm = net.fms[name]
    if len(fm.consumers) > 1:
        return "branch point, whole: cascades do not span branches"
    ends = [net.npu_ops[k] for k in (fm.producer, *fm.consumers) if k >= 0]
    blockers = [f"{op.op_type} {why}" for op in ends if (why := cascade_blocker(op))]
    if blockers:
        return "whole: " + blockers[0]
    producer_cascade = dec.cascade_of(fm.producer) if fm.producer >= 0 else None
    if producer_cascade is not None:
        return "cascade output, whole"
    return "whole between ops that are not cascaded"


def cascade_blocker(op: NpuOp) -> str:
    """Why ``op`` cannot run in a cascade (Vela's rules), or "" when it can."""
    if op.block_type in (BlockType.VECTOR_PRODUCT, BlockType.REDUCE_SUM):
        return "reads its whole input"
    if op.ofm_write_offset is not None or op.reads_at_offset:
        return "reads or writes at an offset (pad, concat, slice)"
    if op.ifm2 is not None and not op.ifm2.is_constant:
        return "has two feature-map inputs"
    if not is_cascadable(op):
        return "cannot be striped"
    return ""
