"""Size strategy pieces: in-place elementwise buffers, one-row producers, weight room per segment."""

from __future__ import annotations

from npuplan.hw import build_architecture
from npuplan.ir.lowered import BlockType, LoweredGraph, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.options import Optimise, PlanOptions
from npuplan.schedule import plan_schedule
from npuplan.schedule.moves.cascades import Segment, segment_rows
from npuplan.schedule.model.inplace import inplace_outputs
from npuplan.schedule.model.network import build_network
from npuplan.schedule.model.decisions import max_decisions
from npuplan.schedule.model.usage import fast_buffers, fm_buffers, inplace_group, usage_by_time

from .chains import conv, conv_chain, fm

SIZE = PlanOptions(accelerator_config="ethos-u55-64", system_config="Ethos_U55_Deep_Embedded",
                   memory_mode="Shared_Sram", optimise=Optimise.SIZE)


def _add(name: str, a, b, out) -> NpuOp:  # type: ignore[no-untyped-def]
    return NpuOp(name=name, tflite_type="ADD", op_type="Add", block_type=BlockType.ELEMENTWISE,
                 ifm=a, ifm_shape=Shape4D.of(a.shape), ofm=out, ofm_shape=Shape4D.of(out.shape),
                 ifm2=b, ifm2_shape=Shape4D.of(b.shape), elementwise="ADD")


def residual() -> LoweredGraph:
    """input -> conv t0 -> conv t1 -> add(t1, t0) = t2 -> conv out: t1 dies at the add."""
    x, t0, t1, t2, y = fm("input", 16, 16, 16), fm("t0", 16, 16, 16), fm("t1", 16, 16, 16), fm("t2", 16, 16, 16), \
        fm("out", 16, 16, 16)
    ops = (conv("t0", x, t0), conv("t1", t0, t1, seed=1), _add("t2", t1, t0, t2), conv("out", t2, y, seed=2))
    return LoweredGraph("residual", ops, (x,), (y,))


def test_overwritten_input_shares_one_buffer_and_subsets_agree() -> None:
    net = build_network(residual())
    dec = max_decisions(net, build_architecture(SIZE))
    usage = usage_by_time(net, fast_buffers(net, dec))
    assert usage[net.times[2]] == net.fms["t0"].size_bytes + net.fms["t1"].size_bytes
    owner = inplace_outputs(net, dec)
    assert inplace_group(owner, {"t2"}) == {"t1", "t2"}  # t0 has two readers: never overwritten
    assert fm_buffers(net, dec, inplace_group(owner, {"t1"})) == \
        [b for b in fast_buffers(net, dec) if b.name == "t1"]


def test_one_row_producers_make_smaller_rolling_buffers() -> None:
    net = build_network(conv_chain([(16, 1), (16, 1), (16, 2)], h=32, w=32))
    assert segment_rows(net, 0, 2, 2, minimal=True) == (1, 1, 2)
    assert segment_rows(net, 0, 2, 2, minimal=False) == (4, 4, 2)


def test_segment_weight_room() -> None:
    cascade = Segment(0, 1, (1, 1), (), 1000, 500, ((100, 50), (50, 40)))
    assert cascade.cycles_within(None) == 500
    assert cascade.cycles_within(1060) == 460
    assert cascade.cycles_within(1120) == 450  # the exact best set: the 100-byte buffer saves more alone
    assert cascade.cycles_within(1200) == 410
    # saving per byte would take the 60-byte buffer first and leave room for nothing else
    three = Segment(0, 2, (1, 1, 1), (), 1000, 500, ((60, 40), (50, 30), (50, 30)))
    assert three.cycles_within(1100) == 440 and three.cycles_within(1110) == 430
    single = Segment(0, 0, (8,), (), 1000, 500, ((100, 50), (50, 40)))
    assert single.cycles_within(1060) == 460 and single.cycles_within(1100) == 450


def test_size_plan_on_residual_fits_its_reported_peak() -> None:
    graph = residual()
    schedule = plan_schedule(graph, build_architecture(SIZE), SIZE)
    net = build_network(graph)
    assert schedule.sram_peak_bytes <= 2 * net.fms["t0"].size_bytes  # three FMs meet at the add


