"""An elementwise op's OFM takes the buffer of an input that dies there (one buffer, not two)."""

from __future__ import annotations

from dataclasses import replace

from npuplan.hw import build_architecture
from npuplan.ir.lowered import BlockType, Kernel, LoweredGraph, NpuOp, Padding
from npuplan.ir.shape import Shape4D
from npuplan.options import PlanOptions
from npuplan.schedule import plan_schedule
from npuplan.schedule.model.inplace import inplace_outputs
from npuplan.schedule.model.network import build_network
from npuplan.schedule.model.decisions import CascadeSpan, max_decisions
from npuplan.schedule.model.usage import fast_buffers, usage_by_time

from .chains import conv, fm

SHARED = PlanOptions(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                     memory_mode="Shared_Sram")


def _add(name: str, a, b) -> NpuOp:  # type: ignore[no-untyped-def]
    out = fm(name, *a.shape[1:])
    return NpuOp(name=name, tflite_type="ADD", op_type="Add", block_type=BlockType.ELEMENTWISE,
                 ifm=a, ifm_shape=Shape4D.of(a.shape), ofm=out, ofm_shape=Shape4D.of(out.shape),
                 ifm2=b, ifm2_shape=Shape4D.of(b.shape), elementwise="ADD")


def _residual(reuse_left: bool = True) -> LoweredGraph:
    """input -> stem -> (left, right) -> sum -> tail; with ``reuse_left=False`` left is read twice."""
    x = fm("input", 16, 16, 16)
    stem = conv("stem", x, fm("stem", 16, 16, 16), seed=1)
    left = conv("left", stem.ofm, fm("left", 16, 16, 16), seed=2)
    right = conv("right", stem.ofm, fm("right", 16, 16, 16), k=1, seed=3)
    total = _add("sum", left.ofm, right.ofm)
    tail = conv("tail", total.ofm, fm("tail", 16, 16, 16), seed=4)
    ops = [stem, left, right, total, tail]
    outputs = (tail.ofm,)
    if not reuse_left:
        again = _add("again", left.ofm, tail.ofm)
        ops.append(again)
        outputs = (again.ofm,)
    return LoweredGraph("residual", tuple(ops), (x,), outputs)


def test_sum_overwrites_its_first_input_and_the_peak_counts_one_buffer() -> None:
    net = build_network(_residual())
    dec = max_decisions(net, build_architecture(SHARED))
    assert inplace_outputs(net, dec) == {"sum": "left"}
    t_sum = net.times[3]
    fused = usage_by_time(net, fast_buffers(net, dec))[t_sum]
    apart = usage_by_time(net, fast_buffers(net, dec, inplace=False))[t_sum]
    assert apart - fused == net.fms["sum"].size_bytes
    assert {b.name for b in fast_buffers(net, dec)} == {"input", "stem", "left", "right", "tail"}


def test_an_input_read_again_later_is_never_overwritten() -> None:
    net = build_network(_residual(reuse_left=False))
    dec = max_decisions(net, build_architecture(SHARED))
    assert inplace_outputs(net, dec) == {"sum": "right"}


def test_an_input_read_at_an_offset_is_never_overwritten_but_the_other_one_is() -> None:
    graph = _residual()
    ops = list(graph.ops)
    ops[3] = replace(ops[3], ifm_read_offset=Shape4D(0, 0, 0, 0))  # reads a box of 'left' where it lies
    net = build_network(replace(graph, ops=tuple(ops)))
    assert inplace_outputs(net, max_decisions(net, build_architecture(SHARED))) == {"sum": "right"}


def test_an_input_outside_fast_storage_is_never_overwritten() -> None:
    net = build_network(_residual())
    dec = max_decisions(net, build_architecture(SHARED))
    assert inplace_outputs(net, replace(dec, fast_fms=dec.fast_fms - {"left", "right"})) == {}


def test_schedule_reports_the_alias_and_its_peak_is_lower() -> None:
    schedule = plan_schedule(_residual(), build_architecture(SHARED), SHARED)
    assert schedule.buffer_aliases == (("sum", "left"),)
    sum_op = schedule.op("sum")
    live = 16 * 16 * 16
    assert sum_op.sram_usage_bytes < 3 * live  # left/sum once, right once (no weights on ADD)


