"""Upscaling lowerings emitted with the hardware's IFM resampling (``ifm_upscale``): resizes as
nearest-upscaled average pools, TRANSPOSE_CONV as a convolution over the transpose-upscaled IFM,
and stripes starting on an odd upscaled row made expressible (``emit.upscale``)."""

from __future__ import annotations

import pytest

from npuplan.commands.types import Address, Box, BufferKind, BufferRef, NpuStripeCommand, Operand
from npuplan.errors import EmitError
from npuplan.emit.upscale import aligned, aligned_commands
from npuplan.hw.memory import MemArea
from npuplan.ir.lowered import BlockType, Kernel, NpuOp, Padding, Resampling
from npuplan.ir.shape import Shape4D
from npuplan.schedule.model.geometry import aligned_stripe_rows, stripe_row_step
from bench.random_graphs import network_bytes
from tests.unit.emit._stream import registers_at_kicks
from tests.unit.lowering._build import fm

U55_64 = {"accelerator_config": "ethos-u55-64", "system_config": "Ethos_U55_Deep_Embedded",
          "memory_mode": "Shared_Sram", "optimise": "Size"}
U55_128 = {"accelerator_config": "ethos-u55-128", "system_config": "Ethos_U55_High_End_Embedded",
           "memory_mode": "Shared_Sram"}


def _op(resampling: Resampling, kernel: Kernel) -> NpuOp:
    x, y = fm("x", (1, 8, 8, 16)), fm("y", (1, 16, 16, 16))
    kind = BlockType.CONV if resampling is Resampling.TRANSPOSE else BlockType.POOLING
    return NpuOp("y", "RESIZE_NEAREST_NEIGHBOR", "AvgPool", kind, x, x.shape4d, y, y.shape4d, kernel=kernel,
                 resampling=resampling)


def _operand(name: str, rows: tuple[int, int], width: int) -> Operand:
    buffer = BufferRef(name, Address(MemArea.SRAM, 0, 4096), BufferKind.FEATURE_MAP)
    return Operand(name, Box((0, rows[0], 0, 0), (1, rows[1], width, 16)), buffer)


def _command(ofm_rows: tuple[int, int], ifm_rows: tuple[int, int]) -> NpuStripeCommand:
    return NpuStripeCommand("y", _operand("x", ifm_rows, 8), None, _operand("y", ofm_rows, 16), None, None, "")


def test_an_even_stripe_is_left_as_planned():
    op = _op(Resampling.NEAREST, Kernel())
    command = _command((4, 8), (2, 4))
    assert aligned_commands(op, command) == [command]


def test_a_nearest_stripe_from_an_odd_row_is_split_after_its_first_row():
    op = _op(Resampling.NEAREST, Kernel())
    first, rest = aligned_commands(op, _command((3, 7), (1, 4)))
    assert (first.ofm.box.rows, first.ifm.box.rows) == ((3, 4), (1, 2))  # row 3 is source row 1's second copy
    assert (rest.ofm.box.rows, rest.ifm.box.rows) == ((4, 7), (2, 4))  # from row 4: source rows 2 and 3
    assert aligned(op, (3, 4), 1) and not aligned(op, (3, 7), 1)


def test_a_transpose_stripe_from_an_odd_row_starts_a_source_row_later_with_a_row_of_padding():
    op = _op(Resampling.TRANSPOSE, Kernel(3, 3, padding=Padding(2, 2, 0, 0)))
    (shifted,) = aligned_commands(op, _command((3, 6), (0, 4)))  # reads upscaled rows 1..5
    assert shifted.ifm.box.rows == (1, 4)  # upscaled row 1 is the zero after source row 0
    assert aligned(op, (3, 6), 1)


def test_a_bilinear_pool_is_striped_on_even_upscaled_rows_only():
    """The planner's rule that keeps the refusal below from happening (``stripe_row_step``)."""
    bilinear = _op(Resampling.NEAREST, Kernel(2, 2, padding=Padding(0, 0, 1, 1)))
    assert stripe_row_step(bilinear) == 2
    assert [aligned_stripe_rows(bilinear, r) for r in (1, 2, 3, 15, 16)] == [2, 2, 4, 16, 16]
    assert stripe_row_step(_op(Resampling.NEAREST, Kernel())) == 1  # the emitter splits an odd first row
    assert stripe_row_step(_op(Resampling.TRANSPOSE, Kernel(3, 3, padding=Padding(2, 2, 0, 0)))) == 1
    odd_pad = _op(Resampling.NEAREST, Kernel(3, 3, padding=Padding(1, 1, 1, 1)))
    assert stripe_row_step(odd_pad) == 16  # every second stripe would start on an odd row: not striped


def test_a_bilinear_resize_in_a_size_cascade_stays_on_the_npu(tmp_path):
    """The bench's random_303 of /work/zoo_random3 in a few layers: a bilinear resize cascaded by
    one row at a time went back to the CPU (a stripe from odd upscaled row 1 with a 2-row kernel)."""
    from npuplan.api import plan_and_emit
    from npuplan.regstream import validate_tflite

    path = tmp_path / "random_303.tflite"
    path.write_bytes(network_bytes(303, generation=1))
    planned, emitted = plan_and_emit(path, **U55_64)
    assert any(o.tflite_type == "RESIZE_BILINEAR" for o in planned.lowered.npu_ops)
    assert not planned.lowered.cpu_ops, [o.reason for o in planned.lowered.cpu_ops]
    assert validate_tflite(emitted.data).npu_operations == emitted.npu_operations


