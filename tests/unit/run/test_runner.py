"""The runner of compiled files: memory as TensorFlow Lite Micro lays it out, regions as the ethos-u
kernel gives them, CPU operators through LiteRT (the reference), variable tensors persisting."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.errors import InputError, ModelError, ValidationError
from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
from npuplan.ir.types import DataType
from npuplan.run import CompiledModel, ReferenceModel, compare_runs, random_inputs
from npuplan.run.layout import CpuStep, NpuStep

from ._files import Q, SHAPE, _bytes_tensor, _file, add_relu_model, cpu_npu_cpu_file, dma_payload, lstm_model

pytest.importorskip("ai_edge_litert", reason='LiteRT (the "run" extra) runs the CPU operators')

X = np.arange(-8, 8, dtype=np.int8).reshape(SHAPE) * 9


def _copy_3_to_4(payload: bytes, regions: dict[int, np.ndarray]) -> None:
    """A stand-in NPU that copies region 3 into region 4, checking the regions it is given."""
    assert regions[1] is regions[2]  # the fast scratch is the scratch tensor: the same bytes
    assert not regions[0].flags.writeable and bytes(regions[0]) == bytes(range(16))
    assert regions[3].dtype == np.uint8 and regions[3].ndim == 1 and regions[3].size == 16
    regions[4][:] = regions[3]


def test_a_cpu_only_model_runs_as_litert_runs_it() -> None:
    data = add_relu_model()
    model = CompiledModel(data)
    assert model.layout.steps == (CpuStep(0, 1),)  # one run of CPU operators, one small model
    assert compare_runs(model, ReferenceModel(data), samples=3, seed=4)[0].differing == 0
    assert (model.invoke([X])[0] == np.maximum(np.clip(2 * X.astype(int), -128, 127), 0)).all()


def test_cpu_operators_around_an_ethos_u_operator_see_its_regions_in_the_arena() -> None:
    model = CompiledModel(cpu_npu_cpu_file(b"COP1"), npu=_copy_3_to_4)
    assert [type(s) for s in model.layout.steps] == [CpuStep, NpuStep, CpuStep]
    assert model.layout.arena_bytes == 64
    expected = ReferenceModel(add_relu_model()).invoke([X])[0]
    assert (model.invoke([X])[0] == expected).all()
    arena = model._arena  # t (offset 16) and u (offset 32) are the scratch tensor's bytes
    assert (arena[16:32].view(np.int8) == np.clip(2 * X.astype(int), -128, 127).ravel()).all()
    assert (arena[32:48] == arena[16:32]).all()


def test_a_wrong_npu_result_is_seen() -> None:
    def wrong(payload: bytes, regions: dict[int, np.ndarray]) -> None:
        regions[4][:] = regions[3] + 1

    model = CompiledModel(cpu_npu_cpu_file(b"COP1"), npu=wrong)
    assert (model.invoke([X])[0] != ReferenceModel(add_relu_model()).invoke([X])[0]).any()


def test_a_stream_writing_the_flash_is_a_violation() -> None:
    def writes_flash(payload: bytes, regions: dict[int, np.ndarray]) -> None:
        regions[0][0] = 1

    with pytest.raises(ValidationError, match="ethos-u operator 1"):
        CompiledModel(cpu_npu_cpu_file(b"COP1"), npu=writes_flash).invoke([X])


def test_wrong_inputs_are_one_line_errors() -> None:
    model = CompiledModel(add_relu_model())
    with pytest.raises(InputError, match="has 1 input"):
        model.invoke([X, X])
    with pytest.raises(InputError, match=r"must be int8 \[1, 2, 2, 4\], not int16"):
        model.invoke([X.astype(np.int16)])
    with pytest.raises(InputError, match="not int8 \\[16\\]"):
        model.invoke([X.ravel()])


def test_a_custom_cpu_operator_litert_lacks_is_refused_in_one_line() -> None:
    # custom operators LiteRT's resolver has (TFLite_Detection_PostProcess) run; others fail in LiteRT's words
    x, y = (Tensor(n, SHAPE, DataType.INT8, Q) for n in ("x", "y"))
    data = write_tflite(Model("m", (Graph("main", (Op("CUSTOM:mystery", (x,), (y,), index=0),), (x,), (y,)),)))
    with pytest.raises(ModelError, match=r"CPU operator 0 \(CUSTOM:mystery\): LiteRT cannot run it "
                                         r"\(Encountered unresolved custom op: mystery"):
        CompiledModel(data)


def test_lstm_state_persists_between_invocations_as_in_litert() -> None:
    data = lstm_model(steps=4, features=8, cells=8)
    model, reference = CompiledModel(data), ReferenceModel(data)
    assert compare_runs(model, reference, samples=3, seed=2)[0].differing == 0  # state evolves alike
    model.reset()
    x = random_inputs(model.input_specs, np.random.default_rng(0))
    first, second = model.invoke(x)[0], model.invoke(x)[0]
    assert (first != second).any()  # the second run starts from the first run's state
    model.reset()
    assert (model.invoke(x)[0] == first).all()


def test_a_variable_tensor_in_the_arena_keeps_its_bytes_for_the_npu() -> None:
    x, y = (Tensor(n, SHAPE, DataType.INT8, Q) for n in ("x", "y"))
    state = Tensor("state", SHAPE, DataType.INT8, Q, is_variable=True)
    scratch = Tensor("scratch", (48,), DataType.UINT8)
    op = Op("CUSTOM:ethos-u", (_bytes_tensor("cms", b"COP1"), _bytes_tensor("ro", bytes(16)), scratch, scratch, x,
                               state), (y,), frozen_options({"custom_options": b"\x01\x04\x01"}), 0)
    data = _file(Graph("main", (op,), (x,), (y,)), {scratch: 0, x: 0, state: 16, y: 32})

    def accumulate(payload: bytes, regions: dict[int, np.ndarray]) -> None:
        regions[4][:] = regions[4] + regions[3]  # state += x
        regions[5][:] = regions[4]

    model = CompiledModel(data, npu=accumulate)
    ones = np.ones(SHAPE, np.int8)
    assert [int(model.invoke([ones])[0].max()) for _ in range(3)] == [1, 2, 3]
    model.reset()
    assert int(model.invoke([ones])[0].max()) == 1


def test_the_dma_stream_file_is_laid_out_as_validate_replays_it() -> None:
    from npuplan.regstream import validate_tflite

    data = cpu_npu_cpu_file(dma_payload(src_region=1, src=16, dst_region=1, dst=32, length=16))
    report = validate_tflite(data)
    assert report.dma_operations == 1
    step = CompiledModel(data, npu=_copy_3_to_4).layout.steps[1]
    assert isinstance(step, NpuStep) and dict(step.regions) == report.streams[0].region_tensors


def test_command_words_encode_as_the_decoder_reads_them() -> None:
    from npuplan.regstream.words import decode_words, encode_commands

    commands = [("DMA0_SRC", (3 << 32) | 0x40), ("IFM_ZERO_POINT", 0xFF80), ("NPU_OP_STOP", 0xFFFF)]
    assert [(w.name, w.value) for w in decode_words(encode_commands(commands))] == commands


def test_a_cpu_operator_with_subgraphs_of_its_own_runs_them() -> None:
    """A WHILE loop (its condition and body are the file's subgraphs 1 and 2): y = x doubled 3 times."""
    def scalar(name: str, value: int | None = None) -> Tensor:
        data = None if value is None else np.array(value, dtype=np.int32)
        return Tensor(name, (), DataType.INT32, data=data)

    def f32(name: str) -> Tensor:
        return Tensor(name, (1, 4), DataType.FLOAT32)

    ci, cy, cb = scalar("i"), f32("y"), Tensor("go", (), DataType.BOOL)
    cond = Graph("cond", (Op("LESS", (ci, scalar("three", 3)), (cb,), index=0),), (ci, cy), (cb,))
    bi, by, bi2, by2 = scalar("i"), f32("y"), scalar("i2"), f32("y2")
    plain = frozen_options({"fused_activation_function": "NONE"})
    body = Graph("body", (Op("ADD", (bi, scalar("one", 1)), (bi2,), plain, 0), Op("ADD", (by, by), (by2,), plain, 1)),
                 (bi, by), (bi2, by2))
    x, i_out, y_out = f32("x"), scalar("i_out"), f32("y_out")
    loop = Op("WHILE", (scalar("zero", 0), x), (i_out, y_out),
              frozen_options({"cond_subgraph_index": 1, "body_subgraph_index": 2}), 0)
    data = write_tflite(Model("m", (Graph("main", (loop,), (x,), (y_out,)), cond, body)))
    model = CompiledModel(data)
    assert len(model.layout.others) == 2
    assert model.invoke([np.full((1, 4), 1.5, np.float32)])[0].tolist() == [[12.0] * 4]


def test_a_cpu_output_larger_than_the_file_declares_is_a_one_line_error() -> None:
    """Vela's files can keep a dynamic dimension's placeholder (1) on a CPU operator's output."""
    x = Tensor("x", SHAPE, DataType.INT8, Q)
    y = Tensor("y", (1, 4), DataType.INT8, Q)  # LiteRT computes [1, 16]
    shape = Tensor("shape", (2,), DataType.INT32, data=np.array([1, 16], dtype=np.int32))
    data = write_tflite(Model("m", (Graph("main", (Op("RESHAPE", (x, shape), (y,), index=0),), (x,), (y,)),)))
    with pytest.raises(ModelError, match=r"writes 'y' as \[1, 16\] but the file declares \[1, 4\]"):
        CompiledModel(data).invoke([X])