def _pool(name: str, x, *, kernel: Kernel = Kernel()) -> NpuOp:  # type: ignore[no-untyped-def]
    out = fm(name, *x.shape[1:])
    return NpuOp(name=name, tflite_type="RELU", op_type="AvgPool", block_type=BlockType.POOLING, ifm=x,
                 ifm_shape=Shape4D.of(x.shape), ofm=out, ofm_shape=Shape4D.of(out.shape), kernel=kernel)


def _relu_chain(kernel: Kernel = Kernel()) -> LoweredGraph:
    """input -> stem -> relu (a pool) -> tail."""
    x = fm("input", 16, 16, 16)
    stem = conv("stem", x, fm("stem", 16, 16, 16), seed=1)
    relu = _pool("relu", stem.ofm, kernel=kernel)
    tail = conv("tail", relu.ofm, fm("tail", 16, 16, 16), seed=2)
    return LoweredGraph("relu_chain", (stem, relu, tail), (x,), (tail.ofm,))


def test_a_pointwise_pool_overwrites_its_input() -> None:
    net = build_network(_relu_chain())
    assert inplace_outputs(net, max_decisions(net, build_architecture(SHARED))) == {"relu": "stem"}


def test_a_pool_with_a_wider_kernel_or_padding_never_overwrites_its_input() -> None:
    for kernel in (Kernel(height=3, width=3, padding=Padding(1, 1, 1, 1)), Kernel(padding=Padding(0, 0, 0, 0)),
                   Kernel(height=1, width=2, padding=Padding(0, 0, 0, 1))):
        net = build_network(_relu_chain(kernel))
        found = inplace_outputs(net, max_decisions(net, build_architecture(SHARED)))
        assert found == ({"relu": "stem"} if kernel == Kernel() else {})


def _squeeze_excite() -> LoweredGraph:
    """input -> stem -> squeeze (a pool of all of stem) -> scale = MUL(stem, squeeze) -> tail: stem
    has two readers, the squeeze first."""
    x = fm("input", 16, 16, 16)
    stem = conv("stem", x, fm("stem", 16, 16, 16), seed=1)
    squeeze = NpuOp(name="squeeze", tflite_type="MEAN", op_type="AvgPool", block_type=BlockType.POOLING,
                    ifm=stem.ofm, ifm_shape=Shape4D.of(stem.ofm.shape), ofm=fm("squeeze", 1, 1, 16),
                    ofm_shape=Shape4D(1, 1, 1, 16), kernel=Kernel(height=16, width=16))
    out = fm("scale", 16, 16, 16)
    scale = NpuOp(name="scale", tflite_type="MUL", op_type="Mul", block_type=BlockType.ELEMENTWISE, ifm=stem.ofm,
                  ifm_shape=Shape4D.of(stem.ofm.shape), ofm=out, ofm_shape=Shape4D.of(out.shape),
                  ifm2=squeeze.ofm, ifm2_shape=Shape4D(1, 1, 1, 16), elementwise="MUL")
    tail = conv("tail", out, fm("tail", 16, 16, 16), seed=2)
    return LoweredGraph("se", (stem, squeeze, scale, tail), (x,), (tail.ofm,))


def test_an_input_whose_other_readers_ran_before_is_overwritten_by_its_last_reader() -> None:
    """mnv3_40_wide u55-64 Size: each squeeze-and-excitation scale wrote a second 56 KiB map beside
    the one it scales (131.4 KiB where Vela's default core needs 103.1)."""
    graph = _squeeze_excite()
    net = build_network(graph)
    assert net.fms["stem"].consumers == (1, 2)
    assert inplace_outputs(net, max_decisions(net, build_architecture(SHARED))) == {"scale": "stem"}
    ops = list(graph.ops)
    ops[1], ops[2] = replace(ops[1], ifm=ops[2].ofm, ifm_shape=ops[2].ofm_shape), replace(ops[2], ifm2=None)
    # the squeeze now reads the scaled map after the scale: stem's last reader is still the scale
    net = build_network(replace(graph, ops=(ops[0], ops[2], ops[1], ops[3])))
    assert inplace_outputs(net, max_decisions(net, build_architecture(SHARED))) == {"scale": "stem"}


