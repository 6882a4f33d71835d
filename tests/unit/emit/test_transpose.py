"""TRANSPOSE emitted as Vela emits it: a 1x1 average pool walking the IFM, writing its OFM with
the height and width strides swapped (the transposed map laid out W x H x C)."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization
from tests.unit.emit._stream import registers_at_kicks
from tests.unit.lowering._build import const

U55_128 = {"accelerator_config": "ethos-u55-128", "system_config": "Ethos_U55_High_End_Embedded",
           "memory_mode": "Shared_Sram"}
U65_DEDICATED = {"accelerator_config": "ethos-u65-256", "system_config": "Ethos_U65_High_End",
                 "memory_mode": "Dedicated_Sram_384KB"}


def _transpose_model(tmp_path) -> str:
    q = Quantization((0.05,), (3,))
    x, y = Tensor("x", (1, 8, 4, 16), DataType.INT8, q), Tensor("y", (1, 4, 8, 16), DataType.INT8, q)
    perm = const("perm", [0, 2, 1, 3], DataType.INT32, None)
    graph = Graph("main", (Op("TRANSPOSE", (x, perm), (y,), frozen_options({}), 0),), (x,), (y,))
    path = tmp_path / "transpose.tflite"
    path.write_bytes(write_tflite(Model("transpose", (graph,))))
    return str(path)


@pytest.mark.parametrize("options", [U55_128, U65_DEDICATED])
def test_a_transpose_writes_with_swapped_strides(tmp_path, options):
    from npuplan.api import plan_and_emit
    from npuplan.regstream import validate_tflite

    planned, emitted = plan_and_emit(_transpose_model(tmp_path), **options)
    assert not planned.lowered.cpu_ops and [o.tflite_type for o in planned.lowered.npu_ops] == ["TRANSPOSE"]
    assert validate_tflite(emitted.data).npu_operations == emitted.npu_operations
    # walking the 8 x 4 x 16 input: one row down is one column of the 4 x 8 x 16 output (16 bytes),
    # one column right is one row of it (8 * 16 bytes)
    assert set(registers_at_kicks(emitted.data, "OFM_STRIDE_Y")) == {16}
    assert set(registers_at_kicks(emitted.data, "OFM_STRIDE_X")) == {128}
    assert set(registers_at_kicks(emitted.data, "OFM_STRIDE_C")) == {1}


def _scaled_copy(tmp_path, kind: str, out_dtype: DataType, q_out: Quantization) -> tuple[int, set[int]]:
    """A one-operator ``kind`` network (int8 8x8x16, scale 0.05) emitted on the 128-MAC Ethos-U55:
    the OFM_SCALE register the scale ratio should give, and the ones the stream sets."""
    import numpy as np

    from npuplan.api import plan_and_emit
    from npuplan.lowering.fixedpoint import quantise_scale

    x = Tensor("x", (1, 8, 8, 16), DataType.INT8, Quantization((0.05,), (3,)))
    y = Tensor("y", (1, 8, 8, 16), out_dtype, q_out)
    path = tmp_path / f"{kind.lower()}.tflite"
    path.write_bytes(write_tflite(Model(kind, (Graph("main", (Op(kind, (x,), (y,), frozen_options({}), 0),), (x,), (y,)),))))
    planned, emitted = plan_and_emit(str(path), **U55_128)
    assert not planned.lowered.cpu_ops
    scale, shift = quantise_scale(float(np.float32(0.05)) / float(np.float32(q_out.scale[0])))  # float32 scales
    return scale | (shift << 32), set(registers_at_kicks(emitted.data, "OFM_SCALE"))


def test_abs_takes_its_output_scale_from_the_scale_ratio(tmp_path):
    """ABS is a unary elementwise op: the generator reads its output scale from the OFM's
    quantization, which the emitter sets to the IFM/OFM scale ratio (as Vela does)."""
    expected, scales = _scaled_copy(tmp_path, "ABS", DataType.INT8, Quantization((0.04,), (-5,)))
    assert scales == {expected}


def test_quantize_is_a_copy_scaled_by_the_scale_ratio(tmp_path):
    """A requantizing QUANTIZE (int8 -> uint8) is a 1x1 pool scaled by the IFM/OFM scale ratio
    (the API's fused-quantize scaling, as Vela emits it), not the average's scaling."""
    expected, scales = _scaled_copy(tmp_path, "QUANTIZE", DataType.UINT8, Quantization((0.03,), (120,)))
    assert scales == {expected}


def test_a_square_transpose_between_convolutions_is_neither_rolled_nor_bricked(tmp_path):
    """random_517 of /work/zoo_random5 in three ops: a square transpose's OFM was cascaded into a
    rolling buffer of its rows (they are the tensor's columns: the emitter refused it) or stored in
    bricks (it writes NHWC: the next convolution read bytes nothing wrote, an invalid file)."""
    import numpy as np

    from npuplan.commands.types import BufferKind, NpuStripeCommand
    from npuplan.lowering.formats import linear_format_tensors
    from tests.unit.emit.conftest import emit_graph

    q = Quantization((0.05,), (3,))
    x, t, u, y = (Tensor(n, (1, 32, 32, 8), DataType.INT8, q) for n in ("x", "t", "u", "y"))
    perm = const("perm", [0, 2, 1, 3], DataType.INT32, None)
    conv = {"padding": "SAME", "stride_h": 1, "stride_w": 1, "dilation_h_factor": 1, "dilation_w_factor": 1,
            "fused_activation_function": "NONE"}

    def weights(name: str):
        return (const(name, np.arange(8 * 9 * 8).reshape(8, 3, 3, 8) % 5 - 2),
                const(name + "_b", np.zeros(8), DataType.INT32, None))

    ops = (Op("CONV_2D", (x, *weights("w1")), (t,), frozen_options(conv), 0),
           Op("TRANSPOSE", (t, perm), (u,), frozen_options({}), 1),
           Op("CONV_2D", (u, *weights("w2")), (y,), frozen_options(conv), 2))
    for options in (U55_128, {**U55_128, "accelerator_config": "ethos-u55-256", "arena_cache_size": "262144"}):
        planned, emitted, report = emit_graph(tmp_path, Graph("square", ops, (x,), (y,)), options)
        assert "u" in linear_format_tensors(planned.lowered)
        writes = {c.ofm.buffer.kind for c in planned.commands if isinstance(c, NpuStripeCommand) and c.ofm.tensor == "u"}
        assert writes == {BufferKind.FEATURE_MAP}
        assert report.npu_operations == emitted.npu_operations


@pytest.mark.parametrize("options", [U55_128, U65_DEDICATED])
def test_a_channel_shuffle_is_emitted_in_two_steps_and_runs_as_numpy_shuffles(tmp_path, options):
    """ShuffleNet's (1, 6, 6, 12) -> (1, 6, 6, 3, 4) -> swap the last two -> (1, 6, 6, 12): the
    transpose of three merged axes in two 1x1 pools or one 1x1 convolution (``lowering.transposes``), each one-step pool
    as Vela emits it, the second reading the first's output (Vela's default core runs it on the NPU)."""
    import numpy as np

    from npuplan.run.runner import CompiledModel
    from tests.unit.emit.conftest import emit_graph

    q = Quantization((0.05,), (3,))
    x, y = Tensor("x", (1, 6, 6, 12), DataType.INT8, q), Tensor("y", (1, 6, 6, 12), DataType.INT8, q)
    grouped, shuffled = Tensor("g", (1, 6, 6, 3, 4), DataType.INT8, q), Tensor("s", (1, 6, 6, 4, 3), DataType.INT8, q)
    ops = (Op("RESHAPE", (x, const("s1", [1, 6, 6, 3, 4], DataType.INT32, None)), (grouped,), frozen_options({}), 0),
           Op("TRANSPOSE", (grouped, const("perm", [0, 1, 2, 4, 3], DataType.INT32, None)), (shuffled,),
              frozen_options({}), 1),
           Op("RESHAPE", (shuffled, const("s2", [1, 6, 6, 12], DataType.INT32, None)), (y,), frozen_options({}), 2))
    planned, emitted, report = emit_graph(tmp_path, Graph("shuffle", ops, (x,), (y,)), options)
    # two 1x1 pools, or in its other form one 1x1 convolution permuting each pixel's channels,
    # whichever the planner prices cheaper: on the NPU either way
    assert not planned.lowered.cpu_ops and {o.tflite_type for o in planned.lowered.npu_ops} == {"TRANSPOSE"}
    assert report.npu_operations == emitted.npu_operations
    data = np.random.default_rng(3).integers(-128, 128, (1, 6, 6, 12)).astype(np.int8)
    (out,) = CompiledModel(emitted.data).invoke([data])
    assert np.array_equal(out, data.reshape(1, 6, 6, 3, 4).transpose(0, 1, 2, 4, 3).reshape(1, 6, 6, 12))


@pytest.mark.parametrize("shape,options,staged,split", [
    ((1, 1, 25, 48), U55_128, False, True),
    ((1, 16, 16, 16), U65_DEDICATED, True, False),
])
def test_a_transpose_in_its_cheapest_form_runs_as_litert_runs_it(tmp_path, shape, options, staged, split):
    """NHWC -> NCHW as PyTorch exports write it. pt_audio1d_49's 25 x 48 map (25 rows group in no
    tile) on u55-128: three steps with a tile convolution (``transposes.StepForm``'s splits).
    pt_activations_16's 16 x 16 x 16 on the U65, whose output (a network output) lies in the slow
    arena: written through a staged copy (``lowering.staged_writes``). The emitted file on the
    simulator gives LiteRT's bytes."""
    from tests.unit.emit.test_grouped_convs import _run_both

    q = Quantization((0.05,), (3,))
    n, h, w, c = shape
    x, y = Tensor("x", shape, DataType.INT8, q), Tensor("y", (n, c, h, w), DataType.INT8, q)
    perm = const("perm", [0, 3, 1, 2], DataType.INT32, None)
    graph = Graph("nchw", (Op("TRANSPOSE", (x, perm), (y,), frozen_options({}), 0),), (x,), (y,))
    ops, got, expected = _run_both(tmp_path, graph, options)
    assert any(o.name.endswith("_staged_avgpool") for o in ops) == staged
    assert (len([o for o in ops if o.writes_transposed]) == 3) == split
    assert np.array_equal(got, expected)
