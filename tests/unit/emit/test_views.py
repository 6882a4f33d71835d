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


def test_slices_and_splits_read_where_they_lie(vela_api, tmp_path):
    """Random networks of slices and splits: every copy (and every consumer reading a slice in
    place) runs on the NPU, reading its box at the offset inside the source map; the files validate."""
    from npuplan.emit import plan_and_emit
    from npuplan.regstream import validate_tflite
    from tests.random_graphs import network_bytes

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
