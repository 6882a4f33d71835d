"""Operator order: dependencies, the least-peak search and its use by ``npuplan.plan``."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

from npuplan.api import plan
from npuplan.commands import validate_plan
from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import CpuOp, LoweredGraph
from npuplan.ir.types import DataType
from npuplan.schedule.moves.order import (demand_order, dependencies, is_topological, least_peak_order, order_peak_bytes,
                                    reordered)
from bench.random_graphs import network_bytes
from tests.unit.schedule.chains import conv, fm

SIZE = dict(accelerator_config="ethos-u55-64", system_config="Ethos_U55_Deep_Embedded", memory_mode="Shared_Sram",
            optimise="Size")


def _two_branches() -> LoweredGraph:
    """x -> a1 (wide) -> a2 (narrow) and x -> b1 (wide) -> b2 (narrow), the file interleaving the
    branches so that both wide maps are live at once; c joins the narrow ones (as its two inputs)."""
    x = fm("x", 16, 16, 8)
    a1, b1 = fm("a1", 16, 16, 64), fm("b1", 16, 16, 64)
    a2, b2 = fm("a2", 16, 16, 4), fm("b2", 16, 16, 4)
    ops = (conv("a1", x, a1, 1), conv("b1", x, b1, 1, seed=1), conv("a2", a1, a2, 1, seed=2),
           conv("b2", b1, b2, 1, seed=3))
    return LoweredGraph("branches", ops, (x,), (a2, b2))


def _sizes(graph: LoweredGraph) -> dict[str, int]:
    return {t.name: t.size_bytes for op in graph.ops for t in (op.ifm, op.ofm)}  # type: ignore[union-attr]


def test_dependencies_follow_the_data() -> None:
    assert dependencies(_two_branches()) == [frozenset(), frozenset(), frozenset({0}), frozenset({1})]


def test_the_search_runs_each_branch_to_its_narrow_end_before_the_next() -> None:
    graph = _two_branches()
    sizes = _sizes(graph)
    order = least_peak_order(graph, sizes)
    assert is_topological(graph, order)
    assert order in ((0, 2, 1, 3), (1, 3, 0, 2))
    file_peak = order_peak_bytes(graph, (0, 1, 2, 3), sizes)
    assert file_peak == 2048 + 2 * 16384  # x, a1 and b1 at b1's step
    # at most x, one wide map and one narrow one at a time
    assert order_peak_bytes(graph, order, sizes) == 2048 + 16384 + 1024


def test_a_chain_keeps_the_file_order() -> None:
    x, y, z, w = fm("x", 8, 8, 8), fm("y", 8, 8, 8), fm("z", 8, 8, 8), fm("w", 8, 8, 8)
    graph = LoweredGraph("chain", (conv("y", x, y), conv("z", y, z), conv("w", z, w)), (x,), (w,))
    assert least_peak_order(graph, _sizes(graph)) == (0, 1, 2)


def test_a_cpu_op_updating_a_variable_keeps_its_place_among_the_variable_s_readers() -> None:
    state = Tensor("state", (1, 1, 1, 8), DataType.INT8, is_variable=True)
    x, y, out = fm("x", 1, 1, 8), fm("y", 1, 1, 8), fm("out", 1, 1, 8)
    read = CpuOp(Op("ADD", (x, state), (y,)), "test")
    update = CpuOp(Op("ASSIGN_VARIABLE", (state, y), ()), "test")
    later = CpuOp(Op("ADD", (x, state), (out,)), "test")
    graph = LoweredGraph("variable", (read, update, later), (x,), (out,))
    deps = dependencies(graph)
    assert 0 in deps[1] and 1 in deps[2]


def test_reordered_is_the_same_graph_for_the_file_order() -> None:
    graph = _two_branches()
    assert reordered(graph, (0, 1, 2, 3)) is graph
    assert [op.name for op in reordered(graph, (0, 2, 1, 3)).ops] == ["a1", "a2", "b1", "b2"]


def test_plan_notes_and_validates_a_reordered_network(tmp_path: Path) -> None:
    """Seeded cells with interleaved branches: some plan in another order, and every plan validates
    with its ops in a topological order of the file's."""
    from npuplan.io.tflite import read_tflite
    from npuplan.lowering import lower

    reordered_seen = 0
    for seed in range(6):
        path = tmp_path / f"cells_{seed}.tflite"
        path.write_bytes(network_bytes(seed, layers=3, kinds=("cell",)))
        result = plan(path, **SIZE)
        validate_plan(result)
        reordered_seen += any("reordered" in note for note in result.schedule.notes)
        for concat_writes in (False, True):
            file_order = lower(read_tflite(path), result.arch.accelerator, concat_writes=concat_writes)
            if len(file_order.ops) == len(result.lowered.ops):
                break
        position = {id(op): k for k, op in enumerate(file_order.ops)}
        order = tuple(position[id(op)] for op in result.lowered.ops if id(op) in position)
        if len(order) == len(file_order.ops):  # the plan's ops are this lowering's, in some order
            assert is_topological(file_order, order)
    assert reordered_seen


def _unstacked_sequence(steps: int = 8) -> LoweredGraph:
    """An unstacked sequence as an exported LSTM has it: ``steps`` small copies of a tiny input
    made first in the file, then per step a wide map made from the step's copy and reduced to a
    tiny output; running every copy first holds them all across the wide maps."""
    x = fm("x", 1, 1, 16)
    copies = [fm(f"t{i}", 1, 1, 64) for i in range(steps)]
    wides = [fm(f"u{i}", 16, 16, 32) for i in range(steps)]
    outs = [fm(f"v{i}", 1, 1, 16) for i in range(steps)]
    ops = [conv(f"t{i}", x, copies[i], 1, seed=i) for i in range(steps)]
    for i in range(steps):
        ops += [conv(f"u{i}", copies[i], wides[i], 1, seed=i), conv(f"v{i}", wides[i], outs[i], 1, seed=i)]
    return LoweredGraph("sequence", tuple(ops), (x,), tuple(outs))


