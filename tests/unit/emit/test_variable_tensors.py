"""Networks with variable tensors (state TFLite keeps between invocations): the state is planned
live for the whole invocation, emitted as a variable tensor (not a network input or output), and
the validator starts it written and refuses a file where anything else writes its bytes."""

from __future__ import annotations

import struct

import numpy as np
import pytest
import tflite

from npuplan.api import plan_and_emit
from npuplan.emit.backend import EmitBackend
from npuplan.errors import ValidationError
from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization
from npuplan.regstream import validate_tflite

_Q8 = Quantization((0.05,), (-3,))


def _const(name: str, shape: tuple[int, ...], dtype: type, seed: int) -> np.ndarray:
    values = np.random.default_rng(seed).integers(-60, 60, size=shape).astype(dtype)
    values.flags.writeable = False
    return values


def _fc(name: str, x: Tensor, units: int) -> Op:
    w = Tensor(f"{name}_w", (units, x.shape[-1]), DataType.INT8, Quantization((0.01,), (0,)),
               _const(name, (units, x.shape[-1]), np.int8, 1))
    b = Tensor(f"{name}_b", (units,), DataType.INT32, Quantization((0.0005,), (0,)), _const(name, (units,), np.int32, 2))
    y = Tensor(name, (x.shape[0], units), DataType.INT8, _Q8)
    return Op("FULLY_CONNECTED", (x, w, b), (y,), frozen_options(dict(fused_activation_function="NONE")))


def svdf_network() -> bytes:
    """FULLY_CONNECTED -> SVDF (int8, its int16 activation state variable) -> FULLY_CONNECTED."""
    x = Tensor("x_in", (1, 16), DataType.INT8, _Q8)
    first = _fc("x", x, 16)
    state = Tensor("state", (1, 8 * 5), DataType.INT16, Quantization((2.0**-8,), (0,)), None, is_variable=True)
    y = Tensor("svdf", (1, 8), DataType.INT8, _Q8)
    svdf = Op("SVDF", (first.outputs[0],
                       Tensor("wf", (8, 16), DataType.INT8, Quantization((0.01,), (0,)), _const("wf", (8, 16), np.int8, 3)),
                       Tensor("wt", (8, 5), DataType.INT16, Quantization((2.0**-10,), (0,)),
                              _const("wt", (8, 5), np.int16, 4)),
                       Tensor("sb", (8,), DataType.INT32, Quantization((1e-5,), (0,)), _const("sb", (8,), np.int32, 5)),
                       state), (y,), frozen_options(dict(rank=1, fused_activation_function="RELU")))
    last = _fc("logits", y, 4)
    return write_tflite(Model("svdf", (Graph("main", (first, svdf, last), (x,), last.outputs),)))


def _offsets(data: bytes) -> tuple[int, list[int]]:
    """Where the offline memory plan's offsets start in ``data`` and the offsets, by tensor."""
    model = tflite.Model.GetRootAsModel(data, 0)
    count = model.Subgraphs(0).TensorsLength()
    for i in range(model.MetadataLength()):
        if model.Metadata(i).Name() == b"OfflineMemoryAllocation":
            words = bytes(model.Buffers(model.Metadata(i).Buffer()).DataAsNumpy())
            start = data.find(words) + 12
            return start, list(struct.unpack(f"<{count}i", data[start:start + 4 * count]))
    raise AssertionError("no offline memory plan")


def _tensor(data: bytes, name: str) -> int:
    sg = tflite.Model.GetRootAsModel(data, 0).Subgraphs(0)
    return next(i for i in range(sg.TensorsLength()) if sg.Tensors(i).Name() == name.encode())


@pytest.fixture(scope="module")
def emitted(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("svdf") / "svdf.tflite"
    path.write_bytes(svdf_network())
    return plan_and_emit(path)[1].data


@pytest.mark.parametrize("backend", list(EmitBackend))
def test_a_cpu_svdf_between_npu_layers_emits_and_validates_with_its_state_kept_apart(tmp_path, backend):
    """The SVDF stays on the CPU, its state in the arena: once it shared the network input's bytes
    and the emitter's own validation refused the file."""
    pytest.importorskip("ethosu.vela") if backend is EmitBackend.VELA else None
    path = tmp_path / "svdf.tflite"
    path.write_bytes(svdf_network())
    plan, emitted = plan_and_emit(path, backend=backend)
    state = next(t for t in plan.lowered.inputs if t.name == "state")
    assert state in plan.lowered.outputs  # planned live from before the first op to after the last
    data = emitted.data
    report = validate_tflite(data)
    assert len(report.streams) == 2
    sg = tflite.Model.GetRootAsModel(data, 0).Subgraphs(0)
    names = lambda ids: [sg.Tensors(int(i)).Name().decode() for i in ids]  # noqa: E731
    assert names(sg.InputsAsNumpy()) == ["x_in"] and names(sg.OutputsAsNumpy()) == ["logits"]
    index = _tensor(data, "state")
    assert sg.Tensors(index).IsVariable() and _offsets(data)[1][index] >= 0


def test_a_file_whose_variable_shares_bytes_with_another_tensor_is_rejected(emitted):
    """Move the network input into the state's bytes: writing it clobbers what the previous
    invocation left there."""
    start, offsets = _offsets(emitted)
    state, x = _tensor(emitted, "state"), _tensor(emitted, "x_in")
    assert validate_tflite(emitted)
    broken = bytearray(emitted)
    struct.pack_into("<i", broken, start + 4 * x, offsets[state] + 16)
    with pytest.raises(ValidationError, match=r"network input \d+ writes bytes \d+\.\.\d+ of variable tensor "
                       r"\d+ \('state'\), whose value must persist"):
        validate_tflite(bytes(broken))



def test_a_variable_starts_written_and_a_cpu_op_updates_it_in_place(emitted):
    """Nothing in the invocation writes the state before the SVDF reads it: it holds the previous
    invocation's value (the validator once said it was read before anything wrote it)."""
    assert validate_tflite(emitted).npu_operations == 2


def test_a_file_with_no_ethos_u_operator_is_valid():
    """Vela writes a network it maps nothing of (an LSTM alone, on its default core) with every
    operator left on the CPU: nothing to replay, nothing wrong."""
    assert validate_tflite(svdf_network()).streams == ()
