"""Resource variables (TensorFlow's ``stateful=True`` RNNs and ``tf.Variable`` state convert to
CALL_ONCE, VAR_HANDLE, READ_VARIABLE and ASSIGN_VARIABLE, with an initialiser subgraph): the model
verifier accepts the operators that write no tensor, the writer keeps CALL_ONCE's subgraph index,
lowering keeps the effects in order, and the emitted file keeps the initialiser subgraph."""

from __future__ import annotations

import numpy as np
import pytest
import tflite

from npuplan.api import plan_and_emit
from npuplan.io.tflite import parse_tflite
from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
from npuplan.ir.model_checks import check_model
from npuplan.ir.types import DataType, Quantization
from npuplan.regstream import validate_tflite

_Q = Quantization((0.05,), (0,))


def _handle(name: str) -> Tensor:
    return Tensor(name, (), DataType.RESOURCE)


def stateful_network() -> bytes:
    """y = relu(x + state); state <- y. The initialiser (subgraph 1) sets the state to 2s."""
    init_handle = _handle("h0")
    start = Tensor("start", (1, 16), DataType.INT8, _Q, np.full((1, 16), 2, dtype=np.int8))
    init = Graph("init", (Op("VAR_HANDLE", (), (init_handle,), frozen_options(dict(shared_name="state"))),
                          Op("ASSIGN_VARIABLE", (init_handle, start), ())), (), ())
    h, x = _handle("h"), Tensor("x", (1, 16), DataType.INT8, _Q)
    state, y = Tensor("state", (1, 16), DataType.INT8, _Q), Tensor("y", (1, 16), DataType.INT8, _Q)
    ops = (Op("CALL_ONCE", (), (), frozen_options(dict(init_subgraph_index=1))),
           Op("VAR_HANDLE", (), (h,), frozen_options(dict(shared_name="state"))),
           Op("READ_VARIABLE", (h,), (state,)),
           Op("ADD", (x, state), (y,), frozen_options(dict(fused_activation_function="RELU"))),
           Op("ASSIGN_VARIABLE", (h, y), ()))
    return write_tflite(Model("stateful", (Graph("main", ops, (x,), (y,)), init)))


def test_the_model_verifier_accepts_operators_that_write_only_a_resource_variable():
    model = parse_tflite(stateful_network())
    assert check_model(model) is model
    assert model.main.ops[0].options["init_subgraph_index"] == 1  # its field once read as the table's Init
    assert model.main.ops[1].outputs[0].dtype is DataType.RESOURCE


def test_the_written_file_runs_as_tflite_runs_it_across_invocations():
    """LiteRT runs the file npuplan wrote (the state carried from one invocation to the next)."""
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    it = litert.Interpreter(model_content=write_tflite(parse_tflite(stateful_network())))
    it.allocate_tensors()
    x = np.ones((1, 16), dtype=np.int8)
    seen = []
    for _ in range(3):
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        seen.append(int(it.get_tensor(it.get_output_details()[0]["index"])[0, 0]))
    assert seen == [3, 4, 5]


def test_the_emitted_file_initialises_the_state_first_and_keeps_the_initialiser(tmp_path):
    path = tmp_path / "stateful.tflite"
    path.write_bytes(stateful_network())
    plan, emitted = plan_and_emit(path)
    assert [o.tflite_type for o in plan.lowered.ops][:3] == ["CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE"]
    assert plan.lowered.ops[-1].tflite_type == "ASSIGN_VARIABLE"
    model = tflite.Model.GetRootAsModel(emitted.data, 0)
    assert model.SubgraphsLength() == 2 and model.Subgraphs(1).OperatorsLength() == 2
    sg = model.Subgraphs(0)
    codes = [model.OperatorCodes(sg.Operators(i).OpcodeIndex()) for i in range(sg.OperatorsLength())]
    assert [c.CustomCode() for c in codes].count(b"ethos-u") == 1  # the ADD: one NPU partition
    assert len(validate_tflite(emitted.data).streams) == 1
    back = parse_tflite(emitted.data)
    assert back.main.ops[0].type == "CALL_ONCE" and back.main.ops[0].options["init_subgraph_index"] == 1


def test_a_call_once_of_its_own_subgraph_or_a_missing_one_is_refused_in_one_line():
    from dataclasses import replace

    from npuplan.errors import ModelError

    model = parse_tflite(stateful_network())
    call = model.main.ops[0]
    for index in (0, 2, None):
        options = frozen_options({} if index is None else dict(init_subgraph_index=index))
        broken = replace(model, subgraphs=(replace(model.main, ops=(replace(call, options=options),
                                                                   *model.main.ops[1:])), model.subgraphs[1]))
        with pytest.raises(ModelError, match=r"CALL_ONCE\) calls subgraph .*not another of the model's 2"):
            check_model(broken)
    assign = model.main.ops[-1]
    short = replace(model, subgraphs=(replace(model.main, ops=(*model.main.ops[:-1], replace(
        assign, inputs=assign.inputs[:1]))), model.subgraphs[1]))
    with pytest.raises(ModelError, match="ASSIGN_VARIABLE takes 2 input tensors"):
        check_model(short)
