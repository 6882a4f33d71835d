"""``assemble.total_cycles_each`` reuses the first decision set's costings wherever another's cannot
differ (``costing.differing_ops``): its totals must be ``total_cycles``' of each set, whichever comes
first; the memoised whole-map buffers (``usage.fast_buffers``) must be the ones worked out anew; and
weights chosen again (``pareto.rebuffered``, memoised on the decisions without their weight plans)
must be what ``propose_weight_buffering`` chooses for the decisions with any weight plans."""

from __future__ import annotations

from dataclasses import replace
from itertools import permutations

from npuplan.hw import build_architecture
from npuplan.options import PlanOptions
from npuplan.schedule.model.decisions import Decisions, max_decisions
from npuplan.schedule.model.limits import Limits
from npuplan.schedule.model.network import Network, build_network
from npuplan.schedule.model.usage import fast_buffers, fm_buffers
from npuplan.schedule.moves.weights import propose_weight_buffering
from npuplan.schedule.pricing.assemble import total_cycles, total_cycles_each
from npuplan.schedule.pricing.cost_adapter import default_oracle
from npuplan.schedule.pricing.costing import differing_ops
from npuplan.schedule.moves.choice_memo import ChoiceMemo
from npuplan.schedule.search.pareto import rebuffered
from npuplan.schedule.search.strategy import cascade_search

from bench.schedule_graphs import network

OPTIONS = PlanOptions(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                      memory_mode="Shared_Sram", arena_cache_size_bytes=24307)


def _decision_sets() -> tuple[Network, list[Decisions]]:
    """A network and decision sets differing in stripes, cascades and weight plans: the max
    schedule, a cascaded plan under a tight budget, and each with its weights chosen in room."""
    graph = network([("conv", 64, 1, 1), ("conv", 16, 3, 1), ("residual", 96, 1, 1), ("residual", 16, 1, 1)],
                    h=28, w=8)
    arch = build_architecture(OPTIONS)
    net, oracle = build_network(graph), default_oracle(arch)
    plain = max_decisions(net, arch)
    cascaded = cascade_search(net, arch, OPTIONS, oracle, Limits(24307))
    assert cascaded.cascades and cascaded.ofm_rows != plain.ofm_rows
    found = [plain, cascaded]
    found += [propose_weight_buffering(net, d, arch, oracle, 10**6) for d in found]
    found.append(replace(plain, ofm_rows=(1, *plain.ofm_rows[1:])))
    return net, found


def test_totals_reusing_the_first_sets_costings_are_each_sets_own() -> None:
    net, decs = _decision_sets()
    arch = build_architecture(OPTIONS)
    oracle = default_oracle(arch)
    want = {d: total_cycles(net, d, arch, oracle) for d in decs}
    assert len(set(want.values())) > 2  # the sets do cost differently
    for order in permutations(decs, 3):
        assert total_cycles_each(net, list(order), arch, oracle) == [want[d] for d in order]


def test_differing_ops_name_the_ops_whose_costings_may_differ() -> None:
    net, (plain, cascaded, *_) = _decision_sets()
    assert differing_ops(net, plain, plain) == []
    assert differing_ops(net, plain, replace(plain, fast_fms=frozenset())) is None
    spans = {i for c in cascaded.cascades for i in range(c.start, c.end + 1)}
    assert spans <= set(differing_ops(net, plain, cascaded) or ())


def test_whole_map_buffers_from_the_memo_are_the_ones_worked_out_anew() -> None:
    net, decs = _decision_sets()
    for dec in decs + decs:  # the second round from the memo
        assert fast_buffers(net, dec)[:len(fm_buffers(net, dec))] == fm_buffers(net, dec)


def test_weights_chosen_again_read_nothing_of_the_weight_plans_they_replace() -> None:
    net, decs = _decision_sets()
    arch = build_architecture(OPTIONS)
    oracle = default_oracle(arch)
    memo = ChoiceMemo()
    plain, cascaded, plain_buffered, cascaded_buffered, _ = decs
    assert plain_buffered.weights != plain.weights and cascaded_buffered.weights != cascaded.weights
    for limit in (0, 24307, 10**6):
        for first, second in ((plain, plain_buffered), (cascaded, cascaded_buffered)):
            want = propose_weight_buffering(net, second, arch, oracle, limit)
            assert propose_weight_buffering(net, first, arch, oracle, limit) == want
            assert rebuffered(net, first, arch, oracle, limit, memo) == want
            assert rebuffered(net, second, arch, oracle, limit, memo) == want  # from the memo
    assert len(memo.rechosen) == 6
