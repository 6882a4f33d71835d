"""Give back fast storage at the peak where the speed it buys is not real.

A search maximises speed, so it spends memory wherever that saves any cycles at all, including at
the peak, where every byte counts against the budget and the reported ``sram_memory_used``. This
pass walks down from the peak: while some cascade or weight buffer live at a peak time step can be
undone for a larger relative saving of peak bytes than its relative cost in cycles, and the plan
stays within the equal-speed bound of the fastest candidate, undo the best such one. (Performance
only: Size already takes the least peak, and buffers weights only below it.)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from npuplan.hw.memory import Architecture
from npuplan.schedule.pricing.assemble import total_cycles
from npuplan.schedule.model.decisions import NO_WEIGHT_BUFFER, Decisions
from npuplan.schedule.model.network import Network
from npuplan.schedule.pricing.oracle import CostOracle
from npuplan.schedule.model.usage import fast_buffers, usage_by_time


def trim_peak(net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, cycles_bound: float) -> Decisions:
    """``dec`` with cascades and weight buffers at the peak undone while that is worth it: each
    step must save a larger fraction of the peak than it adds to the cycles, and the total must
    stay within ``cycles_bound``."""
    cycles = total_cycles(net, dec, arch, oracle)
    steps, peak = _peak_steps(net, dec)
    while peak > 0:
        best: tuple[float, Decisions, int, frozenset[int], int] | None = None
        for option in _undo_options(net, dec, arch, steps):
            option_steps, option_peak = _peak_steps(net, option)
            if option_peak >= peak:
                continue
            option_cycles = total_cycles(net, option, arch, oracle)
            gain = (peak - option_peak) / peak - (option_cycles - cycles) / max(cycles, 1)
            if option_cycles <= cycles_bound and gain > 0 and (best is None or gain > best[0]):
                best = (gain, option, option_cycles, option_steps, option_peak)
        if best is None:
            return dec
        _, dec, cycles, steps, peak = best
    return dec


def _peak_steps(net: Network, dec: Decisions) -> tuple[frozenset[int], int]:
    usage = usage_by_time(net, fast_buffers(net, dec))
    peak = max(usage, default=0)
    return frozenset(t for t, used in enumerate(usage) if used == peak), peak


def _undo_options(net: Network, dec: Decisions, arch: Architecture, steps: frozenset[int]) -> Iterator[Decisions]:
    """Simplifications of ``dec`` touching a peak time step: a cascade run on whole feature maps
    instead, or a weight buffer dropped (weights read from where they live), one at a time; and,
    as the peak is often reached at several steps, all the buffers at the peak steps at once."""
    cascades = [c.id for c in dec.cascades if any(net.times[c.start] <= t <= net.times[c.end] for t in steps)]
    buffered = [i for i, plan in enumerate(dec.weights)
                if plan.buffer_bytes and dec.cascade_of(i) is None
                and any(_weights_first_time(net, dec, i) <= t <= net.times[i] for t in steps)]
    for cascade_id in cascades:
        yield _uncascade(net, dec, arch, cascade_id)
    for i in buffered:
        yield _unbuffer(dec, [i])
    if len(buffered) > 1:
        yield _unbuffer(dec, buffered)
    if len(cascades) > 1 or (cascades and buffered):
        undone = dec
        for cascade_id in cascades:
            undone = _uncascade(net, undone, arch, cascade_id)
        yield _unbuffer(undone, buffered)


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
