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