def test_size_gives_up_memory_only_for_disproportionate_speed() -> None:
    from pathlib import Path

    from npuplan.io.tflite import read_tflite
    from npuplan.lowering import lower
    from npuplan.schedule.moves.cascade_split import plan_cascades
    from npuplan.schedule.pricing.cost_adapter import default_oracle

    arch = build_architecture(SIZE)
    model = Path(__file__).resolve().parents[2] / "data" / "ds_cnn_kws.tflite"
    net = build_network(lower(read_tflite(model), arch.accelerator))
    start, oracle = max_decisions(net, arch), default_oracle(arch)
    _, least = plan_cascades(net, start, arch, oracle, 1 << 30, Optimise.SIZE)
    _, stubborn = plan_cascades(net, start, arch, oracle, 1 << 30, Optimise.SIZE, memory_weight=1000.0)
    _, traded = plan_cascades(net, start, arch, oracle, 1 << 30, Optimise.SIZE, memory_weight=3.0)
    assert stubborn == least < traded <= least * 4 // 3


def test_size_choice_between_searches_uses_the_same_trade() -> None:
    """A strictly smaller but far slower plan (another search's) does not displace the traded one."""
    from pathlib import Path

    from npuplan.io.tflite import read_tflite
    from npuplan.lowering import lower
    from npuplan.schedule.pricing.assemble import total_cycles
    from npuplan.schedule.search.floor import floor_decisions
    from npuplan.schedule.pricing.cost_adapter import default_oracle
    from npuplan.schedule.model.usage import peak_bytes
    from npuplan.schedule.model.limits import Limits, size_trade
    from npuplan.schedule.search.strategy import cascade_search

    arch = build_architecture(SIZE)
    model = Path(__file__).resolve().parents[2] / "data" / "ds_cnn_kws.tflite"
    net = build_network(lower(read_tflite(model), arch.accelerator))
    oracle = default_oracle(arch)
    strict = floor_decisions(net, max_decisions(net, arch), arch, oracle)
    traded = cascade_search(net, arch, SIZE, oracle, Limits(1 << 30))
    figures = [(peak_bytes(net, d), total_cycles(net, d, arch, oracle)) for d in (strict, traded)]
    assert figures[0][0] < figures[1][0] and figures[0][1] > 2 * figures[1][1]
    assert size_trade(figures) == 1 and size_trade(figures[::-1]) == 0
    assert size_trade(figures, memory_weight=1000.0) == 0


def test_size_keeps_the_rolling_buffers_of_unaligned_maps_packed() -> None:
    """Size stores maps whose depth is not a multiple of 16 NHWC; cascaded, their rolling buffers
    stay NHWC too (8 channels take 8 bytes a pixel, not a 16-channel brick's 16)."""
    from npuplan.schedule.pricing.costing import rolling_format
    from npuplan.schedule.model.geometry import rolling_buffer_bytes

    graph = conv_chain([(8, 1), (8, 1), (4, 2)], h=48, w=48, c=8)
    packed, bricks = build_network(graph, pack_unaligned=True), build_network(graph)
    assert rolling_format(packed, "t0") == "NHWC" and rolling_format(bricks, "t0") == "NHCWB16"
    producer, consumer = graph.ops[0], graph.ops[1]
    assert isinstance(producer, NpuOp) and isinstance(consumer, NpuOp)
    nhwc = rolling_buffer_bytes(producer, 4, consumer, 1, "NHWC")
    assert rolling_buffer_bytes(producer, 4, consumer, 1) == 2 * nhwc
    schedule = plan_schedule(graph, build_architecture(SIZE), SIZE)
    rolled = [r for c in schedule.cascades for r in c.rolling_buffers]
    assert rolled and all(r.size_bytes == r.rows * 48 * 8 for r in rolled)  # packed rows of 48 x 8 bytes


def test_size_weight_buffers_never_raise_the_allocated_peak() -> None:
    """A CPU op's input and output (12 KiB each) set the peak; the NPU cascade after it fits in the
    input's dead 12 KiB with its rolling buffers, but not with every weight buffer as well: Size
    keeps only the buffers the allocation has room for (YOLOv5's focus: SPACE_TO_DEPTH, convs)."""
    from npuplan.ir.graph import Op
    from npuplan.ir.lowered import CpuOp

    arch = build_architecture(SIZE)
    for c1, c2 in ((16, 32), (24, 32)):  # without the check: 24720 and 26288 bytes
        x, s, a, b, y = fm("x", 64, 64, 3), fm("s", 32, 32, 12), fm("a", 32, 32, c1), fm("b", 16, 16, c2), \
            fm("y", 16, 16, 8)
        ops = (CpuOp(Op("SPACE_TO_DEPTH", (x,), (s,)), "not on the NPU"), conv("a", s, a),
               conv("b", a, b, stride=2, seed=1), conv("y", b, y, k=1, seed=2))
        schedule = plan_schedule(LoweredGraph("focus", ops, (x,), (y,)), arch, SIZE)
        assert schedule.sram_peak_bytes == 2 * 64 * 64 * 3  # the CPU op's two maps
        assert any(so.weight_buffer_bytes for so in schedule.ops)  # the buffers that fit are kept


