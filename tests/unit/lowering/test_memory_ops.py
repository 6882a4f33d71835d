"""Reshape copies folded into their readers (``lowering.memory_ops.fuse_reshape_reads``), boxes of
one linear NHWC shape found again in another (``linear_run``, ``run_as_box``)."""

from __future__ import annotations

from dataclasses import replace

from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.ir.shape import Shape4D
from npuplan.lowering.memory_ops import (convert_concat, convert_reshape_copy, fuse_reshape_reads, linear_run,
                                         run_as_box)

from ._build import fm, i32, op


def test_a_run_of_elements_is_found_again_as_a_box_of_another_shape() -> None:
    rows, flat = Shape4D(1, 8, 1, 24), Shape4D(1, 1, 8, 24)
    # the last of 8 time steps: a row of (1, 1, 8, 24) is a pixel-row of (1, 8, 1, 24)
    assert linear_run(flat, Shape4D(0, 0, 7, 0), Shape4D(1, 1, 1, 24)) == (168, 24)
    assert run_as_box(rows, 168, 24) == (Shape4D(0, 7, 0, 0), Shape4D(1, 1, 1, 24))
    # two whole rows, and part of a pixel's channels
    assert run_as_box(rows, 48, 48) == (Shape4D(0, 2, 0, 0), Shape4D(1, 2, 1, 24))
    assert run_as_box(rows, 50, 4) == (Shape4D(0, 2, 0, 2), Shape4D(1, 1, 1, 4))
    # a run crossing a pixel's end is no box; nor is a box whose channels are not all read
    assert run_as_box(rows, 20, 8) is None
    assert linear_run(flat, Shape4D(0, 0, 2, 0), Shape4D(1, 1, 2, 12)) is None
    assert run_as_box(rows, 24 * 8 - 4, 8) is None  # past the end


def _sequence_then_last_step() -> tuple[tuple[NpuOp, ...], NpuOp]:
    """8 steps of 24 written in place into (8, 1, 24), seen as (1, 8, 24) by a reshape copy whose
    reader reads the last step (a row at an offset): pt_lstm_8x16's tail."""
    steps = [fm(f"h{i}", (1, 1, 24)) for i in range(8)]
    seq, flat, out = fm("seq", (8, 1, 24)), fm("flat", (1, 8, 24)), fm("out", (1, 4))
    copies = convert_concat(op("CONCATENATION", steps, [seq], 0, axis=0))
    reshape = convert_reshape_copy(op("RESHAPE", [seq, i32("shape", [1, 8, 24])], [flat], 1))
    reader = NpuOp(name="fc", tflite_type="FULLY_CONNECTED", op_type="FullyConnected",
                   block_type=BlockType.VECTOR_PRODUCT, ifm=flat, ifm_shape=Shape4D(1, 1, 1, 24), ofm=out,
                   ofm_shape=Shape4D(1, 1, 1, 4), ifm_read_offset=Shape4D(0, 0, 7, 0), source_index=2)
    return (*copies, *reshape, reader), reader


def test_a_reader_of_a_row_at_an_offset_reads_the_copy_s_input_there() -> None:
    ops, reader = _sequence_then_last_step()
    fused = fuse_reshape_reads(ops, (reader.ofm,), framed_writes=False)
    assert "RESHAPE" not in {o.tflite_type for o in fused}
    last = fused[-1]
    assert last.ifm.name == "seq" and last.ifm_read_offset == Shape4D(0, 7, 0, 0) and last.ifm_shape == reader.ifm_shape


def test_a_reader_whose_box_is_no_box_of_the_input_keeps_the_copy() -> None:
    ops, reader = _sequence_then_last_step()
    # half of two steps' channels: not one run of the input's elements
    odd = replace(reader, ifm_shape=Shape4D(1, 1, 2, 12), ifm_read_offset=Shape4D(0, 0, 3, 0))
    fused = fuse_reshape_reads((*ops[:-1], odd), (reader.ofm,), framed_writes=False)
    assert "RESHAPE" in {o.tflite_type for o in fused}


def test_a_strided_view_at_an_offset_keeps_the_copy() -> None:
    """A strided view's offset is where its steps start (every other row of the copy's output):
    not a box of the input the copy reads."""
    ops, reader = _sequence_then_last_step()
    strided = replace(reader, ifm_read_offset=Shape4D(0, 0, 1, 0), ifm_step=(1, 2))
    fused = fuse_reshape_reads((*ops[:-1], strided), (reader.ofm,), framed_writes=False)
    assert "RESHAPE" in {o.tflite_type for o in fused}
