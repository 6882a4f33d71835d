"""Hill-climbing search over placement orders (the idea of Vela's HillClimb allocator).

Start from an order, find the bottleneck (the range whose end address is the peak), collect the
ranges that decided its address (its time neighbours and the chains of ranges that pushed them up),
swap two of them in the order, re-place what the swap can move (``placement.place_again``), and keep the new order
unless the peak grew. Deterministic: a private ``random.Random(seed)`` and iteration counts, never
wall-clock time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from npuplan.memory.placement import NO_PREDECESSOR, Instance, PlacementState, place_again
from npuplan.records import record

if TYPE_CHECKING:
    import random


@record
class HillClimbSettings:
    """Search bounds. ``patience_iterations``: stop after this many iterations without improvement;
    ``widen_after_iterations``: after this many, also swap among the blockers' neighbours;
    ``non_neighbour_percent``: how often the first pick comes from blockers not live with the bottleneck;
    ``restarts``: how many further starting orders to climb from while the bound is not reached.
    """

    seed: int = 1
    max_iterations: int = 3000
    patience_iterations: int = 400
    widen_after_iterations: int = 50
    non_neighbour_percent: int = 30
    restarts: int = 4


def hill_climb(
    state: PlacementState, inst: Instance, *, target_bytes: int, settings: HillClimbSettings
) -> PlacementState:
    """Climb from the placed ``state`` (changed in place and returned); stops early once the peak
    reaches ``target_bytes``. The result's peak is never above ``state``'s own.

    One state serves as both the current and the best placement: a move whose peak would grow is
    undone through the state's journal, so an iteration costs what it re-places, not the whole order;
    the ranges that block the bottleneck are found again only after a move is kept (an undone one
    leaves the state as it was).
    """
    import random  # only where a climb runs: a small network's placement reaches its bound without one

    rng = random.Random(settings.seed)
    last_improvement = 0
    peak = state.peak_bytes
    state.commit()
    blocking: tuple[list[int], list[int]] | None = None
    for iteration in range(settings.max_iterations):
        stuck = iteration - last_improvement
        if peak <= target_bytes or stuck >= settings.patience_iterations:
            break
        if blocking is None:
            blocking = _blocker_turns(state, inst)
        moved_turns = _perturb(state, inst, rng, *blocking, stuck=stuck, settings=settings)
        if place_again(state, inst, moved_turns, give_up_above=peak):
            if state.peak_bytes < peak:
                last_improvement = iteration
                peak = state.peak_bytes
            state.commit()
            blocking = None
        else:
            state.rollback()
    return state


def _perturb(
    state: PlacementState, inst: Instance, rng: random.Random, turns: list[int], not_live: list[int], *,
    stuck: int, settings: HillClimbSettings,
) -> list[int]:
    """Swap two of the blockers of the bottleneck (their ``turns`` and the ones ``not_live`` with
    it: ``_blocker_turns``) in ``state.order``; returns the turns swapped (none when there are
    fewer than two blockers)."""
    if len(turns) < 2:
        return []
    if not_live and rng.randrange(100) < settings.non_neighbour_percent:
        first = rng.choice(not_live)
    else:
        first = rng.choice(turns)
    second = rng.choice(turns[:-1])
    if second == first:
        second = turns[-1]
    changed = [first, second]
    state.swap(first, second)
    if stuck > settings.widen_after_iterations:
        wider = _with_neighbour_turns(state, inst, turns, not_live)
        a, b = rng.choice(wider), rng.choice(wider)
        state.swap(a, b)
        changed += [a, b]
    return changed


def _blocker_turns(state: PlacementState, inst: Instance) -> tuple[list[int], list[int]]:
    """Turns of the bottleneck, its time neighbours, and every range that pushed one of them up
    (each once, the bottleneck's first); and those of them not live with the bottleneck."""
    bottleneck = state.top()[1]
    seen = bytearray(len(inst))
    found: list[int] = []
    predecessor = state.predecessor
    for i in (bottleneck, *inst.neighbours[bottleneck]):
        # A seen range had its whole predecessor chain added already, so stop there.
        while i != NO_PREDECESSOR and not seen[i]:
            seen[i] = 1
            found.append(i)
            i = predecessor[i]
    starts, ends, turn_of = inst.starts, inst.ends, state.turn_of
    first_step, last_step = starts[bottleneck], ends[bottleneck]
    return ([turn_of[i] for i in found],
            [turn_of[i] for i in found if ends[i] < first_step or starts[i] > last_step])


def _with_neighbour_turns(
    state: PlacementState, inst: Instance, turns: list[int], not_live: list[int]
) -> list[int]:
    seen = set(turns)
    wider = list(turns)
    for turn in not_live:
        for j in inst.neighbours[state.order[turn]]:
            if state.turn_of[j] not in seen:
                seen.add(state.turn_of[j])
                wider.append(state.turn_of[j])
    return wider