def test_size_trade_counts_peaks_up_to_the_free_bytes_as_the_least() -> None:
    from npuplan.schedule.model.limits import size_trade

    figures = [(0, 1000), (5000, 400)]  # on a cache the least peak is 0: any memory is "infinitely" more
    assert size_trade(figures) == 0
    assert size_trade(figures, free_bytes=5000) == 1  # both within the free bytes: the faster
    assert size_trade(figures, free_bytes=4000) == 0  # 25% over them is worth 75% of cycles; 60% saved is not


SIZE_ON_CACHE = PlanOptions(accelerator_config="ethos-u65-256", system_config="Ethos_U65_High_End",
                            memory_mode="Dedicated_Sram_384KB", optimise=Optimise.SIZE)


def test_size_on_a_cache_spends_the_minimal_schedules_peak_on_speed() -> None:
    """Dedicated_Sram Size: the least peak is 0 (every map may stay in the arena), but Size's limit
    is the rolling buffers of the cascades of Vela's minimal schedule (here the chain, whose maps
    exceed the 18 KiB input one op must hold whole), and the plan within it is faster than the plan
    that keeps nothing in the cache."""
    from npuplan.schedule.pricing.assemble import total_cycles
    from npuplan.schedule.moves.fast_storage import size_cascades
    from npuplan.schedule.pricing.cost_adapter import default_oracle
    from npuplan.schedule.model.usage import peak_bytes

    arch = build_architecture(SIZE_ON_CACHE)
    graph = conv_chain([(16, 1), (16, 1), (16, 1), (16, 1)], h=48, w=48)
    net, oracle = build_network(graph, pack_unaligned=True), default_oracle(arch)
    bare = max_decisions(net, arch)
    cascaded, limit = size_cascades(net, bare, arch, oracle, arch.arena_cache_size_bytes)
    assert cascaded.cascades and 0 < limit == peak_bytes(net, cascaded) < sum(fm.size_bytes for fm in net.fms.values())
    # every op makes one row at a time, the last one too: the smallest rolling buffers (Vela's
    # minimal stripes; a last op of 4 rows doubled op_abs's buffer on U65-256 Size)
    assert all(cascaded.ofm_rows[k] == 1 for c in cascaded.cascades for k in range(c.start, c.end + 1))
    schedule = plan_schedule(graph, arch, SIZE_ON_CACHE)
    assert 0 < schedule.sram_peak_bytes <= limit
    assert sum(float(o.cost.total_cycles) for o in schedule.ops) < total_cycles(net, bare, arch, oracle)


def test_size_on_a_cache_keeps_no_rolling_buffers_above_the_whole_maps_floor() -> None:
    """A chain whose whole maps are small (a 1 KiB input, a 2 KiB output) but whose cascades would
    roll 64-channel maps: Vela's minimal schedule keeps no rolling buffers larger than the maps one
    op must hold whole, so Size on a cache does not cascade it and keeps the cache empty."""
    from npuplan.schedule.moves.fast_storage import size_cascades, whole_floor_bytes
    from npuplan.schedule.pricing.cost_adapter import default_oracle

    arch = build_architecture(SIZE_ON_CACHE)
    graph = conv_chain([(64, 1), (64, 1), (8, 2)], h=32, w=32, c=1)
    net = build_network(graph, pack_unaligned=True)
    assert whole_floor_bytes(net) == max(net.fms["input"].size_bytes, net.fms["t2"].size_bytes)
    cascaded, limit = size_cascades(net, max_decisions(net, arch), arch, default_oracle(arch), 1 << 20)
    assert cascaded.cascades == () and limit == 0
    assert plan_schedule(graph, arch, SIZE_ON_CACHE).sram_peak_bytes == 0


