"""Cascades through branches: a run of ops from a branch point to where its branches end, striped
together, with rolling buffers on every branch.

Chain cascades (``schedule.cascades``) stop at a branch point: a map read by two ops stays whole.
Here a contiguous run of NPU ops ``s..e`` (the operator order puts a cell's ops next to each other,
``schedule.order``) runs as one cascade whose maps roll whenever every reader is in the run: the
branch point itself, each branch's intermediate maps, and the inputs of a residual add or an
elementwise join (read as IFM2, row for row). Maps read after the run, and the concatenation the
branch ends write their slices into, stay whole. The stripes run in the order
``stripes.cascade_stripes`` gives, which also sizes the rolling buffers exactly.

``with_branch_cascades`` proposes such runs at each branch point of a Size plan, from the smallest
run that makes the branch point roll to a few ops beyond, in several stripe heights, and keeps
those that lower the plan's fast-storage peak. Its ops
read their weights in place: Size spends memory on weights only below the peak afterwards.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence

from npuplan.hw.memory import Architecture
from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.records import record
from npuplan.schedule.pricing.assemble import total_cycles
from npuplan.schedule.model.decisions import (
    NO_WEIGHT_BUFFER,
    CascadeSpan,
    Decisions,
    RollingBuffer,
    renumbered,
    spliced,
)
from npuplan.ir.shape import Shape4D
from npuplan.schedule.pricing.costing import rolling_format
from npuplan.schedule.model.geometry import aligned_stripe_rows, is_cascadable
from npuplan.schedule.model.network import Network
from npuplan.schedule.pricing.oracle import CostOracle
from npuplan.schedule.model.limits import size_trade
from npuplan.schedule.model.stripes import least_rolling_rows, rolling_bytes, rolling_rows_needed
from npuplan.schedule.model.inplace import inplace_outputs
from npuplan.schedule.moves.branch_usage import BareUsage, SplicedView, TrialUsage
from npuplan.schedule.model.usage import (
    fast_buffers,
    fm_buffers,
    inplace_group,
    inplace_mates,
    rolling_buffers,
    usage_by_time,
    weight_buffers,
)

log = logging.getLogger(__name__)

RowsNeeded = Callable[[Sequence[NpuOp], Sequence[int], Collection[str]], dict[str, int]]

# Ops a branch cascade may take in, and how many ops past the last reader of its branch point it
# tries to extend to (to take in the ends of the branches).
MAX_BRANCH_CASCADE_OPS = 24
EXTRA_OPS = 6
# OFM stripe heights tried for every op of the run (at least the rows its readers step by).
STRIPE_ROWS = (1, 2, 4, 8)


def rolling_maps(net: Network, s: int, e: int) -> list[str]:
    """The maps of run ``s..e`` that can roll: written only by ops of the run, each writing whole
    rows (the whole map, or its slice of the depth of a concatenation; NHWC when the slices are
    not on 16-channel bricks, ``costing.rolling_format``), and read, from their first row, only by ops of the run (as IFM of the map's shape,
    or as an elementwise IFM2 row for row)."""
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
    found = _spliced_run(net, dec, s, e, rows)
    return None if found is None else renumbered(found)


def _spliced_run(
    net: Network, dec: Decisions, s: int, e: int, rows: int, rows_needed: RowsNeeded = rolling_rows_needed,
) -> Decisions | None:
    """``branch_cascade`` with the cascade ids left as they are (the search renumbers once, at
    the end: renumbering every trial would touch every cascade of the network), its rolling
    buffers sized by ``rows_needed`` (``rolling_rows_needed`` or a memo of it)."""
    patch = _run_patch(net, dec, s, e, rows, rows_needed)
    return None if patch is None else _applied(dec, patch)


@record
class _Patch:
    """What ``branch_cascade`` changes: the run's cascade, its ops' stripe rows, the staged maps."""

    cascade: CascadeSpan
    stripe: tuple[int, ...]
    staged_fms: frozenset[str]


@record(eq=False)
class _Run:
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
) -> _Patch | None:
    run = _run(net, dec, s, e, rows)
    return None if run is None else _sized(net, run, rows_needed)


def _run(net: Network, dec: Decisions, s: int, e: int, rows: int) -> _Run | None:
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
    return _Run(s, e, rows, steps, tuple(names), staged)


def _sized(net: Network, run: _Run, rows_needed: RowsNeeded) -> _Patch:
    """``run``'s patch, its rolling buffers sized by ``rows_needed`` (``rolling_rows_needed``, a
    memo of it, or ``least_rolling_rows``: a lower bound on their bytes)."""
    ops = net.npu_ops[run.start:run.end + 1]
    stripe = run.stripe(net)
    needed = rows_needed(ops, stripe, set(run.names))
    tensors = {op.ofm.name: op.ofm for op in ops}
    rolling = tuple(RollingBuffer(n, needed[n], rolling_bytes(tensors[n], needed[n], rolling_format(net, n)))
                    for n in run.names)
    return _Patch(CascadeSpan(-1, run.start, run.end, rolling), stripe, run.staged_fms)


class _Patches:
    """A network's runs sized, whatever decisions they are tried on (they read the run alone):
    the searches of a Size plan (with and without joins, pass after pass) try the same runs at
    the same stripe heights again and again (``Network.derived`` holds one per network)."""

    def __init__(self, net: Network) -> None:
        self.net = net
        self._sized: dict[tuple[object, ...], _Patch] = {}
        self._one_row: dict[tuple[int, int, tuple[str, ...]], int] = {}

    def sized(self, run: _Run, rows_needed: RowsNeeded, *, least: bool = False) -> _Patch:
        """``_sized`` of ``run`` by ``rows_needed`` (a memo of ``rolling_rows_needed``), or with
        ``least``, by ``least_rolling_rows``."""
        key = (run.start, run.end, run.rows, run.names, run.staged_fms, least)
        found = self._sized.get(key)
        if found is None:
            found = self._sized[key] = _sized(self.net, run, least_rolling_rows if least else rows_needed)
        return found

    def one_row_bytes(self, run: _Run) -> int:
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


def _applied(dec: Decisions, patch: _Patch) -> Decisions:
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


def _runs(net: Network, *, joins: bool = True) -> dict[int, list[int]]:
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


# Forward passes over the branch points, and how close to the plan's peak (a fraction of it) the
# peak over a run's span must be for the run to be tried: lowering memory elsewhere buys nothing.
PASSES = 3
HOT_FRACTION = 0.9


def _rolling_bytes(patch: _Patch) -> int:
    return sum(r.size_bytes for r in patch.cascade.rolling)


class _Search:
    """One network's search: its candidate runs and each decision set's usage, worked out once."""

    def __init__(
        self, net: Network, arch: Architecture, oracle: CostOracle, *, least: bool, free_bytes: int = 0,
        runs: dict[int, list[int]] | None = None,
    ) -> None:
        self.net, self.arch, self.oracle, self.least, self.free_bytes = net, arch, oracle, least, free_bytes
        self.runs = _runs(net) if runs is None else runs
        self.rows_needed = oracle.rolling_rows  # shared by every search through the oracle
        self._usage: dict[int, tuple[Decisions, list[int]]] = {}  # id -> (decisions kept alive, usage)
        self._peak: dict[int, tuple[Decisions, int]] = {}  # id -> (decisions kept alive, peak)
        # id -> (decisions kept alive, their in-place pairs, and those pairs' ``inplace_mates``)
        self._owner: dict[int, tuple[Decisions, dict[str, str], dict[str, list[str]]]] = {}
        self._cycles: dict[int, tuple[Decisions, int]] = {}
        # what a run takes out of the decisions it is tried on, for its stripe heights (one at a time)
        self._taken: tuple[Decisions | None, dict[tuple[int, int], tuple[list[str], dict[str, str],
                                                                       list[tuple[int, int, int]]]]] = (None, {})
        # a run's usage on the decisions it is tried on, but for its rolling buffers (``_bare``)
        self._bares: tuple[Decisions | None, dict[tuple[int, int, tuple[str, ...]], BareUsage]] = (None, {})

    def usage(self, dec: Decisions) -> list[int]:
        if id(dec) not in self._usage:
            self._usage[id(dec)] = (dec, usage_by_time(self.net, fast_buffers(self.net, dec)))
        return self._usage[id(dec)][1]

    def trial(
        self, current: Decisions, s: int, e: int, rows: int, *, below: tuple[int, int, int] | None = None,
    ) -> tuple[_Patch, TrialUsage] | None:
        """``branch_cascade`` of ``current`` as a patch, with its usage worked out from
        ``current``'s by redoing only the buffers of the maps, rolling buffers and weights its run
        touches (as ``cascades._span_peak`` does); ``found`` builds the decisions. With ``below``
        (time steps t0..t1 and a peak), None also when the run cannot peak below it there at any
        stripe rows (its rolling buffers at one row each), and its rolling buffers at the least
        rows these stripes give them (``least_rolling_rows``), left at that, when those cannot:
        they are sized (the costly stripe walk) only when their least bytes can."""
        run = _run(self.net, current, s, e, rows)
        if run is None:
            return None
        patches = self.net.derived(_Patches)
        if current.staged_fms:
            patch = patches.sized(run, self.rows_needed)
            return patch, TrialUsage(self.usage(self.found(current, patch)), [])
        bare = self._bare(current, run)
        if below is not None:
            t0, t1, peak = below
            if bare.peak_with(t0, t1, patches.one_row_bytes(run)) >= peak:
                return None
            least = patches.sized(run, self.rows_needed, least=True)
            if bare.peak_with(t0, t1, _rolling_bytes(least)) >= peak:
                return least, bare.with_rolling(least.cascade)
        patch = patches.sized(run, self.rows_needed)
        return patch, bare.with_rolling(patch.cascade)

    def _bare(self, current: Decisions, run: _Run) -> BareUsage:
        """``current``'s usage with ``run``'s cascade spliced in, but for its rolling buffers: the
        same at every stripe rows (memoised while ``current`` is the decisions tried on)."""
        if self._bares[0] is not current:
            self._bares = (current, {})
        key = (run.start, run.end, run.names)
        found = self._bares[1].get(key)
        if found is None:
            found = self._bares[1][key] = self._bare_usage(current, run)
        return found

    def _bare_usage(self, current: Decisions, run: _Run) -> BareUsage:
        net = self.net
        s, e = run.start, run.end
        names, kept, changes = self._taken_out(current, s, e)
        # the run's ops read their weights in place: the patched side has no weight buffers there
        view = SplicedView(current, CascadeSpan(-1, s, e, tuple(RollingBuffer(n, 1, 0) for n in run.names)))
        changes = changes + [(b.start, b.end, b.size_bytes) for b in fm_buffers(net, view, names, owner=kept)]
        return BareUsage(TrialUsage(self.usage(current), changes), net.times[s], net.times[e])

    def _taken_out(self, current: Decisions, s: int, e: int) -> tuple[list[str], dict[str, str],
                                                                       list[tuple[int, int, int]]]:
        """For run ``s..e`` on ``current``: the maps whose buffers it may change (closed under the
        in-place pairs), the pairs that stay, and the buffers it takes out (negative bytes)."""
        if self._taken[0] is not current:
            self._taken = (current, {})
        found = self._taken[1].get((s, e))
        if found is not None:
            return found
        net = self.net
        if id(current) not in self._owner:
            pairs = inplace_outputs(net, current)
            self._owner[id(current)] = (current, pairs, inplace_mates(pairs))
        _, owner, mates = self._owner[id(current)]
        touched = {t.name for op in net.npu_ops[s:e + 1] for t in (op.ifm, op.ifm2, op.ofm) if t is not None}
        names = [n for n in inplace_group(owner, touched, mates=(mates,)) if n in net.fms]
        # the pairs of the maps the run's ops make go (those ops now cascade); only the pairs among
        # ``names`` are read (the group is closed under them), not the network's every pair
        kept = {out: owner[out] for out in names if out in owner and not s <= net.fms[out].producer <= e}
        taken = [(b.start, b.end, -b.size_bytes)
                 for b in (fm_buffers(net, current, names, owner=owner) + rolling_buffers(net, current.within(s, e))
                           + weight_buffers(net, current, range(s, e + 1)))]
        found = self._taken[1][(s, e)] = (names, kept, taken)
        return found

    def found(self, current: Decisions, patch: _Patch, usage: list[int] | None = None) -> Decisions:
        """``current`` with ``patch`` applied (its ``usage`` remembered when given)."""
        found = _applied(current, patch)
        if usage is not None:
            self._usage[id(found)] = (found, usage)
        return found

    def peak(self, dec: Decisions, span: tuple[int, int] | None = None) -> int:
        """The fast-storage peak of ``dec``, over the time span of ops ``span`` if given."""
        usage = self.usage(dec)
        if span is None:
            if id(dec) not in self._peak:
                self._peak[id(dec)] = (dec, max(usage, default=0))
            return self._peak[id(dec)][1]
        return max(usage[self.net.times[span[0]]:self.net.times[span[1]] + 1], default=0)

    def cycles(self, dec: Decisions) -> int:
        if id(dec) not in self._cycles:
            self._cycles[id(dec)] = (dec, total_cycles(self.net, dec, self.arch, self.oracle))
        return self._cycles[id(dec)][1]

    def improve_at(self, current: Decisions, start: int) -> tuple[Decisions, tuple[int, int, int] | None]:
        """The runs from ``start`` and stripe heights that lower the peak over their span, and no
        run, chosen among as Size chooses (or the least peak, with ``least``)."""
        span = (start, self.runs[start][-1])
        here = self.peak(current, span)
        if here < HOT_FRACTION * self.peak(current):
            return current, None
        t0, t1 = self.net.times[span[0]], self.net.times[span[1]]
        options: list[tuple[int, int, tuple[int, int, int] | None, Decisions]] = []
        tried: dict[_Patch, tuple[int, Decisions | None]] = {}  # stripe heights that make the same run
        for e in self.runs[start]:
            for rows in STRIPE_ROWS:
                trial = self.trial(current, start, e, rows, below=(t0, t1, here))
                if trial is None:  # nothing ``trial`` drops a run for depends on its stripe rows
                    break
                patch, usage = trial
                if patch not in tried:
                    peak = usage.peak(t0, t1)
                    tried[patch] = peak, self.found(current, patch, usage.full()) if peak < here else None
                peak, found = tried[patch]
                if found is not None:
                    options.append((peak, self.cycles(found), (start, e, rows), found))
        if not options:
            return current, None
        if self.least:
            _, _, step, chosen = min(options, key=lambda o: (o[0], o[1]))
            return chosen, step
        options.append((here, self.cycles(current), None, current))
        _, _, step, chosen = options[size_trade([(m, c) for m, c, _, _ in options], free_bytes=self.free_bytes)]
        return chosen, step


def with_branch_cascades(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, *, least: bool = False,
    free_bytes: int = 0,
) -> Decisions:
    """``dec`` with the branch cascades that lower its fast-storage peak (Size; with ``least``,
    the least peak whatever the cycles, for the floor plan).

    Forward, each branch point whose runs span steps near the plan's peak chooses among the runs
    and stripe heights that lower the peak over their span, and no run, as Size chooses (two cells
    may share the plan's peak: neither alone lowers it); passes repeat while they find runs, as
    the peak moves. Backward, a run whose removal leaves the plan's peak where it is goes again
    (it only costs cycles). Last, Size's rule (``limits.size_trade``, peaks up to ``free_bytes``
    counting as the least) chooses between the result and ``dec``.

    The runs from joins (``_runs``) are proposed in a second search beside one without them (the
    forward pass is greedy: a join's run taken early can block a better branch point's), when the
    network has any; the same rule chooses between the two."""
    without, with_joins = _runs(net, joins=False), _runs(net)
    plain = _branch_search(net, dec, arch, oracle, least=least, free_bytes=free_bytes, runs=without)
    if with_joins == without:
        return plain
    joined = _branch_search(net, dec, arch, oracle, least=least, free_bytes=free_bytes, runs=with_joins)
    search = _Search(net, arch, oracle, least=least, free_bytes=free_bytes, runs=with_joins)
    figures = [(search.peak(d), search.cycles(d)) for d in (plain, joined)]
    if least:
        return joined if figures[1] < figures[0] else plain
    return (plain, joined)[size_trade(figures, free_bytes=free_bytes)]


def _branch_search(
    net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, *, least: bool, free_bytes: int,
    runs: dict[int, list[int]],
) -> Decisions:
    """``with_branch_cascades``' search over ``runs`` (``_runs``' candidates, with or without joins)."""
    search = _Search(net, arch, oracle, least=least, free_bytes=free_bytes, runs=runs)
    steps: list[tuple[int, int, int]] = []
    current = dec
    for _ in range(PASSES):
        found = len(steps)
        for start in search.runs:
            current, step = search.improve_at(current, start)
            if step is not None:
                steps.append(step)
        if len(steps) == found:
            break
    if not steps:
        return dec
    peak = search.peak(current)
    for i in reversed(range(len(steps))):
        fewer = _replayed(net, dec, steps[:i] + steps[i + 1:], search.rows_needed)
        if fewer is not None and search.peak(fewer) <= peak:
            steps, current = steps[:i] + steps[i + 1:], fewer
    if current is dec:
        return dec
    figures = [(search.peak(d), search.cycles(d)) for d in (dec, current)]
    if not least and size_trade(figures, free_bytes=free_bytes) == 0:
        return dec
    log.info("%d branch cascades: peak %d -> %d bytes", len(steps), figures[0][0], figures[1][0])
    return renumbered(current)


def _replayed(net: Network, dec: Decisions, steps: list[tuple[int, int, int]],
              rows_needed: RowsNeeded) -> Decisions | None:
    """``dec`` with the branch cascades ``steps`` (run start, end, stripe rows), or None when one
    no longer applies; ``rows_needed`` sizes the rolling buffers (the search's memo)."""
    for step in steps:
        found = _spliced_run(net, dec, *step, rows_needed)
        if found is None:
            return None
        dec = found
    return dec