def test_the_demand_order_runs_each_copy_just_before_its_step() -> None:
    graph = _unstacked_sequence()
    sizes = _sizes(graph)
    demand = demand_order(graph)
    assert is_topological(graph, demand) and demand[:4] == (0, 8, 9, 1)  # t0, u0, v0, then t1 ...
    file_peak = order_peak_bytes(graph, tuple(range(len(graph.ops))), sizes)
    assert file_peak == 8 * 64 + 8192  # every copy held at u0's step
    # a beam of 4 frontiers fills with the cheap copies (myopic); the demand order is proposed too
    found = least_peak_order(graph, sizes, max_states=4)
    assert order_peak_bytes(graph, found, sizes) == order_peak_bytes(graph, demand, sizes) < file_peak


def _random_tree(seed: int, count: int = 7) -> LoweredGraph:
    """``count`` 1x1 convolutions, each reading the input or an earlier op's map, of random depths:
    the maps nothing reads are the outputs."""
    rng = random.Random(seed)
    maps = [fm("x", 4, 4, rng.choice((4, 16, 64)))]
    ops = []
    for i in range(count):
        out = fm(f"m{i}", 4, 4, rng.choice((4, 16, 64)))
        ops.append(conv(f"m{i}", rng.choice(maps), out, 1, seed=i))
        maps.append(out)
    read = {op.ifm.name for op in ops}
    return LoweredGraph("tree", tuple(ops), (maps[0],), tuple(m for m in maps[1:] if m.name not in read))


def test_an_exact_search_finds_the_least_peak_of_every_order() -> None:
    # the search stops early once no frontier can beat the file or demand order: exact (a beam
    # wide enough to hold every frontier), it still reaches the least peak of all the orders
    for seed in range(12):
        graph = _random_tree(seed)
        sizes = _sizes(graph)
        orders = [o for o in itertools.permutations(range(len(graph.ops))) if is_topological(graph, o)]
        least = min(order_peak_bytes(graph, o, sizes) for o in orders)
        found = least_peak_order(graph, sizes, max_states=10_000)
        assert order_peak_bytes(graph, found, sizes) == least, f"seed {seed}"


def _phases_beside_a_branch(phases: int = 4) -> LoweredGraph:
    """``phases`` twins (one input, each writing its box of one map: dilation phases) read by
    ``p``, beside a wide-then-narrow branch ``a1 -> a2`` that the file interleaves with them."""
    from dataclasses import replace as changed

    from npuplan.ir.shape import Shape4D

    x, whole, out = fm("x", 4, 4, 8), fm("whole", 4, 4 * phases, 8), fm("p", 4, 4, 8)
    wide, narrow = fm("a1", 16, 16, 64), fm("a2", 4, 4, 4)
    boxes = [changed(conv(f"box{i}", x, whole, 1, seed=i), ofm_write_offset=Shape4D(1, 0, 4 * i, 0),
                     ofm_write_shape=Shape4D(1, 4, 4, 8)) for i in range(phases)]
    ops = (conv("a1", x, wide, 1), *boxes[:2], conv("a2", wide, narrow, 1), *boxes[2:], conv("p", whole, out, 1))
    return LoweredGraph("phases", ops, (x,), (narrow, out))


def test_twins_run_in_file_order_and_the_search_stays_exact() -> None:
    """Writes of one map's boxes from one input (twins) are interchangeable: the search builds only
    the orders running them in file order, and still reaches the least peak of all the orders."""
    graph = _phases_beside_a_branch()
    sizes = {t.name: t.size_bytes for op in graph.ops for t in (op.ifm, op.ofm)}  # type: ignore[union-attr]
    orders = [o for o in itertools.permutations(range(len(graph.ops))) if is_topological(graph, o)]
    least = min(order_peak_bytes(graph, o, sizes) for o in orders)
    found = least_peak_order(graph, sizes, max_states=10_000)
    assert order_peak_bytes(graph, found, sizes) == least < order_peak_bytes(graph, tuple(range(7)), sizes)
    twins = [k for k in found if graph.ops[k].name.startswith("box")]
    assert twins == sorted(twins)


def test_the_order_memo_answers_a_search_it_has_seen() -> None:
    """Two lowerings the search reads alike (the same dependencies and maps, other op names) share
    one search; another beam width or other map sizes are another search."""
    from dataclasses import replace as changed

    from npuplan.schedule.moves.order import OrderMemo

    graph = _unstacked_sequence()
    renamed = changed(graph, ops=tuple(changed(op, name=f"other_{op.name}") for op in graph.ops))
    sizes, memo = _sizes(graph), OrderMemo()
    found = least_peak_order(graph, sizes, max_states=4, memo=memo)
    assert found == least_peak_order(graph, sizes, max_states=4) != tuple(range(len(graph.ops)))
    assert least_peak_order(renamed, sizes, max_states=4, memo=memo) == found and len(memo) == 1
    least_peak_order(graph, sizes, max_states=5, memo=memo)
    least_peak_order(graph, {**sizes, "t0": 1}, max_states=4, memo=memo)
    assert len(memo) == 3