def test_size_on_a_cache_keeps_unaligned_maps_in_bricks() -> None:
    """Packing 8-channel maps NHWC saves arena bytes, which Size counts only when the arena is the
    fast storage; off-chip (Dedicated_Sram) it saves nothing Size counts. (Its cycles: since the cost
    model follows Vela 5.2.0's default core, a packed 8-channel map read in 8-deep blocks is one burst
    run per block, so off-chip the packed maps are the faster ones; the legacy core, which never saw a
    run, had it the other way round.)"""
    from npuplan.schedule.pricing.assemble import total_cycles
    from npuplan.schedule.pricing.cost_adapter import default_oracle
    from npuplan.schedule.search.planner import packs_unaligned

    cache = build_architecture(SIZE_ON_CACHE)
    assert packs_unaligned(build_architecture(SIZE), SIZE) and not packs_unaligned(cache, SIZE_ON_CACHE)
    assert not packs_unaligned(cache, PlanOptions(accelerator_config="ethos-u65-256"))
    graph = conv_chain([(8, 1), (8, 1), (8, 1)], h=32, w=32, c=8)
    oracle = default_oracle(cache)
    packed, bricks = build_network(graph, pack_unaligned=True), build_network(graph)
    assert total_cycles(packed, max_decisions(packed, cache), cache, oracle) < \
        total_cycles(bricks, max_decisions(bricks, cache), cache, oracle)


def test_the_whole_maps_floor_counts_a_concatenation_written_in_slices() -> None:
    """Two convolutions write the halves of a concatenation that a third reads: the map has two
    writers, so its first writer must hold it whole (Vela: ConcatSliceWrite requires the full OFM)."""
    from dataclasses import replace

    from npuplan.schedule.moves.fast_storage import whole_floor_bytes

    from .chains import conv, fm

    x, cat, y = fm("input", 16, 16, 16), fm("cat", 16, 16, 32), fm("out", 8, 8, 16)
    halves = [replace(conv(f"half{i}", x, fm(f"h{i}", 16, 16, 16), seed=i), ofm=cat, ofm_shape=Shape4D.of(cat.shape),
                      ofm_write_offset=Shape4D(0, 0, 0, 16 * i), ofm_write_shape=Shape4D(1, 16, 16, 16))
              for i in range(2)]
    graph = LoweredGraph("cat", (*halves, conv("out", cat, y, stride=2, seed=2)), (x,), (y,))
    net = build_network(graph)
    assert net.fms["cat"].writers == 2
    assert whole_floor_bytes(net) == net.fms["input"].size_bytes + net.fms["cat"].size_bytes


def test_a_pads_main_copy_ends_the_cascade_of_the_conv_before_it() -> None:
    """conv -> PAD -> max pool (Keras' ZeroPadding2D before a VALID pool): the pad's main copy
    writes the conv's rows into the middle of the padded map stripe by stripe, as Vela cascades it,
    so the conv's 28x28 output is a rolling buffer and never whole beside the padded 30x30 map."""
    import numpy as np

    from npuplan.hw.block_config import query_for
    from npuplan.ir.types import DataType
    from npuplan.lowering import lower
    from tests.unit.lowering._build import conv as tflite_conv, const, graph, model, op
    from tests.unit.lowering._build import fm as tflite_fm

    x, c, p, y = (tflite_fm("x", (1, 28, 28, 3)), tflite_fm("c", (1, 28, 28, 16)), tflite_fm("p", (1, 30, 30, 16)),
                  tflite_fm("y", (1, 14, 14, 16)))
    pads = const("pads", np.array([[0, 0], [1, 1], [1, 1], [0, 0]]), DataType.INT32, None)
    g = graph([tflite_conv(x, c, 3), op("PAD", [c, pads], [p], 1),
               op("MAX_POOL_2D", [p], [y], 2, padding="VALID", filter_height=3, filter_width=3, stride_h=2,
                  stride_w=2, fused_activation_function="NONE")], [x], [y])
    arch = build_architecture(SIZE)
    lowered = lower(model(g), arch.accelerator)
    main = next(o for o in lowered.npu_ops if o.name == "p_main")
    assert main.ofm_shape == Shape4D(1, 28, 28, 16) and main.ofm_write_offset == Shape4D(0, 1, 1, 0)
    assert query_for(main).ofm == Shape4D(1, 30, 30, 16)  # blocks sized by the map it writes into, as Vela
    schedule = plan_schedule(lowered, arch, SIZE)
    conv_op, main_op = schedule.op("c"), schedule.op("p_main")
    assert conv_op.cascade_id >= 0 and conv_op.cascade_id == main_op.cascade_id
    assert schedule.sram_peak_bytes < 28 * 28 * 16 + 30 * 30 * 16


