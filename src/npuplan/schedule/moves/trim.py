"""Give back fast storage at the peak where the speed it buys is not real.

A search maximises speed, so it spends memory wherever that saves any cycles at all, including at
the peak, where every byte counts against the budget and the reported ``sram_memory_used``. This
pass walks down from the peak: while some cascade or weight buffer live at a peak time step can be
undone for a larger relative saving of peak bytes than its relative cost in cycles, and the plan
stays within the equal-speed bound of the fastest candidate (``planner.EQUAL_SPEED_FRACTION``, 0:
no slower than it), undo the best such one. (Performance
only: Size already takes the least peak, and buffers weights only below it.)
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import replace

from npuplan.hw.memory import Architecture
from npuplan.records import record
from npuplan.schedule.pricing.costing import cost_op
from npuplan.schedule.model.decisions import NO_WEIGHT_BUFFER, CascadeSpan, Decisions
from npuplan.schedule.model.network import Network
from npuplan.schedule.pricing.oracle import CostOracle
from npuplan.schedule.model.inplace import inplace_outputs
from npuplan.schedule.model.usage import (
    fast_buffers,
    fm_buffers,
    inplace_group,
    inplace_mates,
    rolling_buffers,
    usage_by_time,
    weight_buffers,
)


def trim_peak(net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, cycles_bound: float) -> Decisions:
    """``dec`` with cascades and weight buffers at the peak undone while that is worth it: each
    step must save a larger fraction of the peak than it adds to the cycles, and the total must
    stay within ``cycles_bound``."""
    priced = _Priced.of(net, dec, arch, oracle)
    usage = usage_by_time(net, fast_buffers(net, dec))
    steps, peak = _peak_steps(usage)
    while peak > 0:
        best: tuple[float, Decisions, list[int]] | None = None
        owner = _Owners.of(net, dec)
        for option, changed, weights_only in _undo_options(net, dec, arch, steps):
            option_usage = _usage_without_weights(net, dec, usage, changed) if weights_only else (
                _usage_undone(net, dec, option, usage, changed, owner))
            option_peak = max(option_usage, default=0)
            if option_peak >= peak:
                continue
            option_cycles = priced.total_with(net, option, arch, oracle, changed)
            gain = (peak - option_peak) / peak - (option_cycles - priced.total_cycles) / max(priced.total_cycles, 1)
            if option_cycles <= cycles_bound and gain > 0 and (best is None or gain > best[0]):
                best = (gain, option, option_usage)
        if best is None:
            return dec
        _, dec, usage = best
        steps, peak = _peak_steps(usage)
        priced = _Priced.of(net, dec, arch, oracle)
    return dec


@record(eq=False)
class _Priced:
    """Each op's cycles and the slack it leaves the next under one decision set, so that a change
    to a few ops is priced by costing those ops and the ones their slack reaches (the same sum
    ``total_cycles`` gives)."""

    dec: Decisions
    cycles: tuple[int, ...]
    slack: tuple[int, ...]
    total_cycles: int

    @staticmethod
    def of(net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle) -> _Priced:
        cycles, slack, prev = [], [], 0
        for i in range(len(net.npu_ops)):
            c = cost_op(net, dec, arch, oracle, i, prev_slack_cycles=prev)
            cycles.append(c.cycles)
            slack.append(c.slack_cycles)
            prev = c.slack_cycles
        return _Priced(dec, tuple(cycles), tuple(slack), sum(cycles))

    def total_with(self, net: Network, option: Decisions, arch: Architecture, oracle: CostOracle,
                   changed: frozenset[int]) -> int:
        """``total_cycles`` of ``option``, which differs from ``self.dec`` only in what ops
        ``changed`` read (their stripes, weight plans, cascades and the maps they access)."""
        if not changed:
            return self.total_cycles
        first, last = min(changed), max(changed)
        total = sum(self.cycles[:first])
        prev = self.slack[first - 1] if first > 0 else 0
        for i in range(first, len(self.cycles)):
            if i > last and prev == self.slack[i - 1]:  # from here on every op costs as before
                return total + sum(self.cycles[i:])
            c = cost_op(net, option, arch, oracle, i, prev_slack_cycles=prev)
            total += c.cycles
            prev = c.slack_cycles
        return total


def _peak_steps(usage: list[int]) -> tuple[list[int], int]:
    """The time steps at which ``usage`` peaks, ascending, and the peak."""
    peak = max(usage, default=0)
    return [t for t, used in enumerate(usage) if used == peak], peak


def _meets(steps: Sequence[int], first: int, last: int) -> bool:
    """Whether any of the ascending time ``steps`` lies in ``first..last``."""
    k = bisect_left(steps, first)
    return k < len(steps) and steps[k] <= last


def _usage_without_weights(net: Network, dec: Decisions, usage: list[int], ops: frozenset[int]) -> list[int]:
    """``usage`` (of ``dec``) with the weight buffers of ``ops`` dropped: nothing else a weight
    plan decides is in fast storage."""
    out = list(usage)
    for b in weight_buffers(net, dec, sorted(ops)):
        for t in range(b.start, b.end + 1):
            out[t] -= b.size_bytes
    return out


@record(eq=False)
class _Owners:
    """The in-place pairs of one decision set (``inplace_outputs``) and, per map, its mates."""

    pairs: dict[str, str]
    mates: dict[str, list[str]]

    @staticmethod
    def of(net: Network, dec: Decisions) -> _Owners:
        pairs = inplace_outputs(net, dec)
        return _Owners(pairs, inplace_mates(pairs))


def _usage_undone(
    net: Network, dec: Decisions, option: Decisions, usage: list[int], changed: frozenset[int], owner: _Owners,
) -> list[int]:
    """``usage`` (of ``dec``) turned into ``option``'s, which undoes cascades and weight buffers of
    the ops ``changed``: only the buffers of the maps those ops access (with every map sharing a
    buffer with one of them, under either decision set's in-place pairs), the removed cascades'
    rolling buffers and those ops' weight buffers are redone (as ``cascades._span_peak`` does)."""
    ops = sorted(changed)
    new_pairs = {out: inp for out, inp in owner.pairs.items() if net.fms[out].producer not in changed}
    redone = inplace_outputs(net, option, ops)
    new_pairs.update(redone)
    touched = {t.name for i in ops for t in (net.npu_ops[i].ifm, net.npu_ops[i].ifm2, net.npu_ops[i].ofm)
               if t is not None}
    names = [n for n in inplace_group(redone, touched, mates=(owner.mates, inplace_mates(redone))) if n in net.fms]
    kept = {c.id for c in option.cascades}
    out = list(usage)
    for d, pairs, cascades, sign in ((dec, owner.pairs, [c for c in dec.cascades if c.id not in kept], -1),
                                     (option, new_pairs, [], 1)):
        for b in fm_buffers(net, d, names, owner=pairs) + rolling_buffers(net, cascades) + weight_buffers(net, d, ops):
            for t in range(b.start, b.end + 1):
                out[t] += sign * b.size_bytes
    return out


def _undo_options(
    net: Network, dec: Decisions, arch: Architecture, steps: Sequence[int],
) -> Iterator[tuple[Decisions, frozenset[int], bool]]:
    """Simplifications of ``dec`` touching a peak time step: a cascade run on whole feature maps
    instead, or a weight buffer dropped (weights read from where they live), one at a time; and,
    as the peak is often reached at several steps, all the buffers at the peak steps at once.
    Each with the ops whose costing it changes and whether it only drops weight buffers."""
    cascades = [c for c in dec.cascades if _meets(steps, net.times[c.start], net.times[c.end])]
    buffered = [i for i, plan in enumerate(dec.weights)
                if plan.buffer_bytes and dec.cascade_of(i) is None
                and _meets(steps, _weights_first_time(net, dec, i), net.times[i])]
    for cascade in cascades:
        yield _uncascade(net, dec, arch, cascade.id), _cascade_ops(net, cascade), False
    for i in buffered:
        yield _unbuffer(dec, [i]), frozenset((i,)), True
    if len(buffered) > 1:
        yield _unbuffer(dec, buffered), frozenset(buffered), True
    if len(cascades) > 1 or (cascades and buffered):
        undone = dec
        for cascade in cascades:
            undone = _uncascade(net, undone, arch, cascade.id)
        changed = frozenset(buffered).union(*(_cascade_ops(net, c) for c in cascades))
        yield _unbuffer(undone, buffered), changed, False


def _cascade_ops(net: Network, cascade: CascadeSpan) -> frozenset[int]:
    """The ops whose costing undoing ``cascade`` may change: its own, and every producer and
    consumer of its rolling buffers (which become whole feature maps)."""
    ops = set(range(cascade.start, cascade.end + 1))
    for r in cascade.rolling:
        fm = net.fms.get(r.tensor_name)
        if fm is not None:
            ops.update(k for k in (fm.producer, *fm.consumers) if k >= 0)
    return frozenset(ops)


def _weights_first_time(net: Network, dec: Decisions, i: int) -> int:
    return net.times[i - 1] if dec.weights[i].prebuffer and i > 0 else net.times[i]


def _unbuffer(dec: Decisions, ops: list[int]) -> Decisions:
    weights = list(dec.weights)
    for i in ops:
        weights[i] = NO_WEIGHT_BUFFER
    return replace(dec, weights=tuple(weights))


def _uncascade(net: Network, dec: Decisions, arch: Architecture, cascade_id: int) -> Decisions:
    """The cascade ``cascade_id`` run op by op on whole feature maps, weights unbuffered; its
    intermediate feature maps go where the memory mode puts feature maps (fast storage when the
    arena is the SRAM, the arena otherwise)."""
    span = next(c for c in dec.cascades if c.id == cascade_id)
    rows, weights = list(dec.ofm_rows), list(dec.weights)
    for i in range(span.start, span.end + 1):
        rows[i] = net.npu_ops[i].ofm_shape.h
        weights[i] = NO_WEIGHT_BUFFER
    fast = dec.fast_fms
    if not arch.is_dedicated_sram:
        fast = fast | {r.tensor_name for r in span.rolling}
    return replace(dec, ofm_rows=tuple(rows), weights=tuple(weights), fast_fms=fast,
                   cascades=tuple(c for c in dec.cascades if c.id != cascade_id))
