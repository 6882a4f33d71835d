"""Order-based placement: the journalled state, its peak heap and incremental re-placement."""

from npuplan.memory import LiveRange
from npuplan.memory.placement import NO_PREDECESSOR, Instance, make_instance, place_again, placed

from bench.memory_instances import random_instances


def _instance(index: int = 5) -> Instance:
    return make_instance(random_instances(index + 1)[index])


def test_peak_and_bottleneck_are_the_highest_end_lowest_index_first() -> None:
    inst = make_instance([LiveRange("a", 0, 1, 32), LiveRange("b", 2, 3, 32), LiveRange("c", 0, 3, 16)])
    state = placed(inst, [0, 1, 2])
    assert state.offsets == [0, 0, 32]
    assert state.top() == (48, 2)
    state = placed(inst, [2, 0, 1])
    assert state.top() == (48, 0)  # a and b both end at 48: the lower index is the bottleneck


def test_an_empty_placement_peaks_at_zero() -> None:
    assert placed(make_instance([]), []).top() == (0, NO_PREDECESSOR)


def test_place_again_gives_what_placing_the_whole_order_gives() -> None:
    inst = _instance()
    state = placed(inst, list(range(len(inst))))
    state.swap(3, len(inst) - 2)
    state.swap(0, 7)
    assert place_again(state, inst, [3, len(inst) - 2, 0, 7])
    fresh = placed(inst, state.order)
    assert (state.offsets, state.predecessor, state.peak_bytes) == (fresh.offsets, fresh.predecessor, fresh.peak_bytes)


def test_rollback_restores_the_state_a_refused_move_left_half_done() -> None:
    inst = _instance()
    state = placed(inst, list(range(len(inst))))
    state.commit()
    before = (state.order[:], state.turn_of[:], state.offsets[:], state.predecessor[:], state.top())
    state.swap(1, len(inst) - 1)
    refused = not place_again(state, inst, [1, len(inst) - 1], give_up_above=0)
    state.rollback()
    assert refused and state.journal == []
    assert (state.order, state.turn_of, state.offsets, state.predecessor, state.top()) == before


def test_commit_drops_stale_heap_entries_once_they_pile_up() -> None:
    inst = _instance()
    state = placed(inst, list(range(len(inst))))
    for _ in range(5 * len(inst) + 64):
        state.move(0, state.offsets[0] + 16)
    state.commit()
    assert len(state.tops) == len(inst)
    assert state.peak_bytes == max(o + s for o, s in zip(state.offsets, inst.sizes_bytes))
