"""The order a cascade runs its stripes in, and the rows each of its rolling buffers must hold.

A cascade is pulled from its sinks, the ops whose output is not a rolling buffer (a chain has one,
its last op; a cascade through branches has one per branch end). Before a stripe of an op runs,
each input made inside the cascade (rolling, or whole and also read later) is pulled until the
rows the stripe reads exist; sinks advance in turn by the
same fraction of their height, so every rolling buffer holds only the rows its slowest reader still
needs. The stream emits exactly this order (``commands.stream``), and the rows a rolling buffer
needs are read off it (``rolling_rows_needed``), so the two cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import NamedTuple

from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import NpuOp
from npuplan.schedule.model.geometry import RowWindow, row_window, window_rows
from npuplan.units import ALIGN_BYTES, BRICK_DEPTH, round_up


# How a stripe of an op reads one input map made inside its cascade (``_reads``): through the
# op's kernel window (``geometry.window_rows``), the OFM stripe's own rows, or fixed rows (the
# whole map), each shifted to the map's own rows where a slice is read in place.
_WINDOW, _SAME, _FIXED = 0, 1, 2


class _Read(NamedTuple):
    name: str
    writers: tuple[int, ...]  # positions in the cascade of the ops writing the map
    kind: int
    window: RowWindow | None  # ``_WINDOW``
    shift: int  # ``_WINDOW``, ``_SAME``: added to the rows read
    first: int  # ``_FIXED``: the rows read
    end: int


def _reads(op: NpuOp, writers: dict[str, list[int]]) -> tuple[_Read, ...]:
    """The feature-map inputs of ``op`` written by ops of its cascade (``writers``: map name ->
    their positions), and how a stripe reads each: a slice read in place starts at its offset; a
    reshaped view or an input broadcast along the rows is read whole."""
    found = []
    ifm = op.ifm
    if ifm.name in writers:
        if op.ifm_read_offset is None and op.ifm_shape != ifm.shape4d:  # a reshaped view: rows differ
            found.append(_Read(ifm.name, tuple(writers[ifm.name]), _FIXED, None, 0, 0, ifm.shape4d.h))
        else:
            shift = op.ifm_read_offset.h if op.ifm_read_offset is not None else 0
            found.append(_Read(ifm.name, tuple(writers[ifm.name]), _WINDOW, row_window(op, op.ifm_shape), shift, 0, 0))
    ifm2 = op.ifm2
    if ifm2 is not None and op.ifm2_shape is not None and not ifm2.is_constant and ifm2.name in writers:
        shift = op.ifm2_read_offset.h if op.ifm2_read_offset is not None else 0
        if op.ifm2_shape.h == op.ofm_shape.h and (op.ifm2_read_offset is not None or op.ifm2_shape == ifm2.shape4d):
            found.append(_Read(ifm2.name, tuple(writers[ifm2.name]), _SAME, None, shift, 0, 0))
        else:
            found.append(_Read(ifm2.name, tuple(writers[ifm2.name]), _FIXED, None, 0, 0, ifm2.shape4d.h))
    return tuple(found)


def _rows_read(read: _Read, a: int, b: int) -> tuple[int, int]:
    """Rows ``[first, end)`` of ``read``'s map that OFM rows ``[a, b)`` read."""
    if read.kind == _WINDOW:
        lo, hi = window_rows(read.window, a, b)  # type: ignore[arg-type]
        return lo + read.shift, hi + read.shift
    if read.kind == _SAME:
        return a + read.shift, b + read.shift
    return read.first, read.end


def cascade_stripes(
    ops: Sequence[NpuOp], stripe_rows: Sequence[int], rolling: Collection[str],
) -> list[tuple[int, int, int]]:
    """``(op position, first OFM row, end row)`` of every stripe of the cascade ``ops`` (in the
    plan's order; ``stripe_rows`` the OFM rows each makes per stripe; ``rolling`` the names of the
    maps held in rolling buffers), in the order they run."""
    return _walk(ops, stripe_rows, rolling, None)


