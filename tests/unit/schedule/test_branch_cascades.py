"""Cascades through branches: the stripe order, rolling rows, and plans that take them."""

from __future__ import annotations

from pathlib import Path

from npuplan.api import plan
from npuplan.commands import validate_plan
from npuplan.ir.lowered import LoweredGraph
from npuplan.schedule.moves.branch_runs import branch_cascade, rolling_maps
from npuplan.schedule.model.network import build_network
from npuplan.schedule.model.decisions import max_decisions
from npuplan.schedule.model.stripes import cascade_stripes, rolling_rows_needed
from npuplan.schedule.model.usage import peak_bytes
from bench.random_graphs import network_bytes
from bench.command_graphs import add, arch, conv, fm

SIZE = dict(accelerator_config="ethos-u55-64", system_config="Ethos_U55_Deep_Embedded", memory_mode="Shared_Sram",
            optimise="Size")


def _residual() -> LoweredGraph:
    """x -> stem -> s; s -> a (3x3) -> b (3x3); add(b, s) -> y -> head: the stem's output s is
    read by two ops, so no chain cascade can roll it."""
    x = fm("x", 32, 16, 8)
    stem = conv("s", x, 16)
    a = conv("a", stem.ofm, 16, seed=1)
    b = conv("b", a.ofm, 16, seed=2)
    join = add("y", b.ofm, stem.ofm)
    head = conv("out", join.ofm, 8, k=1, seed=3)
    return LoweredGraph("residual", (stem, a, b, join, head), (x,), (head.ofm,))


def test_a_chain_pulls_each_producer_just_before_its_reader() -> None:
    graph = _residual()
    ops = graph.ops[1:3]  # a -> b, a chain
    order = cascade_stripes(ops, [1, 1], {"a"})  # type: ignore[arg-type]
    assert order[:3] == [(0, 0, 1), (0, 1, 2), (1, 0, 1)]  # b's first row reads a's rows 0..1
    assert rolling_rows_needed(ops, [1, 1], {"a"}) == {"a": 3}  # type: ignore[arg-type]


def test_a_branch_point_rolls_for_both_of_its_readers() -> None:
    graph = _residual()
    ops = graph.ops[:4]
    rows = rolling_rows_needed(ops, [1, 1, 1, 1], {"s", "a", "b"})  # type: ignore[arg-type]
    # the add reads s's row r after b made row r, which needed a's row r+1 and so s's rows up to
    # r+2: three rows of s held, as many as a's 3x3 window needs anyway
    assert rows == {"s": 3, "a": 3, "b": 1}
    assert [j for j, _, _ in cascade_stripes(ops, [1, 1, 1, 1], {"s", "a", "b"})].count(3) == 32  # type: ignore[arg-type]


def test_branch_cascade_rolls_the_branch_point_and_lowers_the_peak() -> None:
    net = build_network(_residual())
    whole = max_decisions(net, arch())
    assert rolling_maps(net, 0, 3) == ["s", "a", "b"]
    branched = branch_cascade(net, whole, 0, 3, 1)
    assert branched is not None and len(branched.cascades) == 1
    assert {r.tensor_name for r in branched.cascades[0].rolling} == {"s", "a", "b"}
    assert peak_bytes(net, branched) < peak_bytes(net, whole)
    chain = branch_cascade(net, whole, 1, 2, 1)  # a plain chain rolls 'a'...
    assert chain is not None and branch_cascade(net, chain, 1, 2, 1) is None  # ...and nothing more after


def test_size_plans_of_random_cells_validate(tmp_path: Path) -> None:
    seen = 0
    for seed in range(8):
        path = tmp_path / f"cells_{seed}.tflite"
        path.write_bytes(network_bytes(seed, layers=3, kinds=("cell", "residual")))
        result = plan(path, **SIZE)
        validate_plan(result)
        seen += "cascades through branches" in result.schedule.notes
    assert seen


def test_slices_read_in_place_inside_a_branch_cascade_pull_their_own_rows(tmp_path: Path) -> None:
    """Seeds whose Size plans once read a slice (at a row offset) of a map made in the same branch
    cascade before those rows existed (found by 150 random networks; the pull ignored the offset)."""
    for seed in (65, 79, 96, 106, 131):
        path = tmp_path / f"random_{seed}.tflite"
        path.write_bytes(network_bytes(seed, layers=6))
        validate_plan(plan(path, **SIZE))


