"""An elementwise OFM written over the input it reads shares that input's buffer; nothing else may."""

from __future__ import annotations

from dataclasses import replace

from npuplan.commands import Address, ViolationKind, build_command_stream, plan_addresses, validate

from bench.command_graphs import arch, chain, diamond, hand_schedule


def _check(graph, schedule, addresses):  # type: ignore[no-untyped-def]
    target = arch()
    commands = build_command_stream(schedule, graph, target, addresses)
    return validate(commands, graph, target, addresses)


def test_an_aliased_elementwise_output_gets_its_input_address_and_validates() -> None:
    graph = diamond()
    plain = hand_schedule(graph)
    aliased = replace(plain, buffer_aliases=(("sum", "left"),))
    addresses = plan_addresses(aliased, graph, arch())
    assert addresses["sum"].offset == addresses["left"].offset
    assert max(a.offset + a.size_bytes for a in addresses.values() if a.area == addresses["sum"].area) <= max(
        a.offset + a.size_bytes for a in plan_addresses(plain, graph, arch()).values() if a.area == addresses["sum"].area)
    assert _check(graph, aliased, addresses) == []


def test_an_elementwise_output_shifted_16_bytes_into_its_input_is_caught() -> None:
    graph = diamond()
    schedule = hand_schedule(graph)
    addresses = dict(plan_addresses(schedule, graph, arch()))
    left = addresses["left"]
    addresses["sum"] = Address(left.area, left.offset + 16, addresses["sum"].size_bytes)
    found = _check(graph, schedule, addresses)
    assert any(v.kind is ViolationKind.OVERLAP and v.tensor in ("sum", "left") for v in found)


def test_a_convolution_writing_over_its_input_is_caught() -> None:
    graph = chain([(8, 3, 1), (8, 3, 1)])  # conv1's OFM has conv0's shape, but a conv reads neighbours
    schedule = replace(hand_schedule(graph), buffer_aliases=(("conv1", "conv0"),))
    addresses = plan_addresses(schedule, graph, arch())
    assert addresses["conv1"].offset == addresses["conv0"].offset
    found = _check(graph, schedule, addresses)
    assert any(v.kind is ViolationKind.OVERLAP for v in found)


def _through_a_removed_reshape(depth: int):  # type: ignore[no-untyped-def]
    """stem (1, 8, 8, depth) -> ABS reading it as (1, 1, 64, depth) into a (1, 64, depth) tensor -> tail."""
    from npuplan.ir.graph import Tensor
    from npuplan.ir.lowered import BlockType, LoweredGraph, NpuOp
    from npuplan.ir.shape import Shape4D
    from npuplan.ir.types import DataType

    from bench.command_graphs import conv, fm

    x = fm("input", 8, 8, depth)
    stem = conv("stem", x, depth, 3, 1, seed=1)
    flat = Tensor("flat", (1, 64, depth), DataType.INT8)
    view = Shape4D(1, 1, 64, depth)
    unary = NpuOp(name="flat", tflite_type="ABS", op_type="Abs", block_type=BlockType.ELEMENTWISE, ifm=stem.ofm,
                  ifm_shape=view, ofm=flat, ofm_shape=view, elementwise="ABS")
    tail = conv("tail", Tensor("flat", (1, 1, 64, depth), DataType.INT8), depth, 1, 1, seed=2)
    tail = replace(tail, ifm=flat, ifm_shape=view)
    return LoweredGraph("reshaped", (stem, unary, tail), (x,), (tail.ofm,))


def test_an_elementwise_output_over_its_input_seen_through_a_removed_reshape_validates() -> None:
    """(1, 8, 8, 4) and (1, 64, 4) hold the elements of the shared view in one byte order."""
    graph = _through_a_removed_reshape(4)
    schedule = replace(hand_schedule(graph), buffer_aliases=(("flat", "stem"),))
    addresses = plan_addresses(schedule, graph, arch())
    assert addresses["flat"].offset == addresses["stem"].offset
    assert _check(graph, schedule, addresses) == []


def test_element_order_of_reshaped_views() -> None:
    from npuplan.ir.shape import Shape4D, same_element_order

    assert same_element_order(Shape4D(1, 16, 16, 4), Shape4D(1, 1, 256, 4))  # one brick deep: pixels in order
    assert same_element_order(Shape4D(1, 4, 8, 32), Shape4D(1, 1, 32, 64)) is False  # other depth
    # 32 deep in bricks: (h, w, c) lies at h*W*32 + (c // 16)*W*16 + w*16 + c % 16, W differs
    assert same_element_order(Shape4D(1, 8, 8, 32), Shape4D(1, 1, 64, 32)) is False
    assert same_element_order(Shape4D(1, 8, 8, 32), Shape4D(1, 2, 32, 32)) is False
    assert same_element_order(Shape4D(1, 8, 8, 32), Shape4D(1, 64, 8, 4)) is False
    assert same_element_order(Shape4D(2, 4, 8, 32), Shape4D(1, 8, 8, 32))  # same rows


def _pool_chain(kernel):  # type: ignore[no-untyped-def]
    """stem -> a pool (a RELU lowered to a 1x1 pool, or a wider one) -> tail."""
    from npuplan.ir.lowered import BlockType, LoweredGraph, NpuOp, PoolKind
    from npuplan.ir.shape import Shape4D

    from bench.command_graphs import conv, fm

    x = fm("input", 8, 8, 16)
    stem = conv("stem", x, 16, 3, 1, seed=1)
    out = fm("relu", 8, 8, 16)
    relu = NpuOp(name="relu", tflite_type="RELU", op_type="AvgPool", block_type=BlockType.POOLING, ifm=stem.ofm,
                 ifm_shape=Shape4D.of(stem.ofm.shape), ofm=out, ofm_shape=Shape4D.of(out.shape), kernel=kernel,
                 pool=PoolKind.AVERAGE)
    tail = conv("tail", out, 16, 1, 1, seed=2)
    return LoweredGraph("relu_chain", (stem, relu, tail), (x,), (tail.ofm,))


def test_a_pointwise_pool_written_over_its_input_validates_and_a_wider_pool_is_caught() -> None:
    """Random network seed 741 generation 2 on U65-256: the planner put a 1x1 pool's OFM over its
    input while the stream marked only elementwise stripes as in place, so the validator refused."""
    from npuplan.ir.lowered import Kernel, Padding

    for kernel, valid in ((Kernel(), True), (Kernel(height=3, width=3, padding=Padding(1, 1, 1, 1)), False)):
        graph = _pool_chain(kernel)
        schedule = replace(hand_schedule(graph), buffer_aliases=(("relu", "stem"),))
        addresses = plan_addresses(schedule, graph, arch())
        assert addresses["relu"].offset == addresses["stem"].offset
        found = _check(graph, schedule, addresses)
        assert (found == []) is valid, found