def rolling_rows_needed(
    ops: Sequence[NpuOp], stripe_rows: Sequence[int], rolling: Collection[str],
) -> dict[str, int]:
    """Rows each rolling buffer must hold under ``cascade_stripes``' order: at every read, from the
    first row read to the last row written (row r lives at slot r % rows, so nothing read later is
    overwritten), and at least one stripe of its producer."""
    needed: dict[str, int] = {name: 1 for name in rolling}  # any of its writers has written
    _walk(ops, stripe_rows, rolling, needed)
    heights = {op.ofm.name: op.ofm.shape4d.h for op in ops}
    return {name: min(rows, heights[name]) for name, rows in needed.items()}


def least_rolling_rows(
    ops: Sequence[NpuOp], stripe_rows: Sequence[int], rolling: Collection[str],
) -> dict[str, int]:
    """Rows each rolling buffer holds at least under ``rolling_rows_needed``, without walking the
    stripes: the rows the first stripe of each reader in the cascade reads of it (every op runs
    its first stripe, and ``rolling_rows_needed`` holds at least those rows once its writers have
    made them), capped at the map's height. A lower bound: the search sizes a run's rolling buffers
    exactly only where these bytes leave it a chance to lower the peak."""
    writers: dict[str, list[int]] = {}
    for j, op in enumerate(ops):
        writers.setdefault(op.ofm.name, []).append(j)
    heights = [op.ofm_shape.h for op in ops]
    least = dict.fromkeys(rolling, 1)
    for j, op in enumerate(ops):
        first_end = max(1, min(stripe_rows[j], heights[j]))  # the first stripe's OFM rows [0, first_end)
        for read in _reads(op, writers):
            if read.name in least:
                lo, hi = _rows_read(read, 0, first_end)
                made = max(min(hi, heights[w]) for w in read.writers)  # its writers make at least these
                least[read.name] = max(least[read.name], made - lo)
    tops = {op.ofm.name: op.ofm.shape4d.h for op in ops}
    return {name: min(rows, tops[name]) for name, rows in least.items()}