def test_branch_cascade_drops_the_staged_copy_of_an_input_it_cascades() -> None:
    """Staging copies a map into the cache for its one reader's time step only; once a branch
    cascade runs that reader over the cascade's span, the copy would be gone before the reader is
    done (the replay found rows never written), so the reader reads the arena instead."""
    from dataclasses import replace

    from npuplan.api import make_options
    from npuplan.hw import build_architecture

    dedicated = build_architecture(make_options(accelerator_config="ethos-u65-256", system_config="Ethos_U65_High_End",
                                                memory_mode="Dedicated_Sram_384KB"))
    net = build_network(_residual())
    staged = replace(max_decisions(net, dedicated), staged_fms=frozenset({"x"}))
    branched = branch_cascade(net, staged, 0, 3, 1)
    assert branched is not None and branched.cascades[0].start == 0
    assert branched.staged_fms == frozenset()


def _upsampled_join() -> LoweredGraph:
    """x -> u (read by the join alone, made long before it); x -> a -> b; add(b, u) -> y -> out:
    no branch point reaches the join, and a chain cascade stops there (its second input is a map)."""
    x = fm("x", 32, 16, 8)
    up = conv("u", x, 16, k=1)
    a = conv("a", x, 16, seed=1)
    b = conv("b", a.ofm, 16, seed=2)
    join = add("y", b.ofm, up.ofm)
    head = conv("out", join.ofm, 8, k=1, seed=3)
    return LoweredGraph("upsampled_join", (up, a, b, join, head), (x,), (head.ofm,))


def test_a_join_over_a_lone_second_map_starts_a_run_at_its_own_input() -> None:
    from npuplan.schedule.moves.branch_runs import candidate_runs

    net = build_network(_upsampled_join())
    assert net.npu_ops[2].name == "b" and 3 in candidate_runs(net)[2]  # b, the join and beyond roll
    joined = branch_cascade(net, max_decisions(net, arch()), 2, 4, 1)
    assert joined is not None and {r.tensor_name for r in joined.cascades[0].rolling} == {"b", "y"}
    assert peak_bytes(net, joined) < peak_bytes(net, max_decisions(net, arch()))


def test_the_least_rows_bound_the_rows_the_stripe_walk_holds() -> None:
    """``least_rolling_rows`` (what the search asks before walking a run's stripes) never exceeds
    ``rolling_rows_needed`` (the walk), for every run of the two graphs at several stripe rows; the
    first stripe of a 3x3 reader with a row of padding reads two rows."""
    from itertools import product

    from npuplan.schedule.model.stripes import least_rolling_rows

    for graph in (_residual(), _upsampled_join()):
        net = build_network(graph)
        for s, e in product(range(len(graph.ops)), repeat=2):
            names = set(rolling_maps(net, s, e)) if s < e else set()
            if not names:
                continue
            ops = graph.ops[s:e + 1]
            for rows in product((1, 2, 5), repeat=len(ops)):
                least, walked = least_rolling_rows(ops, rows, names), rolling_rows_needed(ops, rows, names)
                assert least.keys() == walked.keys() and all(least[n] <= walked[n] for n in names)
    assert least_rolling_rows(_residual().ops[1:3], [1, 1], {"a"}) == {"a": 2}  # type: ignore[arg-type]


def test_a_runs_peak_from_its_two_maxima_is_the_trial_usages() -> None:
    """``BareUsage.peak_with`` (two maxima per span) gives ``TrialUsage.peak`` of the same usage
    with the rolling bytes added over the run's steps, for every span and run position."""
    from npuplan.schedule.moves.branch_usage import BareUsage, TrialUsage

    base = [5, 9, 2, 7, 7, 1, 8, 3]
    changes = [(1, 3, -4), (2, 6, 6), (5, 5, -8)]
    for ts in range(len(base)):
        for te in range(ts, len(base)):
            bare = BareUsage(TrialUsage(base, changes), ts, te)
            for t0 in range(len(base)):
                for t1 in range(t0, len(base)):
                    for extra in (0, 3, 11):
                        expected = TrialUsage(base, changes + [(ts, te, extra)]).peak(t0, t1)
                        assert bare.peak_with(t0, t1, extra) == expected