def test_a_wider_nearest_kernel_from_an_odd_row_is_refused():
    op = _op(Resampling.NEAREST, Kernel(2, 2, padding=Padding(0, 0, 1, 1)))
    with pytest.raises(EmitError, match="odd upscaled row"):
        aligned_commands(op, _command((3, 6), (1, 4)))


@pytest.mark.parametrize("seed", range(6))
def test_resizes_and_transpose_convolutions_emit_with_ifm_upscaling(tmp_path, seed):
    """Random networks of resizes and transpose convolutions, striped on the 64-MAC Ethos-U55: every
    upscaling op runs on the NPU with IFM_UPSCALE set (1 nearest, 2 transpose), and the file validates."""
    from npuplan.api import plan_and_emit
    from npuplan.regstream import validate_tflite

    path = tmp_path / f"up_{seed}.tflite"
    path.write_bytes(network_bytes(seed, kinds=("resize", "transpose_conv", "conv"), layers=4, generation=1))
    planned, emitted = plan_and_emit(path, **U55_64)
    upscaling = [o for o in planned.lowered.npu_ops if o.resampling is not Resampling.NONE]
    # the planner stripes a bilinear pool (a 2-row kernel) on even upscaled rows only
    assert not planned.lowered.cpu_ops, [o.reason for o in planned.lowered.cpu_ops]
    modes = registers_at_kicks(emitted.data, "IFM_UPSCALE")
    assert len(modes) == emitted.npu_operations == validate_tflite(emitted.data).npu_operations
    expected = {1 if o.resampling is Resampling.NEAREST else 2 for o in upscaling}
    assert set(modes) - {0} == expected


def test_a_resize_pool_rounds_naturally_as_vela_runs_it(tmp_path):
    from npuplan.api import plan_and_emit

    path = tmp_path / "resize.tflite"
    path.write_bytes(network_bytes(2, kinds=("resize",), layers=1, generation=1))
    planned, emitted = plan_and_emit(path, **U55_128)
    ops = {o.name: o for o in planned.lowered.npu_ops}
    stripes = [ops[c.op] for c in planned.commands if isinstance(c, NpuStripeCommand)
               for _ in aligned_commands(ops[c.op], c)]
    rounding = [(v >> 14) & 0x3 for v in registers_at_kicks(emitted.data, "OFM_PRECISION")]
    natural = [2 if o.tflite_type.startswith("RESIZE") else 0 for o in stripes]  # NATURAL, else TFL
    assert 2 in natural and rounding == natural


@pytest.mark.parametrize("model", ["unet_transpose_64", "tiny_yolo_160"])
def test_shipped_upscaling_networks_emit_and_validate(model):
    """The shipped U-Net (TRANSPOSE_CONV decoder, concatenations) and Tiny YOLO (UpSampling2D)
    emit in one line of options with every upscaling op on the NPU, and validate."""
    from npuplan.api import plan_and_emit
    from npuplan.regstream import validate_tflite
    from tests.unit.emit.conftest import DATA

    planned, emitted = plan_and_emit(DATA / f"{model}.tflite", **U55_128)
    upscaling = [o for o in planned.lowered.npu_ops if o.resampling is not Resampling.NONE]
    assert upscaling and all(o.tflite_type != "TRANSPOSE_CONV" for o in planned.lowered.cpu_ops)
    assert validate_tflite(emitted.data).npu_operations == emitted.npu_operations
    assert set(registers_at_kicks(emitted.data, "IFM_UPSCALE")) - {0}


def test_a_resize_from_one_pixel_after_a_removed_reshape_runs_on_the_npu(tmp_path):
    """random_507 of /work/zoo_random5 in two ops: the EXPAND_DIMS before a resize from one pixel
    is removed, so the resize (a broadcast ADD of zeros read from the flash) cannot go back to the
    CPU; its constant first operand was refused and with it the whole network."""
    import numpy as np

    from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
    from npuplan.ir.types import DataType, Quantization
    from tests.unit.emit.conftest import emit_graph

    q = Quantization((0.05,), (-7,))
    x, e, y = (Tensor("x", (1, 1, 8), DataType.INT8, q), Tensor("e", (1, 1, 1, 8), DataType.INT8, q),
               Tensor("y", (1, 2, 2, 8), DataType.INT8, q))
    axis, size = np.array(0, dtype=np.int32), np.array([2, 2], dtype=np.int32)
    axis.flags.writeable = size.flags.writeable = False
    ops = (Op("EXPAND_DIMS", (x, Tensor("axis", (), DataType.INT32, None, axis)), (e,), frozen_options({}), 0),
           Op("RESIZE_BILINEAR", (e, Tensor("size", (2,), DataType.INT32, None, size)), (y,),
              frozen_options({"align_corners": False, "half_pixel_centers": False}), 1))
    planned, emitted, report = emit_graph(tmp_path, Graph("one_pixel", ops, (x,), (y,)))
    (add,) = planned.lowered.npu_ops
    assert add.op_type == "Add" and add.ifm.is_constant and report.npu_operations == emitted.npu_operations == 1
    assert (1 << 6) & registers_at_kicks(emitted.data, "IFM2_BROADCAST")[0] == 0  # the zeros stay first