def _walk(
    ops: Sequence[NpuOp], stripe_rows: Sequence[int], rolling: Collection[str], needed: dict[str, int] | None,
) -> list[tuple[int, int, int]]:
    """``cascade_stripes``; with ``needed`` (rolling map -> rows, updated in place), also the rows
    each rolling buffer holds at each stripe as it runs (``rolling_rows_needed``)."""
    writers: dict[str, list[int]] = {}  # a map written in slices (a concatenation) has several
    for j, op in enumerate(ops):
        writers.setdefault(op.ofm.name, []).append(j)
    # per op, how a stripe reads each input made in the cascade (``_rows_read``, spelt out: the walk
    # asks it for every stripe) and the map's name where its rolling buffer is being sized
    reads = [tuple((r.kind, r.window, r.shift, r.first, r.end, r.writers,
                    r.name if needed is not None and r.name in needed else None) for r in _reads(op, writers))
             for op in ops]
    heights = [op.ofm_shape.h for op in ops]
    steps = [max(1, min(rows, height)) for rows, height in zip(stripe_rows, heights)]
    # per op: its OFM's name and writers when it is a rolling buffer being sized, else None
    sized = [(op.ofm.name, writers[op.ofm.name]) if needed is not None and op.ofm.name in needed else None
             for op in ops]
    produced = [0] * len(ops)
    order: list[tuple[int, int, int]] = []

    def pull(j: int, end: int) -> None:
        height, step, own, its_reads = heights[j], steps[j], sized[j], reads[j]
        end = end if end < height else height
        while produced[j] < end:
            a = produced[j]
            b = a + step if a + step < height else height
            held = []  # (name, writers, first row read) of the rolling buffers being sized
            for kind, window, shift, first, last, by, name in its_reads:
                if kind == _WINDOW:  # ``geometry.window_rows``, inline
                    stride, dilated, top, up, rows = window  # type: ignore[misc]
                    lo = (a * stride - top) // up
                    lo = 0 if lo < 0 else rows - 1 if lo >= rows else lo
                    hi = -(-((b - 1) * stride + dilated - top) // up)
                    hi = lo + 1 if hi <= lo else rows if hi > rows else hi
                    lo, hi = lo + shift, hi + shift
                elif kind == _SAME:
                    lo, hi = a + shift, b + shift
                else:
                    lo, hi = first, last
                for w in by:
                    if produced[w] < hi and produced[w] < heights[w]:  # else the pull is a no-op
                        pull(w, hi)
                if name is not None:
                    held.append((name, by, lo))
            for name, by, lo in held:  # after every pull of the stripe: its writers are where it reads them
                made = produced[by[0]] if len(by) == 1 else max(produced[w] for w in by)
                if made - lo > needed[name]:  # type: ignore[index]
                    needed[name] = made - lo  # type: ignore[index]
            order.append((j, a, b))
            produced[j] = b
            if own is not None:
                needed[own[0]] = max(needed[own[0]], b - min(produced[w] for w in own[1]))  # type: ignore[index]

    sinks = [j for j, op in enumerate(ops) if op.ofm.name not in rolling]
    turns = max(math.ceil(heights[j] / steps[j]) for j in sinks)
    for turn in range(1, turns + 1):
        for j in sinks:
            pull(j, min(heights[j], round_up(math.ceil(heights[j] * turn / turns), steps[j])))
    return order


def rolling_bytes(tensor: Tensor, rows: int, fmt: str = "NHCWB16") -> int:
    """Bytes of a rolling buffer of ``rows`` rows of ``tensor`` in format ``fmt``."""
    shape = tensor.shape4d
    depth = round_up(shape.c, BRICK_DEPTH) if fmt == "NHCWB16" else shape.c
    return round_up(rows * shape.w * depth * tensor.dtype.size_bytes, ALIGN_BYTES)


class RollingRowsMemo:
    """``rolling_rows_needed`` remembered by the geometry it reads: the runs of a network's repeated
    cells (recurrent steps, chains of blocks) share one walk of their stripes, and so do the
    searches of one model's lowerings (a cost oracle holds one: ``CostOracle.rolling_rows``).
    Names enter the key only as the order they first appear in, so equal cells match."""

    def __init__(self) -> None:
        self._found: dict[tuple[object, ...], dict[int, int]] = {}
        # the last ``ops`` asked about, their geometry and local names: a search asks about one
        # run at several stripe heights in a row, passing the same sequence
        self._last: tuple[Sequence[NpuOp] | None, tuple[object, ...], dict[str, int]] = (None, (), {})

    def __call__(self, ops: Sequence[NpuOp], stripe_rows: Sequence[int], rolling: Collection[str]) -> dict[str, int]:
        if self._last[0] is not ops:
            local: dict[str, int] = {}
            self._last = (ops, tuple(_geometry(op, local) for op in ops), local)
        _, shapes, local = self._last
        if any(name not in local for name in rolling):
            return rolling_rows_needed(ops, stripe_rows, rolling)
        key = (shapes, tuple(stripe_rows), frozenset(local[name] for name in rolling))
        if key not in self._found:
            rows = rolling_rows_needed(ops, stripe_rows, rolling)
            self._found[key] = {local[name]: n for name, n in rows.items()}
        found = self._found[key]
        return {name: found[local[name]] for name in rolling}


def _geometry(op: NpuOp, local: dict[str, int]) -> tuple[object, ...]:
    """Everything of ``op`` that ``cascade_stripes`` and ``rolling_rows_needed`` read (``_reads``,
    ``row_window``), its maps named by ``local`` (first appearance, added as met)."""
    k = op.kernel
    ifm2: tuple[object, ...] | None = None
    if op.ifm2 is not None and op.ifm2_shape is not None and not op.ifm2.is_constant:
        ifm2 = (local.setdefault(op.ifm2.name, len(local)), op.ifm2_shape.h, op.ifm2.shape4d.h,
                op.ifm2_shape == op.ifm2.shape4d, None if op.ifm2_read_offset is None else op.ifm2_read_offset.h)
    return (local.setdefault(op.ofm.name, len(local)), op.ofm_shape.h, op.ofm.shape4d.h,
            local.setdefault(op.ifm.name, len(local)), op.ifm_shape.h, op.ifm.shape4d.h, op.ifm_shape == op.ifm.shape4d,
            None if op.ifm_read_offset is None else op.ifm_read_offset.h,
            k.stride_y, k.dilated_height, k.padding.top, op.upscale, ifm2)
