"""Address allocators with Vela's names: Greedy, LinearAlloc and HillClimb.

``allocate`` places the live ranges of one memory area and returns an ``Allocation``: an address per
range, the allocated peak address and the live-bytes lower bound. Allocators are pure and
deterministic: the same ranges and settings always give the same addresses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType

from npuplan.memory.hillclimb import HillClimbSettings, hill_climb
from npuplan.memory.live_range import LiveRange, live_bytes_lower_bound
from npuplan.memory.placement import (
    Instance,
    PlacementState,
    initial_orders,
    make_instance,
    placed,
    priority_order,
)
from npuplan.options import TensorAllocator
from npuplan.records import record
from npuplan.units import ALIGN_BYTES, round_up


@record(eq=False)
class Allocation:
    """Addresses of one memory area's live ranges.

    ``offsets`` maps range name to byte address; ``peak_bytes`` is the allocated peak address (the
    highest ``offset + aligned size``, Vela's ``sram_memory_used``); ``lower_bound_bytes`` the most
    aligned bytes live at any one time; ``alignment_bytes`` the minimum alignment every range got.
    """

    offsets: Mapping[str, int]
    peak_bytes: int
    lower_bound_bytes: int
    allocator: TensorAllocator
    alignment_bytes: int = ALIGN_BYTES

    @property
    def overhead_fraction(self) -> float:
        """How far the peak is above the lower bound (0.0 means optimal)."""
        if self.lower_bound_bytes == 0:
            return 0.0
        return self.peak_bytes / self.lower_bound_bytes - 1.0


class PlacementMemo:
    """HillClimb's addresses by what decides whether they are sound: the ranges' sizes and
    alignments (in order) and which of them share a time step, with the lower bound and the
    settings. A plan allocates the same buffers more than once (its schedule's peak, then its
    command stream's addresses), the second time often on another time scale (steps per command,
    not per operation) with the same overlaps; the addresses found first serve again, so the
    command stream gets the peak its schedule was planned with and the search runs once."""

    def __init__(self) -> None:
        self._found: dict[tuple[object, ...], tuple[int, ...]] = {}

    def __len__(self) -> int:
        """How many searches the memo holds."""
        return len(self._found)

    def offsets(self, inst: Instance, lower_bound: int, settings: HillClimbSettings) -> list[int]:
        key = (inst.sizes_bytes, inst.alignments, inst.neighbours, lower_bound, settings)
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = tuple(_hillclimb_state(inst, lower_bound, settings).offsets)
        return list(found)


def allocate(
    ranges: Sequence[LiveRange],
    *,
    allocator: TensorAllocator,
    alignment: int = ALIGN_BYTES,
    hillclimb: HillClimbSettings = HillClimbSettings(),
    memo: PlacementMemo | None = None,
) -> Allocation:
    """Give every range an address so that ranges live at the same time never share a byte.

    Every range is aligned to the least common multiple of its own ``alignment`` and ``alignment``
    (bytes) and its size is rounded up to that. All ranges must be in one memory area and have
    distinct names (``ValueError`` otherwise). ``memo`` remembers HillClimb's searches (the same
    addresses, found once).
    """
    aligned = _with_alignment(ranges, alignment)
    lower_bound = live_bytes_lower_bound(aligned)
    if allocator == TensorAllocator.LINEAR:
        offsets = _linear_offsets(aligned)
    elif allocator == TensorAllocator.GREEDY:
        offsets = _greedy_state(make_instance(aligned)).offsets
    elif allocator == TensorAllocator.HILLCLIMB:
        inst = make_instance(aligned)
        offsets = (memo.offsets(inst, lower_bound, hillclimb) if memo is not None
                   else _hillclimb_state(inst, lower_bound, hillclimb).offsets)
    else:  # pragma: no cover - closed enum
        raise ValueError(f"unknown tensor allocator {allocator!r}")
    peak = max((o + r.aligned_size_bytes for o, r in zip(offsets, aligned)), default=0)
    return Allocation(
        offsets=MappingProxyType({r.name: o for r, o in zip(aligned, offsets)}),
        peak_bytes=peak,
        lower_bound_bytes=lower_bound,
        allocator=allocator,
        alignment_bytes=alignment,
    )


def _with_alignment(ranges: Sequence[LiveRange], alignment: int) -> list[LiveRange]:
    if alignment <= 0:
        raise ValueError(f"alignment must be positive, got {alignment}")
    areas = sorted({r.area for r in ranges})
    if len(areas) > 1:
        raise ValueError(f"allocate one memory area at a time, got {areas}")
    names = [r.name for r in ranges]
    if len(set(names)) != len(names):
        duplicates = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"live range names must be unique, repeated: {duplicates}")
    return [
        r if r.alignment % alignment == 0 else replace(r, alignment=math.lcm(r.alignment, alignment))
        for r in ranges
    ]


def _linear_offsets(ranges: Sequence[LiveRange]) -> list[int]:
    """Each range after the previous one, in the given order, with no reuse."""
    offsets = []
    top = 0
    for r in ranges:
        address = round_up(top, r.alignment)
        offsets.append(address)
        top = address + r.aligned_size_bytes
    return offsets


def _greedy_state(inst: Instance) -> PlacementState:
    """Most urgent (then longest, largest) first, each at the lowest address that fits."""
    return placed(inst, priority_order(inst))


def _hillclimb_state(inst: Instance, lower_bound: int, settings: HillClimbSettings) -> PlacementState:
    """Place every starting order (``placement.initial_orders``) and take the first that reaches the
    lower bound (nothing can peak lower). Otherwise hill-climb from the greedy order (so the result
    never peaks above Greedy's), then, while the bound is not reached, from up to
    ``settings.restarts`` further starting orders with half of the iterations each (the caller's
    order first, so with a restart the result never peaks above LinearAlloc's either); the lowest
    peak wins (the earlier start on a tie), the starts not climbed from included."""
    starts = [placed(inst, order) for order in initial_orders(inst)]
    reached = next((state for state in starts if state.peak_bytes <= lower_bound), None)
    if reached is not None:
        return reached
    climbed = starts[: 1 + max(settings.restarts, 0)]
    best = hill_climb(climbed[0], inst, target_bytes=lower_bound, settings=settings)
    shorter = replace(settings, max_iterations=settings.max_iterations // 2,
                      patience_iterations=settings.patience_iterations // 2)
    for state in climbed[1:]:
        if best.peak_bytes <= lower_bound:
            break
        found = hill_climb(state, inst, target_bytes=lower_bound, settings=shorter)
        if found.peak_bytes < best.peak_bytes:
            best = found
    return min([best, *starts[len(climbed):]], key=lambda state: state.peak_bytes)
