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
from collections.abc import Collection, Iterator, Sequence

from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import NpuOp
from npuplan.schedule.model.geometry import input_rows
from npuplan.units import ALIGN_BYTES, BRICK_DEPTH, round_up


def _reads(op: NpuOp, rows: tuple[int, int]) -> Iterator[tuple[str, int, int]]:
    """``(tensor, first row, end row)`` of each feature-map input OFM rows ``rows`` of ``op`` read,
    in the tensor's own rows (a slice read in place starts at its offset)."""
    lo, hi = input_rows(op, op.ifm_shape, rows)
    if op.ifm_read_offset is None and op.ifm_shape != op.ifm.shape4d:  # a reshaped view: rows differ
        yield op.ifm.name, 0, op.ifm.shape4d.h
    else:
        shift = op.ifm_read_offset.h if op.ifm_read_offset is not None else 0
        yield op.ifm.name, lo + shift, hi + shift
    if op.ifm2 is not None and op.ifm2_shape is not None and not op.ifm2.is_constant:
        shift = op.ifm2_read_offset.h if op.ifm2_read_offset is not None else 0
        if op.ifm2_shape.h == op.ofm_shape.h and (op.ifm2_read_offset is not None
                                                   or op.ifm2_shape == op.ifm2.shape4d):
            yield op.ifm2.name, rows[0] + shift, rows[1] + shift
        else:
            yield op.ifm2.name, 0, op.ifm2.shape4d.h


def cascade_stripes(
    ops: Sequence[NpuOp], stripe_rows: Sequence[int], rolling: Collection[str],
) -> list[tuple[int, int, int]]:
    """``(op position, first OFM row, end row)`` of every stripe of the cascade ``ops`` (in the
    plan's order; ``stripe_rows`` the OFM rows each makes per stripe; ``rolling`` the names of the
    maps held in rolling buffers), in the order they run."""
    writers: dict[str, list[int]] = {}  # a map written in slices (a concatenation) has several
    for j, op in enumerate(ops):
        writers.setdefault(op.ofm.name, []).append(j)
    produced = [0] * len(ops)
    order: list[tuple[int, int, int]] = []

    def pull(j: int, end: int) -> None:
        op = ops[j]
        height = op.ofm_shape.h
        step = max(1, min(stripe_rows[j], height))
        while produced[j] < min(end, height):
            a = produced[j]
            b = min(a + step, height)
            for name, _lo, hi in _reads(op, (a, b)):
                for w in writers.get(name, ()):
                    pull(w, hi)
            order.append((j, a, b))
            produced[j] = b

    sinks = [j for j, op in enumerate(ops) if op.ofm.name not in rolling]
    turns = max(math.ceil(ops[j].ofm_shape.h / max(1, min(stripe_rows[j], ops[j].ofm_shape.h))) for j in sinks)
    for turn in range(1, turns + 1):
        for j in sinks:
            height, step = ops[j].ofm_shape.h, max(1, min(stripe_rows[j], ops[j].ofm_shape.h))
            pull(j, min(height, round_up(math.ceil(height * turn / turns), step)))
    return order


def rolling_rows_needed(
    ops: Sequence[NpuOp], stripe_rows: Sequence[int], rolling: Collection[str],
) -> dict[str, int]:
    """Rows each rolling buffer must hold under ``cascade_stripes``' order: at every read, from the
    first row read to the last row written (row r lives at slot r % rows, so nothing read later is
    overwritten), and at least one stripe of its producer."""
    made = [0] * len(ops)  # rows each op has written; a map written in slices has the most rows
    needed: dict[str, int] = {name: 1 for name in rolling}  # any of its writers has written
    writers: dict[str, list[int]] = {}
    for j, op in enumerate(ops):
        writers.setdefault(op.ofm.name, []).append(j)
    for j, a, b in cascade_stripes(ops, stripe_rows, rolling):
        op = ops[j]
        for name, lo, _hi in _reads(op, (a, b)):
            if name in needed:
                needed[name] = max(needed[name], max(made[w] for w in writers[name]) - lo)
        made[j] = b
        if op.ofm.name in needed:
            needed[op.ofm.name] = max(needed[op.ofm.name], b - min(made[w] for w in writers[op.ofm.name]))
    heights = {op.ofm.name: op.ofm.shape4d.h for op in ops}
    return {name: min(rows, heights[name]) for name, rows in needed.items()}


def rolling_bytes(tensor: Tensor, rows: int, fmt: str = "NHCWB16") -> int:
    """Bytes of a rolling buffer of ``rows`` rows of ``tensor`` in format ``fmt``."""
    shape = tensor.shape4d
    depth = round_up(shape.c, BRICK_DEPTH) if fmt == "NHCWB16" else shape.c
    return round_up(rows * shape.w * depth * tensor.dtype.size_bytes, ALIGN_BYTES)


class RollingRowsMemo:
    """``rolling_rows_needed`` remembered by the geometry it reads, for one search: the runs of a
    network's repeated cells (recurrent steps, chains of blocks) share one walk of their stripes.
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
    ``input_rows``), its maps named by ``local`` (first appearance, added as met)."""
    k = op.kernel
    ifm2: tuple[object, ...] | None = None
    if op.ifm2 is not None and op.ifm2_shape is not None and not op.ifm2.is_constant:
        ifm2 = (local.setdefault(op.ifm2.name, len(local)), op.ifm2_shape.h, op.ifm2.shape4d.h,
                op.ifm2_shape == op.ifm2.shape4d, None if op.ifm2_read_offset is None else op.ifm2_read_offset.h)
    return (local.setdefault(op.ofm.name, len(local)), op.ofm_shape.h, op.ofm.shape4d.h,
            local.setdefault(op.ifm.name, len(local)), op.ifm_shape.h, op.ifm.shape4d.h, op.ifm_shape == op.ifm.shape4d,
            None if op.ifm_read_offset is None else op.ifm_read_offset.h,
            k.stride_y, k.dilated_height, k.padding.top, op.upscale, ifm2)
