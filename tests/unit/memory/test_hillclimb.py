"""The hill-climbing search on one journalled state."""

from npuplan.memory import HillClimbSettings
from npuplan.memory.hillclimb import hill_climb
from npuplan.memory.placement import make_instance, placed, priority_order

from bench.memory_instances import random_instances


def test_the_climb_never_ends_above_its_start_and_leaves_a_consistent_state() -> None:
    for ranges in random_instances(30, seed=5):
        inst = make_instance(ranges)
        start = placed(inst, priority_order(inst))
        start_peak = start.peak_bytes
        found = hill_climb(start, inst, target_bytes=0, settings=HillClimbSettings(max_iterations=300))
        assert found.peak_bytes <= start_peak and found.journal == []
        again = placed(inst, found.order)  # the climbed addresses are what its order places to
        assert (again.offsets, again.predecessor, again.peak_bytes) == (found.offsets, found.predecessor,
                                                                        found.peak_bytes)


def test_the_climb_stops_at_once_when_the_start_reaches_the_target() -> None:
    inst = make_instance(random_instances(6)[5])
    start = placed(inst, priority_order(inst))
    order = start.order[:]
    found = hill_climb(start, inst, target_bytes=start.peak_bytes, settings=HillClimbSettings())
    assert found.order == order
