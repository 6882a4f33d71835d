"""The bytes a feature-map access covers: the fast answers (the span and mask of a regular layout,
the mask of disjoint runs) against the bytes each interval lists, one by one; and the memory
model's read/write bookkeeping on hand-built accesses."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from npuplan.errors import ValidationError
from npuplan.regstream.events import FeatureMapAccess
from npuplan.regstream.footprint import fm_span, intervals, lattices, mask, regular, span
from npuplan.regstream.memory import Access, Region, Replay


@st.composite
def accesses(draw: st.DrawFn) -> FeatureMapAccess:
    """Boxes of NHWC and NHCWB16 feature maps: whole or part of the width and depth, rows in one
    tile or wrapping into tile 2, strides that are dense, padded or overlapping."""
    nhcwb16 = draw(st.booleans())
    element = draw(st.sampled_from([1, 1, 2]))
    height, width = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    depth = draw(st.integers(1, 40))
    full_width = width + draw(st.sampled_from([0, 0, 1, 3]))
    if nhcwb16:
        bricks = -(-(depth + draw(st.sampled_from([0, 0, 16]))) // 16)
        stride_x = 16 * element
        stride_c = full_width * stride_x + draw(st.sampled_from([0, 0, 16]))
        row = bricks * stride_c
    else:
        channels = depth + draw(st.sampled_from([0, 0, 8]))
        stride_x, stride_c = channels * element, element
        row = full_width * stride_x
    stride_y = row + draw(st.sampled_from([0, 0, 32, -row // 2]))
    height_0 = draw(st.integers(1, height))
    base0 = draw(st.integers(0, 64))
    base2 = draw(st.sampled_from([base0 + height_0 * stride_y, base0 + height_0 * stride_y + 48, 0]))
    return FeatureMapAccess(region=1, bases=(base0, 0, base2, 0), height_0=height_0, height=height, width=width,
                            depth=depth, stride_y=stride_y, stride_x=stride_x, stride_c=stride_c,
                            element_bytes=element, nhcwb16=nhcwb16)


def _bytes(starts: np.ndarray, ends: np.ndarray) -> set[int]:
    return {b for s, e in zip(starts.tolist(), ends.tolist()) for b in range(s, e)}


@seed(12)
@settings(max_examples=400, deadline=None)
@given(accesses())
def test_regular_layouts_masks_and_lattices_cover_exactly_the_listed_bytes(fm: FeatureMapAccess) -> None:
    starts, ends = intervals(fm)
    lo, hi = span(starts, ends)
    assert fm_span(fm) == (lo, hi)
    covered = _bytes(starts, ends)
    found = mask(starts, ends, lo, hi)
    if found is None:
        assert covered == set(range(lo, hi))
    else:
        assert found.shape == (hi - lo,) and set((np.flatnonzero(found) + lo).tolist()) == covered
    found = regular(fm)
    if found is not None:
        assert found[:2] == (lo, hi)
        assert found[2] is None and covered == set(range(lo, hi)) or found[2] is not None and found[2].shape == (
            hi - lo,) and set((np.flatnonzero(found[2]) + lo).tolist()) == covered
    seen = np.zeros(hi, dtype=bool)
    for run in lattices(fm):  # the strided views the memory model reads and writes through
        run.view(seen)[...] = True
    assert set(np.flatnonzero(seen).tolist()) == covered


def test_a_strided_access_reads_and_writes_only_its_runs():
    fm = FeatureMapAccess(region=1, bases=(4, 0, 0, 0), height_0=2, height=2, width=2, depth=3, stride_y=32,
                          stride_x=8, stride_c=1, element_bytes=1, nhcwb16=False)  # 3 of 8 channels
    replay = _replay()
    ofm = replay.fm(fm, "OFM")
    assert ofm.runs and (ofm.lo, ofm.hi) == (4, 47)
    replay.write(Access(1, 0, 36, None, "the first row and more"))
    with pytest.raises(ValidationError, match="reads byte 36 of scratch"):
        replay.read(ofm)
    replay.write(ofm)
    assert np.flatnonzero(replay.regions[1].written).tolist() == [*range(36), 36, 37, 38, 44, 45, 46]
    replay.read(ofm)
    assert replay.read_any == [False, True]  # the OFM read its own write, none of the first's other bytes
    with pytest.raises(ValidationError, match="reads byte 47 of scratch"):
        replay.read(Access(1, 44, 48, None, "a channel past the box"))
    assert ofm.overlaps(Access(1, 12, 13, None, "in a run")) and not ofm.overlaps(Access(1, 7, 12, None, "a gap"))


def _replay() -> Replay:
    return Replay({1: Region.empty("scratch", 256)}, where="test")


def test_a_read_of_unwritten_bytes_names_the_first():
    replay = _replay()
    replay.write(Access(1, 0, 16, None, "A"))
    covered = np.zeros(32, dtype=bool)
    covered[[3, 20]] = True
    with pytest.raises(ValidationError, match="reads byte 20 of scratch"):
        replay.read(Access(1, 0, 32, covered, "R"))


def test_overwriting_an_unread_write_fails_only_when_its_rest_is_read():
    replay = _replay()
    replay.write(Access(1, 0, 64, None, "A"))
    replay.write(Access(1, 0, 16, None, "B"))  # part of A, none of it read: an error if A's rest is read
    replay.read(Access(1, 0, 16, None, "read B"))
    with pytest.raises(ValidationError, match="B overwrote part of what A wrote"):
        replay.read(Access(1, 32, 48, None, "read A"))


def test_overwriting_a_write_once_any_of_it_was_read_is_allowed():
    replay = _replay()
    replay.write(Access(1, 0, 64, None, "A"))
    replay.read(Access(1, 0, 8, None, "read part of A"))
    replay.write(Access(1, 0, 16, None, "B"))
    replay.read(Access(1, 8, 64, None, "read the rest"))  # A's remaining bytes and B's


def test_the_same_tensor_rewritten_is_not_clobbering():
    replay = _replay()
    owner = ("ofm", 1)
    replay.write(Access(1, 0, 64, None, "A"), owner)
    replay.write(Access(1, 0, 16, None, "A again"), owner)
    replay.read(Access(1, 0, 64, None, "read"))


def test_a_sparse_write_leaves_the_gaps_unwritten():
    replay = _replay()
    covered = np.tile(np.array([True, False]), 16)
    replay.write(Access(1, 0, 32, covered, "every other byte"))
    replay.read(Access(1, 0, 32, covered, "the same bytes"))
    with pytest.raises(ValidationError, match="reads byte 1 of scratch"):
        replay.read(Access(1, 0, 2, None, "both"))


def test_a_constant_region_reads_as_written_before_and_after_a_write_into_it():
    replay = Replay({0: Region.empty("flash", 64, written=True), 1: Region.empty("scratch", 64)}, where="test")
    replay.read(Access(0, 0, 64, None, "weights"))
    replay.write(Access(0, 0, 16, None, "into the flash"))
    replay.write(Access(0, 0, 8, None, "again"))  # "into the flash" not read yet: clobbered if its rest is read
    replay.read(Access(0, 16, 64, None, "the constant rest"))
    with pytest.raises(ValidationError, match="again overwrote part of what into the flash wrote"):
        replay.read(Access(0, 8, 16, None, "the rest of the first write"))


def test_a_dma_copies_a_constant_region_whole():
    from npuplan.regstream.events import DmaEvent, Range

    replay = Replay({0: Region.empty("flash", 64, written=True), 1: Region.empty("scratch", 64)}, where="test")
    replay.dma(DmaEvent(0, Range(0, 16, 32), Range(1, 0, 32)))
    replay.read(Access(1, 0, 32, None, "the copy"))
    with pytest.raises(ValidationError, match="reads byte 32 of scratch"):
        replay.read(Access(1, 0, 33, None, "past the copy"))


def test_a_corrupt_stride_fails_on_its_span_before_any_mask_is_built():
    huge = FeatureMapAccess(region=1, bases=(0, 0, 0, 0), height_0=4, height=4, width=4, depth=8, stride_y=1 << 38,
                            stride_x=8, stride_c=1, element_bytes=1, nhcwb16=False)  # a 3 TB span
    with pytest.raises(ValidationError, match=r"OFM touches bytes 0\.\.824633720864 of scratch \(256 bytes\)"):
        _replay().fm(huge, "OFM")


def test_a_read_again_after_a_write_into_its_span_sees_the_write():
    replay = _replay()
    replay.write(Access(1, 0, 64, None, "A"))
    replay.read(Access(1, 0, 64, None, "read A"))
    replay.read(Access(1, 0, 64, None, "read A again"))  # settled: nothing new to read
    replay.write(Access(1, 32, 40, None, "B"))  # into the settled span: the next read must look again
    assert replay.read_any == [True, False]
    replay.read(Access(1, 0, 64, None, "read A and B"))
    assert replay.read_any == [True, True] and not replay.regions[1].unread.any()


@pytest.mark.parametrize("top,left", [(1, 1), (1, 0), (0, 1), (0, 0)])
def test_an_edge_padded_access_reads_the_edge_twice_through_the_right_tiles(top: int, left: int) -> None:
    """Vela's TILE padding (a half-pixel resize's phases): a 3x4 NHCWB16 map of 16 channels read
    as 4x5 with one row and one column repeated on the given sides, by tile bases and sizes alone.
    The bytes covered are the map's, each pixel by the element the padding repeats."""
    h, w, e = 3, 4, 1
    sx, sy = 16 * e, 16 * e * w
    bottom, right = (h - 1) * sy, (w - 1) * sx
    rows_0, width_0 = (1 if top else h), (1 if left else w)
    down, across = (0 if top else bottom), (0 if left else right)
    fm = FeatureMapAccess(region=1, bases=(0, across, down, down + across), height_0=rows_0, height=h + 1,
                          width=w + 1, depth=16, stride_y=sy, stride_x=sx, stride_c=16 * w, element_bytes=e,
                          nhcwb16=True, height_1=rows_0, width_0=width_0)
    starts, ends = intervals(fm)
    assert _bytes(starts, ends) == set(range(h * sy)) and fm_span(fm) == (0, h * sy) and regular(fm) is None
    seen = np.zeros(h * sy, dtype=bool)
    for run in lattices(fm):
        run.view(seen)[...] = True
    assert bool(seen.all())
    pixel = [[None] * (w + 1) for _ in range(h + 1)]  # the map's pixel each padded position reads
    for y in range(h + 1):
        for x in range(w + 1):
            upper, leftmost = y < rows_0, x < width_0  # tiles 0/1 above row rows_0 (height_1 == height_0)
            base = fm.bases[(0 if upper else 2) + (0 if leftmost else 1)]
            address = base + (y - (0 if upper else rows_0)) * sy + (x - (0 if leftmost else width_0)) * sx
            pixel[y][x] = (address // sy, address % sy // sx)
    assert pixel[0 if top else h][0 if left else w] == (0 if top else h - 1, 0 if left else w - 1)  # the corner
    assert pixel[1 if top else 0][1 if left else 0] == (0, 0)  # the map itself, from the padded side on
