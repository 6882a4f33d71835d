"""Networks with state run across invocations as TFLite runs them: TensorFlow's resource variables
(VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE, CALL_ONCE with its initialiser subgraph), checked
against LiteRT running the original model (a reference npuplan did not write)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ai_edge_litert", reason="needs LiteRT: pip install 'npuplan[run]'")

from npuplan.errors import ModelError  # noqa: E402
from npuplan.io.tflite_write import write_tflite  # noqa: E402
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options  # noqa: E402
from npuplan.ir.types import DataType  # noqa: E402
from npuplan.run import check_model  # noqa: E402
from npuplan.run.litert import ReferenceModel  # noqa: E402
from npuplan.run.runner import CompiledModel  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data" / "stateful"
START = np.array([[1.5, -2.0, 0.25, 4.0]], dtype=np.float32)


def _accumulator(*, call_once_first: bool = True, initialiser_op: str = "ASSIGN_VARIABLE") -> bytes:
    """s <- s + x, y = s + x: a float resource variable that CALL_ONCE initialises to START (the
    TensorFlow converter's shape; ``call_once_first=False`` puts CALL_ONCE after the read, as Vela does)."""
    x, read, y = (Tensor(n, (1, 4), DataType.FLOAT32) for n in ("x", "read", "y"))
    handle = Tensor("acc", (), DataType.RESOURCE)
    names = frozen_options({"container": "", "shared_name": "acc"})
    call = Op("CALL_ONCE", (), (), frozen_options({"init_subgraph_index": 1}))
    body = [Op("VAR_HANDLE", (), (handle,), names), Op("READ_VARIABLE", (handle,), (read,)),
            Op("ADD", (read, x), (y,), frozen_options({"fused_activation_function": "NONE"})),
            Op("ASSIGN_VARIABLE", (handle, y), ())]
    ops = [call, *body] if call_once_first else [*body[:2], call, *body[2:]]
    main = Graph("main", tuple(Op(o.type, o.inputs, o.outputs, o.options, k) for k, o in enumerate(ops)), (x,), (y,))
    init_handle = Tensor("acc_init", (), DataType.RESOURCE)
    start = Tensor("start", (1, 4), DataType.FLOAT32, data=START)
    init_ops = (Op("VAR_HANDLE", (), (init_handle,), names, 0),
                Op(initialiser_op, (init_handle, start), (), index=1))
    return write_tflite(Model("acc", (main, Graph("init", init_ops, (), ()))))


def _invocations(model: CompiledModel | ReferenceModel, x: np.ndarray, count: int) -> list[np.ndarray]:
    return [model.invoke([x])[0] for _ in range(count)]


def test_a_resource_variable_keeps_its_value_across_invocations_as_litert() -> None:
    data = _accumulator()
    x = np.array([[1.0, 2.0, 3.0, -4.0]], dtype=np.float32)
    ours, litert = _invocations(CompiledModel(data), x, 3), _invocations(ReferenceModel(data), x, 3)
    np.testing.assert_array_equal(ours, litert)
    np.testing.assert_array_equal(ours[2], START + 3 * x)  # initialised once, then accumulated


def test_reset_runs_the_initialiser_again() -> None:
    model, x = CompiledModel(_accumulator()), np.ones((1, 4), dtype=np.float32)
    first = model.invoke([x])[0]
    model.invoke([x])
    model.reset()
    np.testing.assert_array_equal(model.invoke([x])[0], first)


def test_a_read_before_call_once_reads_zeros_on_the_first_invocation() -> None:
    # Vela's order: READ_VARIABLE, then CALL_ONCE; the first read sees TensorFlow Lite Micro's start
    model, x = CompiledModel(_accumulator(call_once_first=False)), np.ones((1, 4), dtype=np.float32)
    np.testing.assert_array_equal(model.invoke([x])[0], x)
    np.testing.assert_array_equal(model.invoke([x])[0], x + x)  # CALL_ONCE's START was overwritten


def test_an_initialiser_that_computes_is_refused_in_one_line() -> None:
    with pytest.raises(ModelError, match="CALL_ONCE's subgraph 'init' computes with ADD"):
        CompiledModel(_accumulator(initialiser_op="ADD")).invoke([np.ones((1, 4), dtype=np.float32)])


def test_velas_file_of_a_tensorflow_variable_network_runs_like_the_original() -> None:
    reference = ReferenceModel((DATA / "tf_variable_state.tflite").read_bytes())
    compiled = CompiledModel.load(DATA / "tf_variable_state_vela.tflite")
    x = np.random.default_rng(0).integers(-128, 128, size=(1, 16), dtype=np.int8)
    ours, litert = _invocations(compiled, x, 3), _invocations(reference, x, 3)
    np.testing.assert_array_equal(ours, litert)
    assert not np.array_equal(ours[0], ours[2])  # the state evolved


def test_npuplans_file_of_a_tensorflow_variable_network_checks_bit_for_bit() -> None:
    result = check_model(DATA / "tf_variable_state.tflite", samples=3, seed=0)
    assert result.emitted.data.count(b"ethos-u") >= 1
    assert all(d.agrees and d.max_abs_diff == 0 for d in result.diffs), [str(d) for d in result.diffs]


def _half_scale_fc(seed: int) -> tuple[bytes, np.ndarray, np.ndarray]:
    """x (8x32 int8) -> FULLY_CONNECTED -> y with the stateful zoo's scales: 0.05 * 0.01 / 0.05, so
    the scaled accumulator often falls next to a half, where roundings part."""
    from npuplan.ir.types import Quantization

    rng = np.random.default_rng(seed)
    act = Quantization((0.05,), (-3,))
    w = np.clip(np.round(rng.normal(0, 32, (32, 32))), -127, 127).astype(np.int8)
    b = np.round(rng.normal(0, 25, 32)).astype(np.int32)
    x, y = Tensor("x", (8, 32), DataType.INT8, act), Tensor("y", (8, 32), DataType.INT8, act)
    op = Op("FULLY_CONNECTED", (x, Tensor("w", (32, 32), DataType.INT8, Quantization((0.01,), (0,)), w),
                                Tensor("b", (32,), DataType.INT32, Quantization((0.0005,), (0,)), b)), (y,),
            frozen_options(dict(fused_activation_function="NONE", weights_format="DEFAULT", keep_num_dims=False,
                                asymmetric_quantize_inputs=False)), 0)
    return write_tflite(Model("fc", (Graph("main", (op,), (x,), (y,)),))), w, b


def _rescale(acc: np.ndarray, *, double: bool) -> np.ndarray:
    """acc * 0.01 to int8 around -3 with TFLite's multiplier (the float32 scales' ratio in double,
    0.64 * 2^-6 as a 31-bit fraction): ``double`` rounds at bit 31 then at the shift (the NPU's TFL
    rounding), else once (LiteRT's reference kernels)."""
    import math

    fraction, exponent = math.frexp(float(np.float32(0.05)) * float(np.float32(0.01)) / float(np.float32(0.05)))
    multiplier, shift = round(fraction * (1 << 31)), -exponent
    values = []
    for a in acc.ravel().tolist():
        if double:
            high = a * multiplier
            high = (abs(high) + (1 << 30)) >> 31 if high >= 0 else -((abs(high) + (1 << 30) - 1) >> 31)
            mask, rem = (1 << shift) - 1, high & ((1 << shift) - 1)
            values.append((high >> shift) + (1 if rem > (mask >> 1) + (1 if high < 0 else 0) else 0))
        else:
            values.append((a * multiplier + (1 << (30 + shift))) >> (31 + shift))
    return np.clip(np.array(values).reshape(acc.shape) - 3, -128, 127)


def test_a_half_scale_fully_connected_differs_from_litert_only_by_the_named_rounding(tmp_path: Path) -> None:
    # the README's row: the NPU's TFL (double) rounding against LiteRT's single rounding; npuplan's
    # file computes the double rounding exactly and differs from LiteRT nowhere else
    from npuplan.api import plan_and_emit

    data, weights, bias = _half_scale_fc(3)
    path = tmp_path / "fc.tflite"
    path.write_bytes(data)
    compiled = CompiledModel(plan_and_emit(path)[1].data)
    reference = ReferenceModel(data, reference_kernels=True)
    rng, parted = np.random.default_rng(0), 0
    for _ in range(4):
        x = rng.integers(-128, 128, size=(8, 32), dtype=np.int8)
        ours, litert = compiled.invoke([x])[0], reference.invoke([x])[0]
        acc = (x.astype(np.int64) + 3) @ weights.astype(np.int64).T + bias
        np.testing.assert_array_equal(ours, _rescale(acc, double=True))
        np.testing.assert_array_equal(litert, _rescale(acc, double=False))
        parted += int((ours != litert).sum())
    assert parted > 0  # the case is one where the roundings part
