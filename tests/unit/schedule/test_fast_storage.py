from __future__ import annotations

from itertools import combinations

from npuplan.hw import build_architecture
from npuplan.options import PlanOptions
from npuplan.schedule import plan_schedule
from npuplan.schedule.moves.fast_storage import candidate_fms
from npuplan.schedule.model.network import build_network
from npuplan.schedule.model.decisions import max_decisions
from npuplan.schedule.moves.placement_groups import Candidate, choose, groups, solve_exact, solve_greedy

from .chains import conv_chain

LAYERS = [(16, 1), (32, 1), (32, 2), (32, 1), (64, 2)]


def _u65(budget: int | None) -> PlanOptions:
    return PlanOptions(accelerator_config="ethos-u65-256", system_config="Ethos_U65_High_End",
                       memory_mode="Dedicated_Sram_384KB", arena_cache_size_bytes=budget)


def _fits(chosen: set[str], cands: list[Candidate], usage: list[int], limit: int) -> bool:
    total = list(usage)
    for c in cands:
        if c.name in chosen:
            for t in range(c.start, c.end + 1):
                total[t] += c.size_bytes
    return max(total) <= limit


def test_groups_split_at_gaps_in_time() -> None:
    cands = [Candidate("a", 0, 2, 1, 1), Candidate("b", 2, 4, 1, 1), Candidate("c", 6, 7, 1, 1)]
    assert [[c.name for c in g] for g in groups(cands)] == [["a", "b"], ["c"]]


def test_exact_matches_brute_force() -> None:
    cands = [Candidate(f"f{i}", i % 4, i % 4 + 2, 100 + 37 * i, 10 + (7 * i) % 13) for i in range(8)]
    usage, limit = [50] * 8, 420
    best = max(
        (sum(c.score_cycles for c in s) for k in range(len(cands) + 1) for s in combinations(cands, k)
         if _fits({c.name for c in s}, cands, usage, limit)),
    )
    picked = solve_exact(cands, usage, limit)
    assert _fits(set(picked), cands, usage, limit)
    assert sum(c.score_cycles for c in cands if c.name in picked) == best


def test_greedy_stays_within_limit() -> None:
    cands = [Candidate(f"f{i}", i, i + 3, 90, 5 + i) for i in range(30)]
    picked = solve_greedy(cands, [0] * 40, 200)
    assert picked and _fits(set(picked), cands, [0] * 40, 200)


def test_choose_keeps_what_always_fits_and_evicts_what_never_fits() -> None:
    cands = [Candidate("small", 0, 1, 10, 1), Candidate("huge", 0, 1, 1000, 99)]
    assert choose(cands, [0, 0], 100) == frozenset({"small"})


def test_candidates_exclude_network_boundaries() -> None:
    net = build_network(conv_chain(LAYERS, h=32, w=32))
    names = {fm.name for fm in candidate_fms(net, max_decisions(net, build_architecture(_u65(None))))}
    assert names == {"t0", "t1", "t2", "t3"}


def test_dedicated_sram_moves_feature_maps_to_sram_and_speeds_up() -> None:
    graph = conv_chain(LAYERS, h=32, w=32)
    roomy = plan_schedule(graph, build_architecture(_u65(None)), _u65(None))
    none = plan_schedule(graph, build_architecture(_u65(0)), _u65(0))
    sram = {n for n, p in roomy.placements.items() if p.area.name.lower() == "sram"}
    assert {"t0", "t1"} <= sram and "input" not in sram and "t4" not in sram
    assert roomy.total_npu_cycles < none.total_npu_cycles
    assert none.sram_peak_bytes == 0


def test_tight_cache_keeps_a_subset_within_budget() -> None:
    graph = conv_chain(LAYERS, h=32, w=32)
    budget = 20_000
    s = plan_schedule(graph, build_architecture(_u65(budget)), _u65(budget))
    assert 0 < s.sram_peak_bytes <= budget


def test_allocation_overshoot_evicts_feature_maps_until_within_budget() -> None:
    from dataclasses import replace

    from npuplan.schedule.pricing.cost_adapter import default_oracle
    from npuplan.schedule.search.planner import _evict_for_allocation

    options = _u65(12_000)
    arch = build_architecture(options)
    net = build_network(conv_chain(LAYERS, h=32, w=32))
    dec = max_decisions(net, arch)
    crammed = replace(dec, fast_fms=frozenset(fm.name for fm in candidate_fms(net, dec)))
    s = _evict_for_allocation(net, crammed, arch, options, default_oracle(arch), 12_000, ())
    assert s.sram_peak_bytes <= 12_000
