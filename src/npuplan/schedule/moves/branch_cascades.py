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

from npuplan.hw.memory import Architecture
from npuplan.schedule.pricing.assemble import total_cycles
from npuplan.schedule.model.decisions import CascadeSpan, Decisions, RollingBuffer, renumbered, spliced
from npuplan.schedule.model.network import Network
from npuplan.schedule.pricing.oracle import CostOracle
from npuplan.schedule.model.limits import size_trade
from npuplan.schedule.model.stripes import least_rolling_rows
from npuplan.schedule.model.inplace import inplace_outputs
from npuplan.schedule.moves.branch_runs import (
    Patch,
    Patches,
    Run,
    RowsNeeded,
    applied,
    candidate_runs,
    run_of,
    spliced_run,
)
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

# OFM stripe heights tried for every op of the run (at least the rows its readers step by).
STRIPE_ROWS = (1, 2, 4, 8)


# Forward passes over the branch points, and how close to the plan's peak (a fraction of it) the
# peak over a run's span must be for the run to be tried: lowering memory elsewhere buys nothing.
PASSES = 3
HOT_FRACTION = 0.9


def _rolling_bytes(patch: Patch) -> int:
    return sum(r.size_bytes for r in patch.cascade.rolling)


class _Search:
    """One network's search: its candidate runs and each decision set's usage, worked out once."""

    def __init__(
        self, net: Network, arch: Architecture, oracle: CostOracle, *, least: bool, free_bytes: int = 0,
        runs: dict[int, list[int]] | None = None,
    ) -> None:
        self.net, self.arch, self.oracle, self.least, self.free_bytes = net, arch, oracle, least, free_bytes
        self.runs = candidate_runs(net) if runs is None else runs
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
    ) -> tuple[Patch, TrialUsage] | None:
        """``branch_cascade`` of ``current`` as a patch, with its usage worked out from
        ``current``'s by redoing only the buffers of the maps, rolling buffers and weights its run
        touches (as ``cascades._span_peak`` does); ``found`` builds the decisions. With ``below``
        (time steps t0..t1 and a peak), None also when the run cannot peak below it there at any
        stripe rows (its rolling buffers at one row each), and its rolling buffers at the least
        rows these stripes give them (``least_rolling_rows``), left at that, when those cannot:
        they are sized (the costly stripe walk) only when their least bytes can."""
        run = run_of(self.net, current, s, e, rows)
        if run is None:
            return None
        patches = self.net.derived(Patches)
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

    def _bare(self, current: Decisions, run: Run) -> BareUsage:
        """``current``'s usage with ``run``'s cascade spliced in, but for its rolling buffers: the
        same at every stripe rows (memoised while ``current`` is the decisions tried on)."""
        if self._bares[0] is not current:
            self._bares = (current, {})
        key = (run.start, run.end, run.names)
        found = self._bares[1].get(key)
        if found is None:
            found = self._bares[1][key] = self._bare_usage(current, run)
        return found

    def _bare_usage(self, current: Decisions, run: Run) -> BareUsage:
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

    def found(self, current: Decisions, patch: Patch, usage: list[int] | None = None) -> Decisions:
        """``current`` with ``patch`` applied (its ``usage`` remembered when given)."""
        found = applied(current, patch)
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
        tried: dict[Patch, tuple[int, Decisions | None]] = {}  # stripe heights that make the same run
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

    The runs from joins (``candidate_runs``) are proposed in a second search beside one without them (the
    forward pass is greedy: a join's run taken early can block a better branch point's), when the
    network has any; the same rule chooses between the two."""
    without, with_joins = candidate_runs(net, joins=False), candidate_runs(net)
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
    """``with_branch_cascades``' search over ``runs`` (``candidate_runs``' candidates, with or without joins)."""
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
        found = spliced_run(net, dec, *step, rows_needed)
        if found is None:
            return None
        dec = found
    return dec
