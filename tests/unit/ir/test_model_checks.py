"""The model verifier: each kind of damage gives one ModelError line naming the tensor or op."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from npuplan.errors import ModelError
from npuplan.ir.graph import Graph, Model, Tensor
from npuplan.ir.model_checks import Limits, check_model
from npuplan.ir.types import DataType, Quantization

from tests.unit.lowering._build import conv, fm, graph, model, op


def _conv_model() -> tuple[Model, Tensor, Tensor]:
    x, y = fm("x", (1, 8, 8, 4)), fm("y", (1, 8, 8, 8))
    return model(graph([conv(x, y)], [x], [y])), x, y


def _with_tensor(m: Model, old: Tensor, new: Tensor) -> Model:
    from npuplan.lowering._util import replace_tensor

    return replace(m, subgraphs=(replace_tensor(m.main, old, new),))


def _expect(m: Model, *fragments: str) -> None:
    with pytest.raises(ModelError) as raised:
        check_model(m)
    message = str(raised.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message


def test_a_well_formed_model_passes_unchanged() -> None:
    m, _, _ = _conv_model()
    assert check_model(m) is m


def test_negative_dimension() -> None:
    m, x, _ = _conv_model()
    _expect(_with_tensor(m, x, replace(x, shape=(1, -8, 8, 4))), "'x'", "negative dimension")


def test_tensor_over_the_byte_limit() -> None:
    m, x, _ = _conv_model()
    with pytest.raises(ModelError, match="needs 68719476736 bytes"):
        check_model(_with_tensor(m, x, replace(x, shape=(1, 65536, 65536, 16))), Limits(max_dim=1 << 20))


def test_buffer_shorter_than_its_shape() -> None:
    m, _, y = _conv_model()
    weights = m.main.ops[0].inputs[1]
    assert weights is not None and weights.data is not None
    short = replace(weights, data=weights.data.reshape(-1)[:5])
    _expect(_with_tensor(m, weights, short), "'y_w'", "holds 5 int8 values", "needs 288")


@pytest.mark.parametrize(
    ("quant", "fragment"),
    [
        (Quantization((float("nan"),), (0,)), "invalid quantization scale nan"),
        (Quantization((-0.5,), (0,)), "invalid quantization scale -0.5"),
        (Quantization((0.1,), (200,)), "zero point 200, outside the int8 range"),
        (Quantization((0.1, 0.2), (0,)), "2 quantization scales but 1 zero points"),
        (Quantization((0.1,) * 3, (0,) * 3, axis=3), "3 per-channel scales but 4 channels"),
        (Quantization((0.1,) * 4, (0,) * 4, axis=7), "per channel along axis 7"),
    ],
)
def test_broken_quantization(quant: Quantization, fragment: str) -> None:
    m, x, _ = _conv_model()
    _expect(_with_tensor(m, x, replace(x, quant=quant)), "'x'", fragment)


def test_read_before_write_is_a_cycle_or_out_of_order() -> None:
    x, y, z = fm("x", (1, 4, 4, 4)), fm("y", (1, 4, 4, 4)), fm("z", (1, 4, 4, 4))
    first, second = op("ADD", [x, y], [z], 0), op("RELU", [x], [y], 1)
    _expect(model(graph([first, second], [x], [z])), "reads 'y' before op 1 writes it")


def test_tensor_written_twice() -> None:
    x, y = fm("x", (1, 4, 4, 4)), fm("y", (1, 4, 4, 4))
    _expect(model(graph([op("RELU", [x], [y], 0), op("RELU", [x], [y], 1)], [x], [y])), "'y' is written by two ops")


def test_dangling_input_and_unwritten_output() -> None:
    x, y, ghost = fm("x", (1, 4, 4, 4)), fm("y", (1, 4, 4, 4)), fm("ghost", (1, 4, 4, 4))
    _expect(model(graph([op("ADD", [x, ghost], [y], 0)], [x], [y])), "reads 'ghost', which is neither")
    _expect(model(graph([op("RELU", [x], [y], 0)], [x], [y, ghost])), "graph output 'ghost' is never written")


def test_op_without_outputs_and_writes_to_constants() -> None:
    x = fm("x", (1, 4, 4, 4))
    _expect(model(graph([op("RELU", [x], [], 0)], [x], [])), "op 0 (RELU) has no outputs")
    c = Tensor("c", (1, 4, 4, 4), DataType.INT8, None, np.zeros((1, 4, 4, 4), np.int8))
    _expect(model(graph([op("RELU", [x], [c], 0)], [x], [c])), "writes constant tensor 'c'")


def test_operator_count_limit() -> None:
    x, y = fm("x", (1, 4, 4, 4)), fm("y", (1, 4, 4, 4))
    m = Model("big", (Graph("main", (op("RELU", [x], [y], 0),), (x,), (y,)),))
    with pytest.raises(ModelError, match="has 1 operators; npuplan plans at most 0"):
        check_model(m, Limits(max_ops=0))


def test_wrong_operand_counts_are_refused() -> None:
    """Found by the structure-aware fuzzer: a CONV_2D without its weights reached lowering."""
    x, y = fm("x", (1, 4, 4, 4)), fm("y", (1, 4, 4, 4))
    _expect(model(graph([op("CONV_2D", [x], [y], 0)], [x], [y])), "CONV_2D takes 2 to 3 input tensors (this one has 1)")
    _expect(model(graph([op("ADD", [x, None], [y], 0)], [x], [y])), "ADD takes 2 input tensors")


def test_weights_with_an_out_of_range_zero_point_are_refused() -> None:
    """Found by byte fuzzing: a zero point of 3690987520 overflowed the weight correction (int16)."""
    m, _, _ = _conv_model()
    weights = m.main.ops[0].inputs[1]
    assert weights is not None
    bad = replace(weights, quant=Quantization((0.01,), (3690987520,)))
    _expect(_with_tensor(m, weights, bad), "'y_w'", "zero point 3690987520")


def _bias_declaring(axis: int, scales: int) -> Model:
    m, _, _ = _conv_model()
    bias = m.main.ops[0].inputs[2]
    assert bias is not None and bias.shape == (8,)
    return _with_tensor(m, bias, replace(bias, quant=Quantization((0.001,) * scales, (0,) * scales, axis=axis)))


def test_a_1d_bias_declaring_its_channels_along_axis_3_is_accepted_with_a_warning(caplog) -> None:
    """A converter-written MobileNet's biases carry the depthwise filter's quantized_dimension (3):
    TensorFlow Lite Micro runs the file and Vela compiles it, so npuplan plans it and says so."""
    from npuplan.ir.model_checks import model_warnings

    m = _bias_declaring(axis=3, scales=8)
    with caplog.at_level("WARNING", logger="npuplan.ir.model_checks"):
        assert check_model(m) is m
    (warning,) = model_warnings(m)
    assert "1 1-D tensor(s) ('y_b'" in warning and "axis 3" in warning
    assert warning in caplog.text
    assert model_warnings(_conv_model()[0]) == ()


def test_a_1d_tensor_with_as_many_scales_as_another_axis_is_still_refused() -> None:
    """Only one scale per value can be read along the tensor's only axis; 4 scales for 8 values
    would compute with the wrong scales."""
    _expect(_bias_declaring(axis=3, scales=4), "'y_b'", "per channel along axis 3 but has 1 dimensions")


def test_a_planned_model_with_a_stray_bias_axis_notes_the_warning_in_its_report(tmp_path) -> None:
    from npuplan.api import plan
    from npuplan.io.tflite_write import write_tflite

    path = tmp_path / "stray.tflite"
    path.write_bytes(write_tflite(_bias_declaring(axis=3, scales=8)))
    notes = plan(path).schedule.notes
    assert any(n.startswith("warning: 1 1-D tensor(s)") for n in notes), notes
