"""Random live ranges: every allocator is sound, never below the lower bound, HillClimb <= Greedy and
LinearAlloc (Greedy may lose to LinearAlloc when alignments differ: first-fit in urgency order can
push a 64-byte-aligned range up past a smaller one that LinearAlloc places after it)."""

from hypothesis import given, seed, settings
from hypothesis import strategies as st

from npuplan.memory import LiveRange, allocate, verify_allocation
from npuplan.options import TensorAllocator


@st.composite
def live_ranges(draw: st.DrawFn) -> list[LiveRange]:
    count = draw(st.integers(min_value=0, max_value=25))
    ranges = []
    for i in range(count):
        start = draw(st.integers(min_value=0, max_value=30))
        length = draw(st.integers(min_value=0, max_value=8))
        size = draw(st.integers(min_value=0, max_value=5000))
        alignment = draw(st.sampled_from([16, 16, 16, 64]))
        ranges.append(LiveRange(f"t{i}", start, start + length, size, alignment=alignment))
    return ranges


@seed(11)
@settings(max_examples=300, deadline=None)
@given(live_ranges())
def test_allocations_are_sound_and_hillclimb_never_worse_than_greedy_or_linear(ranges: list[LiveRange]) -> None:
    peaks = {}
    for allocator in TensorAllocator:
        allocation = allocate(ranges, allocator=allocator)
        assert verify_allocation(ranges, allocation) == []
        assert allocation.peak_bytes >= allocation.lower_bound_bytes
        peaks[allocator] = allocation.peak_bytes
    assert peaks[TensorAllocator.HILLCLIMB] <= min(peaks[TensorAllocator.GREEDY], peaks[TensorAllocator.LINEAR])
