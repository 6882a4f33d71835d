"""Stripes of ops that see a tensor through a reshaped view (same bytes, another shape): the
stream records such an operand as the whole tensor, the emitter addresses the view."""

from __future__ import annotations

from npuplan.commands.types import Address, Box, BufferKind, BufferRef, NpuStripeCommand, Operand, WeightSlice
from npuplan.emit.features import geometry
from npuplan.emit.operations import _ofm_channels, ofm_rows, view_rows
from npuplan.hw.memory import MemArea
from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.ir.shape import Shape4D
from tests.unit.lowering._build import fm


def _operand(name: str, start: tuple[int, ...], end: tuple[int, ...]) -> Operand:
    return Operand(name, Box(start, end), BufferRef(name, Address(MemArea.SRAM, 0, 4096), BufferKind.FEATURE_MAP))


def _fc_over_tokens() -> NpuOp:
    """16 tokens of 32 features (tensor 1 x 16 x 32) run as a 1x1 conv over a 4 x 4 view."""
    x, y = fm("x", (1, 16, 32)), fm("y", (1, 16, 2, 16))
    return NpuOp("y", "FULLY_CONNECTED", "FullyConnected", BlockType.CONV, x, Shape4D(1, 4, 4, 32), y,
                 Shape4D(1, 4, 4, 32))


def test_a_whole_reshaped_ofm_view_is_all_of_the_views_rows_and_its_slices_channels():
    op = _fc_over_tokens()
    whole = _operand("y", (0, 0, 0, 0), (1, 16, 2, 16))  # the tensor's coordinates
    piece = WeightSlice(1, 16, 32, 0, 0)
    command = NpuStripeCommand("y", _operand("x", (0, 0, 0, 0), (1, 1, 16, 32)), None, whole, piece, None, "")
    assert ofm_rows(op, command) == (0, 4) and view_rows(op, command) == (0, 4)
    assert _ofm_channels(op, command) == (16, 32)


def test_rows_of_a_reshaped_nhwc_view_are_one_contiguous_run():
    x = fm("x", (1, 16, 32))
    geo, start, end = geometry(_operand("x", (0, 0, 0, 0), (1, 1, 16, 32)), x, Shape4D(1, 4, 4, 32), False,
                               view_rows=(1, 3), view_channels=(0, 32))
    assert (start, end) == ((1, 0, 0), (3, 4, 32))
    assert geo.offset(*start) == 4 * 32  # view row 1 starts after 4 tokens of 32 bytes


def test_slices_and_splits_read_where_they_lie(tmp_path):
    """Random networks of slices and splits: every copy (and every consumer reading a slice in
    place) runs on the NPU, reading its box at the offset inside the source map; the files validate."""
    from npuplan.api import plan_and_emit
    from npuplan.regstream import validate_tflite
    from bench.random_graphs import network_bytes

    offsets = 0
    for seed in range(4):
        path = tmp_path / f"slices_{seed}.tflite"
        path.write_bytes(network_bytes(seed, kinds=("slice", "split", "conv"), layers=4, generation=1))
        planned, emitted = plan_and_emit(path, accelerator_config="ethos-u55-128",
                                         system_config="Ethos_U55_High_End_Embedded", memory_mode="Shared_Sram")
        assert not planned.lowered.cpu_ops
        offsets += sum(o.ifm_read_offset is not None for o in planned.lowered.npu_ops)
        assert validate_tflite(emitted.data).npu_operations == emitted.npu_operations
    assert offsets


def test_a_pad_copy_of_a_reshaped_view_reads_the_view_from_its_first_row():
    """A PAD's copy writes rows 1..9 of its 10-row output (its box) from all of an 8 x 8 view of a
    1 x 64 tensor: the rows it reads are counted in its box, not in the output (random_703 of
    /work/zoo_random7: 'IFM box starts at row 1, its kernel reads from row 0', PAD to the CPU)."""
    from npuplan.ir.shape import Shape4D as S

    x, y = fm("x", (1, 1, 64, 16)), fm("y", (1, 10, 10, 16))
    op = NpuOp("y_main", "PAD", "AvgPool", BlockType.POOLING, x, S(1, 8, 8, 16), y, S(1, 8, 8, 16),
               ofm_write_offset=S(0, 1, 1, 0), ofm_write_shape=S(1, 8, 8, 16))
    command = NpuStripeCommand("y_main", _operand("x", (0, 0, 0, 0), (1, 1, 64, 16)), None,
                               _operand("y", (0, 1, 1, 0), (1, 9, 9, 16)), None, None, "")
    assert ofm_rows(op, command) == (0, 8) and view_rows(op, command) == (0, 8)


def test_a_pad_after_a_reshaped_lut_runs_on_the_npu(tmp_path):
    from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
    from npuplan.ir.types import DataType, Quantization
    from tests.unit.emit.conftest import emit_graph
    from tests.unit.lowering._build import const

    q, out = Quantization((0.05,), (3,)), Quantization((1 / 256,), (-128,))
    x, s = Tensor("x", (1, 1, 64, 16), DataType.INT8, q), Tensor("s", (1, 1, 64, 16), DataType.INT8, out)
    r, y = Tensor("r", (1, 8, 8, 16), DataType.INT8, out), Tensor("y", (1, 10, 10, 16), DataType.INT8, out)
    ops = (Op("LOGISTIC", (x,), (s,), frozen_options({}), 0),
           Op("RESHAPE", (s, const("shape", [1, 8, 8, 16], DataType.INT32, None)), (r,),
              frozen_options({"new_shape": (1, 8, 8, 16)}), 1),
           Op("PAD", (r, const("pads", [[0, 0], [1, 1], [1, 1], [0, 0]], DataType.INT32, None)), (y,),
              frozen_options({}), 2))
    planned, emitted, report = emit_graph(tmp_path, Graph("pad_view", ops, (x,), (y,)))
    assert "PAD" in {o.tflite_type for o in planned.lowered.npu_ops}
    assert report.npu_operations == emitted.npu_operations
