"""Command stream shape: stripe order in cascades, weight DMAs before use, JSON form."""

from __future__ import annotations

import json

from npuplan.commands import (
    DmaCommand,
    NpuStripeCommand,
    build_command_stream,
    command_stream_json,
    plan_addresses,
    validate,
)
from npuplan.schedule.model.types import WeightBuffering

from bench.command_graphs import OpChoice, arch, chain, diamond, hand_schedule


def _stream(graph, schedule):
    target = arch()
    addresses = plan_addresses(schedule, graph, target)
    return build_command_stream(schedule, graph, target, addresses), addresses


def test_uncascaded_chain_is_one_stripe_per_op_in_order() -> None:
    graph = chain([(8, 3, 1), (8, 3, 1)])
    commands, _ = _stream(graph, hand_schedule(graph))
    assert [c.op for c in commands] == ["conv0", "conv1"]
    assert commands[1].ifm.box.rows == (0, 16)


def test_cascade_consumer_stripe_runs_as_soon_as_its_rows_exist() -> None:
    graph = chain([(8, 3, 1), (8, 3, 1)])
    commands, _ = _stream(graph, hand_schedule(graph, cascades=[(0, 1, 2)]))
    order = [(c.op, c.ofm.box.rows) for c in commands]
    # conv1 rows 0..1 need conv0 rows 0..2 (3x3 SAME): two producer stripes of 2 rows first
    assert order[:4] == [("conv0", (0, 2)), ("conv0", (2, 4)), ("conv1", (0, 2)), ("conv0", (4, 6))]
    assert sum(1 for op, _ in order if op == "conv1") == 8
    ifm_rows = [c.ifm.box.rows for c in commands if c.op == "conv1"]
    assert ifm_rows[0] == (0, 3) and ifm_rows[1] == (1, 5) and ifm_rows[-1] == (13, 16)


def test_rolling_buffer_operands_name_their_rows() -> None:
    graph = chain([(8, 3, 1), (8, 3, 1)])
    schedule = hand_schedule(graph, cascades=[(0, 1, 2)])
    commands, _ = _stream(graph, schedule)
    rows = schedule.placements["conv0"].rows
    assert all(c.ofm.buffer.rows == rows for c in commands if c.op == "conv0")


def test_double_buffered_weights_are_dmaed_per_slice_before_use() -> None:
    graph = chain([(48, 3, 1)])
    schedule = hand_schedule(graph, weights={"conv0": OpChoice(WeightBuffering.DOUBLE, 16)})
    commands, addresses = _stream(graph, schedule)
    kinds = ["dma" if isinstance(c, DmaCommand) else "npu" for c in commands]
    assert kinds == ["dma", "npu"] * 3
    stripes = [c for c in commands if isinstance(c, NpuStripeCommand)]
    assert [c.ofm.box.start[3] for c in stripes] == [0, 16, 32]
    slots = [c.dst_address for c in commands if isinstance(c, DmaCommand)]
    assert slots[0] == slots[2] != slots[1]
    assert validate(commands, graph, arch(), addresses) == []


def test_prebuffered_slice_is_fetched_under_the_previous_op() -> None:
    # after the previous op has started (so the DMA runs under it, not under the op before it) and
    # in a buffer of its own while it runs (so the DMA need not wait for it)
    graph = chain([(8, 3, 1), (32, 3, 1)])
    schedule = hand_schedule(graph, weights={"conv1": OpChoice(WeightBuffering.SINGLE, 16, prebuffer=True)})
    commands, addresses = _stream(graph, schedule)
    assert isinstance(commands[0], NpuStripeCommand) and commands[0].op == "conv0"
    dma = commands[1]
    assert isinstance(dma, DmaCommand) and dma.op == "conv1" and dma.ahead
    stripe = commands[0]
    buffer = range(dma.dst_address, dma.dst_address + dma.size_bytes)
    for operand in (stripe.ifm, stripe.ofm):
        a = addresses[operand.buffer.name]
        if a.area == dma.dst_area:
            assert not set(buffer) & set(range(a.offset, a.offset + a.size_bytes))
    assert validate(commands, graph, arch(), addresses) == []


def test_diamond_stream_validates_and_serialises() -> None:
    graph = diamond()
    commands, addresses = _stream(graph, hand_schedule(graph, cascades=[(3, 4, 1)]))
    assert validate(commands, graph, arch(), addresses) == []
    text = json.dumps(command_stream_json(commands))
    first = json.loads(text)[0]
    assert first["kind"] == "npu_stripe" and first["ofm"]["tensor"] == "stem"
    assert set(first["ofm"]) >= {"start", "end", "area", "address", "buffer"}


def test_a_copy_writing_part_of_its_ofm_writes_only_its_box() -> None:
    """A concatenation copy (ofm_write_shape) writes its slice, not the rest of the tensor."""
    from pathlib import Path

    from npuplan.api import plan
    from npuplan.commands.types import NpuStripeCommand

    data = Path(__file__).resolve().parents[2] / "data" / "unet_transpose_64.tflite"
    result = plan(data)
    copies = [c for c in result.commands if isinstance(c, NpuStripeCommand) and c.op.endswith("_avgpool")]
    assert copies
    for command in copies:
        op = next(o for o in result.lowered.npu_ops if o.name == command.op)
        assert op.ofm_write_shape is not None and op.ofm_write_offset is not None
        start, end = command.ofm.box.start, command.ofm.box.end
        assert start[3] == op.ofm_write_offset.c and end[3] - start[3] == op.ofm_write_shape.c


def test_a_buffer_fetched_ahead_lives_from_the_stripe_it_runs_under() -> None:
    """``name_lifetimes``, the one rule the allocator and the HTML report read: a DMA fetched ahead
    of its op holds its destination from the last NPU stripe before it, not from the DMA."""
    from npuplan.commands.addresses import name_lifetimes

    touched = [["a", "b"], ["w_src", "w"], ["b", "w", "c"]]
    plain = name_lifetimes(touched, [], [])
    assert plain["w"] == (1, 2)
    ahead = name_lifetimes(touched, [], [], stripes=[True, False, True], ahead=[None, "w", None])
    assert ahead["w"] == (0, 2) and ahead["b"] == plain["b"]
    # no stripe before it: from the DMA itself
    assert name_lifetimes(touched, [], [], stripes=[False, False, True], ahead=[None, "w", None])["w"] == (1, 2)


def test_a_mirrored_view_spans_its_box_from_the_last_element_it_writes_to_the_first() -> None:
    """A MIRROR_PAD band written backwards (step -1) from its origin touches the rows (columns)
    below (left of) the origin: the box runs from the last element written to the first."""
    from npuplan.commands.stream import tensor_box
    from npuplan.ir.shape import Shape4D
    from tests.unit.lowering._build import fm

    t = fm("t", (1, 14, 12, 8))
    top = tensor_box(t, Shape4D(1, 2, 10, 8), Shape4D(0, 1, 1, 0), (0, 2), (0, 8), step=(-1, 1))
    assert (top.start, top.end) == ((0, 0, 1, 0), (1, 2, 11, 8))
    right = tensor_box(t, Shape4D(1, 14, 3, 8), Shape4D(0, 0, 11, 0), (0, 14), (0, 8), step=(1, -1))
    assert (right.start, right.end) == ((0, 0, 9, 0), (1, 14, 12, 8))