def test_the_whole_maps_floor_counts_linear_maps_whole() -> None:
    """Vela reads and writes a linear (NHWC) map whole, so its minimal schedule's guide counts such
    maps as input and as output (hourglass_48 on U65-256: a 28 KiB NHWC sum it must not roll)."""
    from npuplan.schedule.moves.fast_storage import whole_floor_bytes

    net = build_network(conv_chain([(8, 1), (8, 1), (8, 1)], h=16, w=16, c=8), pack_unaligned=True)
    assert {fm.format for fm in net.fms.values()} == {"NHWC"}
    assert whole_floor_bytes(net) == 2 * net.fms["t0"].size_bytes
    assert whole_floor_bytes(build_network(conv_chain([(16, 1), (16, 1), (16, 1)], h=16, w=16, c=16))) == \
        net.fms["input"].size_bytes * 2  # bricks: only the network input and output are whole


def _abs(name: str, a, out) -> NpuOp:  # type: ignore[no-untyped-def]
    return NpuOp(name=name, tflite_type="ABS", op_type="Abs", block_type=BlockType.ELEMENTWISE, ifm=a,
                 ifm_shape=Shape4D.of(a.shape), ofm=out, ofm_shape=Shape4D.of(out.shape), elementwise="ABS")


def test_size_on_a_cache_counts_a_slice_writer_by_its_slice() -> None:
    """conv -> ABS -> a 1x1 conv writing half of a concatenation in place (the conv's map copied
    into the other half). Vela writes that half to a map of its own and copies it, so whether the
    ABS -> conv cascade is needed (its maps exceed the whole-maps floor, here the 24 KiB input and
    the conv's 16 KiB map of two readers) counts the half, not the whole concatenation
    (densenet_32 on U65-256 Size: 3 KiB of rolling buffers where Vela keeps none)."""
    from dataclasses import replace

    from npuplan.ir.lowered import PoolKind
    from npuplan.schedule.moves.fast_storage import size_cascades, whole_floor_bytes
    from npuplan.schedule.pricing.cost_adapter import default_oracle

    from .chains import conv, fm

    x, a, m, cat, y = fm("input", 32, 32, 24), fm("a", 32, 32, 16), fm("m", 32, 32, 16), fm("cat", 32, 32, 32), \
        fm("out", 16, 16, 16)
    half = Shape4D(1, 32, 32, 16)
    writer = replace(conv("half", m, fm("h", 32, 32, 16), k=1, seed=1), ofm=cat, ofm_shape=half,
                     ofm_write_offset=Shape4D(0, 0, 0, 16), ofm_write_shape=half)
    copy = NpuOp(name="copy", tflite_type="CONCATENATION", op_type="AvgPool", block_type=BlockType.POOLING, ifm=a,
                 ifm_shape=half, ofm=cat, ofm_shape=half, ofm_write_offset=Shape4D(0, 0, 0, 0), ofm_write_shape=half,
                 pool=PoolKind.AVERAGE)
    graph = LoweredGraph("cat", (conv("a", x, a), _abs("m", a, m), writer, copy, conv("out", cat, y, stride=2, seed=4)),
                         (x,), (y,))
    arch = build_architecture(SIZE_ON_CACHE)
    net = build_network(graph)
    assert whole_floor_bytes(net) == net.fms["input"].size_bytes + net.fms["a"].size_bytes
    cascaded, limit = size_cascades(net, max_decisions(net, arch), arch, default_oracle(arch), 1 << 20)
    assert cascaded.cascades == () and limit == 0