def test_an_input_read_by_a_later_op_or_twice_at_other_places_is_never_overwritten() -> None:
    graph = _squeeze_excite()
    ops = list(graph.ops)
    late = replace(ops[1], name="late", ofm=fm("late", 1, 1, 16))  # pools stem again after the scale
    net = build_network(replace(graph, ops=(*ops, late), outputs=(ops[3].ofm, late.ofm)))
    assert inplace_outputs(net, max_decisions(net, build_architecture(SHARED))) == {}
    # MUL(stem, one pixel of stem read at an offset, broadcast): overwriting stem would change that
    # pixel before the rows after it are scaled by it
    pixel = replace(ops[2], ifm2=ops[0].ofm, ifm2_shape=Shape4D(1, 1, 1, 16), ifm2_read_offset=Shape4D(0, 5, 5, 0))
    net = build_network(replace(graph, ops=(ops[0], pixel, ops[3])))
    assert net.fms["stem"].consumers == (1, 1)
    assert inplace_outputs(net, max_decisions(net, build_architecture(SHARED))) == {}
    same = replace(ops[2], ifm2=ops[0].ofm, ifm2_shape=ops[2].ifm_shape)  # MUL(stem, stem): each element read once
    net = build_network(replace(graph, ops=(ops[0], same, ops[3])))
    assert inplace_outputs(net, max_decisions(net, build_architecture(SHARED))) == {"scale": "stem"}


def _residual_chain() -> LoweredGraph:
    """stem -> a1; s1 = stem + a1; s1 -> a2; s2 = s1 + a2; tail: each add's first input is read
    before by the block's conv, so each could overwrite it and chain the blocks into one group."""
    x = fm("input", 16, 16, 16)
    stem = conv("stem", x, fm("stem", 16, 16, 16), seed=1)
    a1 = conv("a1", stem.ofm, fm("a1", 16, 16, 16), k=1, seed=2)
    s1 = _add("s1", stem.ofm, a1.ofm)
    a2 = conv("a2", s1.ofm, fm("a2", 16, 16, 16), k=1, seed=3)
    s2 = _add("s2", s1.ofm, a2.ofm)
    tail = conv("tail", s2.ofm, fm("tail", 16, 16, 16), seed=4)
    return LoweredGraph("residual_chain", (stem, a1, s1, a2, s2, tail), (x,), (tail.ofm,))


def test_a_group_sharing_a_buffer_holds_one_pair_over_a_map_with_other_readers() -> None:
    net = build_network(_residual_chain())
    dec = max_decisions(net, build_architecture(SHARED))
    # s2 may not overwrite s1 (s1's group already overwrote stem over its other reader): it
    # takes a2, read by it alone, and the groups stay short (planning stays linear in depth)
    assert inplace_outputs(net, dec) == {"s1": "stem", "s2": "a2"}
    # a call for some ops only cannot see the groups: it takes no multi-reader pair
    assert inplace_outputs(net, dec, [2]) == {"s1": "a1"}


def test_one_network_asked_under_several_decisions_answers_each_by_its_own() -> None:
    """What an op may overwrite whatever the decisions is worked out once per network; where the
    maps lie and which ops cascade is read from each decision set asked."""
    net = build_network(_residual())
    dec = max_decisions(net, build_architecture(SHARED))
    assert inplace_outputs(net, dec) == {"sum": "left"}
    assert inplace_outputs(net, replace(dec, fast_fms=dec.fast_fms - {"left"})) == {"sum": "right"}
    assert inplace_outputs(net, replace(dec, fast_fms=dec.fast_fms - {"sum"})) == {}
    cascaded = replace(dec, cascades=(CascadeSpan(0, 2, 3),))
    assert inplace_outputs(net, cascaded) == {}
    assert inplace_outputs(net, dec, [4]) == {}  # the tail conv overwrites nothing
    assert inplace_outputs(net, dec) == {"sum": "left"}
