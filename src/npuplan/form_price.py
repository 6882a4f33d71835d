"""The local price of a lowering's other form: what the few NPU ops a form rewrites cost against
the ops they replace, so that a plan need not plan every form of a network in full to learn that
a form cannot win (``plan_forms.best_plan``).

A form (``PreparedModel.variants`` and ``PreparedModel.forms``: a MEAN summed in parallel rows, a
REDUCE_MAX as a tree, MUL+MAX kept unfolded, a concatenation written in place, a LUT as a pool)
rewrites some ops and leaves the others as they are. Both sides of the change are priced by the
one cost oracle alike: each op whole (unstriped, unbuffered weights) with every feature map in
fast storage, so the two prices differ by what the rewrite changes and not by what the planner
later makes of the rest. Screening which lowerings to plan in full, network inputs and outputs are
priced in the arena (``arena_ends``), where every plan leaves them: a form that spares the slow
arena (a MIRROR_PAD padding its rows in an intermediate) is otherwise priced as if it spared
nothing. Units: NPU cycles. ``bench/form_price.py`` measures how close such an
estimate comes to the form's full plan.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import replace

from npuplan.hw.memory import Architecture
from npuplan.ir.lowered import LoweredGraph, NpuOp
from npuplan.schedule.model.decisions import Decisions, max_decisions
from npuplan.schedule.model.network import Network, build_network
from npuplan.schedule.moves.fast_storage import candidate_fms
from npuplan.schedule.pricing.costing import cost_op
from npuplan.schedule.pricing.oracle import CostOracle


def op_form(op: NpuOp) -> Hashable:
    """What of an NPU op a form may rewrite: its operation, shapes, operands and where it writes."""
    return (op.name, op.op_type, op.elementwise, op.pool, op.ifm.name, op.ifm_shape,
            None if op.ifm2 is None else op.ifm2.name, op.ifm2_shape, op.ofm.name, op.ofm_shape,
            op.ofm_write_offset, op.ofm_write_shape, op.ifm_read_offset, op.ifm_frame, op.kernel, op.lut is not None)


def rewritten(lowered: LoweredGraph, other: LoweredGraph) -> tuple[int, ...]:
    """The indices (into ``lowered``'s NPU ops) of the ops ``other`` does not run in the same form."""
    theirs = Counter(op_form(op) for op in other.npu_ops)
    found = []
    for i, op in enumerate(lowered.npu_ops):
        form = op_form(op)
        if theirs[form] > 0:
            theirs[form] -= 1
        else:
            found.append(i)
    return tuple(found)


def _priced(net: Network, arch: Architecture, arena_ends: bool) -> Decisions:
    """The decisions a local price costs ops under: ``max_decisions`` with every feature map in
    fast storage, or with ``arena_ends`` only those that may move there (``candidate_fms``: a
    network input or output, or a map the CPU touches, stays in the arena, as every plan leaves it)."""
    dec = max_decisions(net, arch)
    fast = candidate_fms(net, dec) if arena_ends else net.fms.values()
    return replace(dec, fast_fms=frozenset(fm.name for fm in fast))


def whole_op_cycles(lowered: LoweredGraph, indices: tuple[int, ...], arch: Architecture, oracle: CostOracle, *,
                    pack_unaligned: bool, arena_ends: bool = False) -> int:
    """The NPU cycles of ``lowered``'s NPU ops ``indices``, each costed whole (``max_decisions``'
    stripes and weights) with every feature map in fast storage (``arena_ends``: see ``_priced``)."""
    if not indices:
        return 0
    net = build_network(lowered, pack_unaligned=pack_unaligned)
    dec = _priced(net, arch, arena_ends)
    return sum(cost_op(net, dec, arch, oracle, i).cycles for i in indices)


def change_cycles(planned: LoweredGraph, form: LoweredGraph, arch: Architecture, oracle: CostOracle, *,
                  pack_unaligned: bool, arena_ends: bool = False) -> int:
    """What ``form`` (another lowering of ``planned``'s model) changes in NPU cycles, priced locally:
    the cycles of the ops it rewrites less those of the ops of ``planned`` they replace (with
    ``arena_ends``, network inputs and outputs in the arena: ``_priced``)."""
    return (whole_op_cycles(form, rewritten(form, planned), arch, oracle, pack_unaligned=pack_unaligned,
                            arena_ends=arena_ends)
            - whole_op_cycles(planned, rewritten(planned, form), arch, oracle, pack_unaligned=pack_unaligned,
                              arena_ends=arena_ends))


def _cycles_by_source(lowered: LoweredGraph, indices: tuple[int, ...], arch: Architecture, oracle: CostOracle, *,
                      pack_unaligned: bool) -> dict[int, int]:
    """``whole_op_cycles`` of ``lowered``'s NPU ops ``indices`` (network inputs and outputs in the
    arena), summed per TFLite operator (``NpuOp.source_index``)."""
    if not indices:
        return {}
    net = build_network(lowered, pack_unaligned=pack_unaligned)
    dec = _priced(net, arch, arena_ends=True)
    found: dict[int, int] = {}
    for i in indices:
        source = lowered.npu_ops[i].source_index
        found[source] = found.get(source, 0) + cost_op(net, dec, arch, oracle, i).cycles
    return found


def cheapest_sources(planned: LoweredGraph, forms: Sequence[LoweredGraph], arch: Architecture, oracle: CostOracle,
                     *, pack_unaligned: bool) -> tuple[frozenset[int], ...]:
    """Per lowering of ``forms`` (other lowerings of ``planned``'s model), the TFLite operators (by
    index) it runs in the form the cost model prefers: where the ops it rewrites cost the least
    less than the ops of ``planned`` they replace, and less than every other form's (the first
    of equals), the network's inputs and outputs in the arena as every plan leaves them (a form
    sparing the slow arena, a MIRROR_PAD padding its rows in an intermediate or an output written
    through a staged copy, is otherwise priced as sparing nothing)."""
    best: dict[int, tuple[int, int]] = {}  # source -> (cycles saved less, form index)
    for k, form in enumerate(forms):
        ours = _cycles_by_source(form, rewritten(form, planned), arch, oracle, pack_unaligned=pack_unaligned)
        theirs = _cycles_by_source(planned, rewritten(planned, form), arch, oracle, pack_unaligned=pack_unaligned)
        for source, cycles in ours.items():
            change = cycles - theirs.get(source, cycles)
            if source in theirs and change < 0 and change < best.get(source, (0, -1))[0]:
                best[source] = (change, k)
    return tuple(frozenset(s for s, (_, k) in best.items() if k == index) for index in range(len(forms)))