def test_size_on_a_cache_cascade_ends_one_row_at_a_time() -> None:
    """A 1x1 conv -> ABS (the network output): the ABS makes one row at a time too, as in Vela's
    minimal schedule, so the rolling buffer holds one row, not the four of the ABS's block
    (op_abs on U65-256 Size: 1.0 KiB where Vela's legacy core holds 0.5)."""
    from npuplan.schedule.moves.fast_storage import size_cascades
    from npuplan.schedule.pricing.cost_adapter import default_oracle

    from .chains import conv, fm

    x, t0, t1 = fm("input", 16, 16, 8), fm("t0", 16, 16, 8), fm("t1", 16, 16, 8)
    net = build_network(LoweredGraph("abs", (conv("t0", x, t0, k=1), _abs("t1", t0, t1)), (x,), (t1,)))
    arch = build_architecture(SIZE_ON_CACHE)
    cascaded, limit = size_cascades(net, max_decisions(net, arch), arch, default_oracle(arch), 1 << 20)
    assert len(cascaded.cascades) == 1 and cascaded.ofm_rows == (1, 1)
    assert limit == cascaded.cascades[0].rolling[0].size_bytes == 16 * 16  # one row of 16 pixels, one brick deep


def _chain_then_cpu_tail() -> tuple[LoweredGraph, LoweredGraph]:
    """A chain of four 32x32x32 convolutions, alone and followed by a CPU op whose two maps
    (58 KiB) are between the chain's least peak (57 KiB) and its whole maps (64 KiB)."""
    from npuplan.ir.graph import Op
    from npuplan.ir.lowered import CpuOp

    chain = conv_chain([(32, 1)] * 4, h=32, w=32, c=16)
    last, y = chain.ops[-1].ofm, fm("y", 32, 32, 26)
    tail = LoweredGraph("tail", (*chain.ops, CpuOp(Op("TANH", (last,), (y,)), "not on the NPU")), chain.inputs, (y,))
    return chain, tail


def test_size_trades_no_memory_above_the_peak_of_ops_outside_every_chain() -> None:
    """Size spends memory above its least peak on a chain's speed only where that chain sets the
    least peak; where an op that is in no chain sets it (here the CPU op), every plan holds that
    peak and the chain is planned within it (micronet_kws_49x10 u55-256: 81.0 KiB, above Vela's
    78.1, before; 75.2 after)."""
    from npuplan.schedule.moves.cascade_split import plan_cascades
    from npuplan.schedule.pricing.cost_adapter import default_oracle

    arch = build_architecture(SIZE)
    oracle = default_oracle(arch)
    chain, tail = _chain_then_cpu_tail()
    for graph, traded in ((chain, True), (tail, False)):
        net = build_network(graph, pack_unaligned=True)
        start = max_decisions(net, arch)
        _, least = plan_cascades(net, start, arch, oracle, 1 << 30, Optimise.SIZE)
        _, limit = plan_cascades(net, start, arch, oracle, 1 << 30, Optimise.SIZE, memory_weight=3.0)
        assert (limit > least) is traded
    tail_net = build_network(tail, pack_unaligned=True)
    cpu_maps = tail_net.fms["t3"].size_bytes + 32 * 32 * 26
    assert plan_schedule(tail, arch, SIZE).sram_peak_bytes == cpu_maps < plan_schedule(chain, arch, SIZE).sram_peak_bytes


def test_size_chooses_among_allocated_candidates_by_its_trade_whatever_their_order() -> None:
    """Size allocates every candidate and takes the one ``Limits.size_trade`` chooses by allocated
    peak and cycles: a traded plan can allocate larger and slower than the least-peak one (its
    weight buffers dropped at allocation), so the first candidate is not kept for being first."""
    from npuplan.schedule.model.limits import Limits
    from npuplan.schedule.pricing.cost_adapter import default_oracle
    from npuplan.schedule.search.floor import floor_decisions
    from npuplan.schedule.search.planner import _size_choice

    arch = build_architecture(SIZE)
    oracle, limits = default_oracle(arch), Limits.of(arch)
    net = build_network(_chain_then_cpu_tail()[0], pack_unaligned=True)
    whole = max_decisions(net, arch)
    candidates = [(whole, ("whole",)), (floor_decisions(net, whole, arch, oracle), ("floor",))]
    chosen = [_size_choice(net, c, arch, SIZE, oracle, limits) for c in (candidates, candidates[::-1])]
    assert chosen[0].notes == chosen[1].notes
    figures = {s.notes[0]: (s.sram_peak_bytes, s.total_npu_cycles)
               for s in (_size_choice(net, [c], arch, SIZE, oracle, limits) for c in candidates)}
    assert figures["whole"][0] > figures["floor"][0] and figures["whole"][1] < figures["floor"][1]
    names = list(figures)
    assert chosen[0].notes[0] == names[limits.size_trade(list(figures.values()))]
