"""The runs a branch cascade may take (``schedule.moves.branch_cascades`` searches them): which
maps of a contiguous run of NPU ops ``s..e`` can roll, the run widened to whole cascades, its
ops' stripe rows, and the patch it makes to a plan's decisions once its rolling buffers are sized
(``stripes.rolling_rows_needed``); worked out once per run of a network (``Network.derived``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.records import record
from npuplan.schedule.model.decisions import (
    NO_WEIGHT_BUFFER,
    CascadeSpan,
    Decisions,
    RollingBuffer,
    renumbered,
    spliced,
)
from npuplan.schedule.model.geometry import aligned_stripe_rows, is_cascadable
from npuplan.schedule.model.network import Network
from npuplan.schedule.model.stripes import least_rolling_rows, rolling_bytes, rolling_rows_needed
from npuplan.schedule.pricing.costing import rolling_format

RowsNeeded = Callable[[Sequence[NpuOp], Sequence[int], Collection[str]], dict[str, int]]

# Ops a branch cascade may take in, and how many ops past the last reader of its branch point it
# tries to extend to (to take in the ends of the branches).
MAX_BRANCH_CASCADE_OPS = 24
EXTRA_OPS = 6


def rolling_maps(net: Network, s: int, e: int) -> list[str]:
    """The maps of run ``s..e`` that can roll: written only by ops of the run, each writing whole
    rows (the whole map, or its slice of the depth of a concatenation; NHWC when the slices are
    not on 16-channel bricks, ``costing.rolling_format``), and read, from their first row, only by
    ops of the run (as IFM of the map's shape, or as an elementwise IFM2 row for row)."""
    writers: dict[str, list[NpuOp]] = {}
    for k in range(s, e + 1):
        writers.setdefault(net.npu_ops[k].ofm.name, []).append(net.npu_ops[k])
    found: list[str] = []
    for name, ops in writers.items():
        fm = net.fms.get(name)
        if fm is None or fm.whole_reason or not fm.consumers or not s <= fm.producer <= e:
            continue
        shape = ops[0].ofm.shape4d
        if fm.writers != len(ops):
            continue  # written outside the run too
        if not all(_writes_rows(op, shape) for op in ops):
            continue
        if all(s <= k <= e and _reads_rows(net.npu_ops[k], name, shape) for k in fm.consumers):
            found.append(name)
    return found


def _writes_rows(op: NpuOp, shape: Shape4D) -> bool:
    """Whether ``op`` writes whole rows of a map of ``shape``: all of it, or a depth slice of it."""
    offset = op.ofm_write_offset
    if offset is None:
        return op.ofm_write_shape is None and op.ofm_shape == shape
    box = op.ofm_write_shape or op.ofm_shape
    return offset.n == offset.h == offset.w == 0 and box.h == shape.h and box.w == shape.w


def _reads_rows(consumer: NpuOp, name: str, shape: Shape4D) -> bool:
    as_ifm = consumer.ifm.name == name
    as_ifm2 = consumer.ifm2 is not None and consumer.ifm2.name == name
    if as_ifm == as_ifm2:  # read twice, or not at all
        return False
    if as_ifm:
        return consumer.ifm_read_offset is None and consumer.ifm_shape == shape
    return (consumer.block_type is BlockType.ELEMENTWISE and consumer.ifm2_read_offset is None
            and consumer.ifm2_shape == shape and consumer.ofm_shape.h == shape.h)


def branch_cascade(net: Network, dec: Decisions, s: int, e: int, rows: int) -> Decisions | None:
    """``dec`` with ops ``s..e`` (widened to whole cascades where one crosses an end) run as one
    cascade of ``rows``-row stripes (each op at least the rows its readers step by), replacing the
    cascades inside the run; None when the run cannot be one (a CPU op inside, an op that cannot
    be striped, too many ops) or rolls nothing a chain cascade does not already roll."""
    found = spliced_run(net, dec, s, e, rows)
    return None if found is None else renumbered(found)


def spliced_run(
    net: Network, dec: Decisions, s: int, e: int, rows: int, rows_needed: RowsNeeded = rolling_rows_needed,
) -> Decisions | None:
    """``branch_cascade`` with the cascade ids left as they are (the search renumbers once, at
    the end: renumbering every trial would touch every cascade of the network), its rolling
    buffers sized by ``rows_needed`` (``rolling_rows_needed`` or a memo of it)."""
    patch = _run_patch(net, dec, s, e, rows, rows_needed)
    return None if patch is None else applied(dec, patch)


@record
class Patch:
    """What ``branch_cascade`` changes: the run's cascade, its ops' stripe rows, the staged maps."""

    cascade: CascadeSpan
    stripe: tuple[int, ...]
    staged_fms: frozenset[str]


@record(eq=False)
class Run:
    """A run ``branch_cascade`` can make one cascade, before its rolling buffers are sized: ops
    ``start..end`` in stripes of ``rows`` rows (each op at least the rows its readers in the run
    step by, ``steps``), the maps rolled and the staged maps kept."""

    start: int
    end: int
    rows: int
    steps: tuple[int, ...]
    names: tuple[str, ...]
    staged_fms: frozenset[str]

    def stripe(self, net: Network) -> tuple[int, ...]:
        """Each op's stripe rows (worked out only for the runs sized for real: most trials stop at
        the least peak their cascade can reach, which does not depend on them)."""
        ops = net.npu_ops[self.start:self.end + 1]
        return tuple(aligned_stripe_rows(op, max(self.rows, step)) for op, step in zip(ops, self.steps))


def _run_patch(
    net: Network, dec: Decisions, s: int, e: int, rows: int, rows_needed: RowsNeeded,
) -> Patch | None:
    run = run_of(net, dec, s, e, rows)
    return None if run is None else _sized(net, run, rows_needed)


def run_of(net: Network, dec: Decisions, s: int, e: int, rows: int) -> Run | None:
    """Run ``s..e`` at ``rows``-row stripes on ``dec``, or None (``branch_cascade``)."""
    s, e = widened(dec, s, e)
    frame = net.derived(_Frames).of(s, e)
    if frame is None:
        return None
    _, names, steps = frame
    if set(names) <= {r.tensor_name for c in dec.within(s, e) for r in c.rolling}:
        return None
    # a staged copy is copied before its first reader runs whole; a cascaded reader runs over the
    # cascade's span, so its input is read from the arena (as staging never proposes for it)
    staged = frozenset(n for n in dec.staged_fms if not any(s <= k <= e for k in net.fms[n].consumers))
    return Run(s, e, rows, steps, tuple(names), staged)


def _sized(net: Network, run: Run, rows_needed: RowsNeeded) -> Patch:
    """``run``'s patch, its rolling buffers sized by ``rows_needed`` (``rolling_rows_needed``, a
    memo of it, or ``least_rolling_rows``: a lower bound on their bytes)."""
    ops = net.npu_ops[run.start:run.end + 1]
    stripe = run.stripe(net)
    needed = rows_needed(ops, stripe, set(run.names))
    tensors = {op.ofm.name: op.ofm for op in ops}
    rolling = tuple(RollingBuffer(n, needed[n], rolling_bytes(tensors[n], needed[n], rolling_format(net, n)))
                    for n in run.names)
    return Patch(CascadeSpan(-1, run.start, run.end, rolling), stripe, run.staged_fms)


class Patches:
    """A network's runs sized, whatever decisions they are tried on (they read the run alone):
    the searches of a Size plan (with and without joins, pass after pass) try the same runs at
    the same stripe heights again and again (``Network.derived`` holds one per network)."""

    def __init__(self, net: Network) -> None:
        self.net = net
        self._sized: dict[tuple[object, ...], Patch] = {}
        self._one_row: dict[tuple[int, int, tuple[str, ...]], int] = {}

    def sized(self, run: Run, rows_needed: RowsNeeded, *, least: bool = False) -> Patch:
        """``_sized`` of ``run`` by ``rows_needed`` (a memo of ``rolling_rows_needed``), or with
        ``least``, by ``least_rolling_rows``."""
        key = (run.start, run.end, run.rows, run.names, run.staged_fms, least)
        found = self._sized.get(key)
        if found is None:
            found = self._sized[key] = _sized(self.net, run, least_rolling_rows if least else rows_needed)
        return found

    def one_row_bytes(self, run: Run) -> int:
        """Bytes of ``run``'s rolling buffers at one row each: the least any sizing gives them,
        whatever the stripe rows."""
        key = (run.start, run.end, run.names)
        found = self._one_row.get(key)
        if found is None:
            net = self.net
            tensors = {op.ofm.name: op.ofm for op in net.npu_ops[run.start:run.end + 1]}
            found = self._one_row[key] = sum(rolling_bytes(tensors[n], 1, rolling_format(net, n)) for n in run.names)
        return found


Frame = tuple[Sequence[NpuOp], list[str], tuple[int, ...]]


class _Frames:
    """What a run ``s..e`` (already widened) is, whatever the decisions: None when it cannot be
    one cascade (a CPU op inside, too many ops, an op that cannot be striped, nothing to roll),
    else its ops, the maps that can roll (``rolling_maps``) and the rows each op's readers in the
    run step by; worked out once per run of a network (``Network.derived``) for every search that
    tries it, at several stripe heights."""

    def __init__(self, net: Network) -> None:
        self.net = net
        self._found: dict[tuple[int, int], Frame | None] = {}

    def of(self, s: int, e: int) -> Frame | None:
        if (s, e) not in self._found:
            self._found[(s, e)] = self._frame(s, e)
        return self._found[(s, e)]

    def _frame(self, s: int, e: int) -> Frame | None:
        net = self.net
        if net.times[e] - net.times[s] != e - s or e - s + 1 > MAX_BRANCH_CASCADE_OPS:
            return None
        ops = net.npu_ops[s:e + 1]
        if not all(is_cascadable(op, fm_ifm2=True) for op in ops):
            return None
        names = rolling_maps(net, s, e)
        if not names:
            return None
        return ops, names, tuple(_reader_step(net, s, e, k) for k in range(s, e + 1))


def applied(dec: Decisions, patch: Patch) -> Decisions:
    s, e = patch.cascade.start, patch.cascade.end
    return spliced(
        dec, patch.cascade,
        ofm_rows=dec.ofm_rows[:s] + patch.stripe + dec.ofm_rows[e + 1:],
        weights=dec.weights[:s] + (NO_WEIGHT_BUFFER,) * (e - s + 1) + dec.weights[e + 1:],
        staged_fms=patch.staged_fms,
    )


def widened(dec: Decisions, s: int, e: int) -> tuple[int, int]:
    """Run ``s..e`` widened until no cascade of ``dec`` crosses either end."""
    if dec.ordered:  # disjoint cascades: only those holding op s or op e can cross
        while True:
            first, last = dec.cascade_of(s), dec.cascade_of(e)
            wider = min(s, first.start) if first else s, max(e, last.end) if last else e
            if wider == (s, e):
                return s, e
            s, e = wider
    crossing = True
    while crossing:
        crossing = False
        for c in dec.cascades:
            if c.start <= e and c.end >= s and not (s <= c.start and c.end <= e):
                s, e, crossing = min(s, c.start), max(e, c.end), True
    return s, e


def _reader_step(net: Network, s: int, e: int, k: int) -> int:
    """The most rows op ``k``'s readers inside run ``s..e`` step by (its least stripe height)."""
    fm = net.fms.get(net.npu_ops[k].ofm.name)
    return max((net.npu_ops[c].kernel.stride_y for c in (fm.consumers if fm else ()) if s <= c <= e), default=1)


def candidate_runs(net: Network, *, joins: bool = True) -> dict[int, list[int]]:
    """Candidate runs by their first op: from each NPU-made branch point's producer, the ends from
    its last reader to ``EXTRA_OPS`` ops beyond (ascending); and from the op just before a join
    (an elementwise op reading a second feature map made elsewhere, kept whole, and read by the
    join alone: a branch point's runs already reach a join it feeds), the ends from the join to
    ``EXTRA_OPS`` beyond: the join's own input and what follows it roll, as in Vela's cascades of an
    add over an upsampled map (a chain cascade stops at such a join)."""
    ends: dict[int, set[int]] = {}
    last_op = len(net.npu_ops) - 1
    for fm in net.fms.values():
        if fm.producer < 0 or len(fm.consumers) < 2 or fm.whole_reason:
            continue
        last = fm.last_reader
        ends.setdefault(fm.producer, set()).update(range(last, min(last + EXTRA_OPS, last_op) + 1))
    for k, op in enumerate(net.npu_ops if joins else ()):
        if k > 0 and _lone_second_input(net, k) and is_cascadable(op, fm_ifm2=True):
            ends.setdefault(k - 1, set()).update(range(k, min(k + EXTRA_OPS, last_op) + 1))
    return {start: sorted(found) for start, found in sorted(ends.items())}


def _lone_second_input(net: Network, k: int) -> bool:
    """Whether op ``k`` joins the map op ``k - 1`` makes with another feature map it alone reads."""
    op = net.npu_ops[k]
    if op.ifm2 is None:
        return False
    maps = [net.fms.get(t.name) for t in (op.ifm, op.ifm2)]
    if any(m is None for m in maps) or maps[0] is maps[1]:
        return False
    own = [m for m in maps if m is not None and m.producer == k - 1]
    other = [m for m in maps if m is not None and m.producer != k - 1]
    return len(own) == 1 and len(other) == 1 and other[0].consumers == (k,)
