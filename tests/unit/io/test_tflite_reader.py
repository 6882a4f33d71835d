"""Reader tests on the shipped small models and on broken bytes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from npuplan.errors import ModelError
from npuplan.io.tflite import parse_tflite, read_tflite
from npuplan.ir.types import DataType

DATA = Path(__file__).resolve().parents[2] / "data"


def test_reads_ds_cnn_ops_tensors_and_options() -> None:
    model = read_tflite(DATA / "ds_cnn_kws.tflite")
    graph = model.main
    assert len(model.subgraphs) == 1
    assert len(graph.ops) == 16
    assert [op.index for op in graph.ops] == list(range(16))
    conv = graph.ops[0]
    assert conv.type == "CONV_2D"
    assert conv.options["padding"] == "SAME"
    assert conv.options["stride_h"] == 2 and conv.options["stride_w"] == 2
    assert conv.options["dilation_h_factor"] == 1
    assert conv.options["fused_activation_function"] == "RELU"
    with pytest.raises(TypeError):
        conv.options["padding"] = "VALID"  # type: ignore[index]
    ifm, weights, bias = conv.inputs
    assert ifm is not None and weights is not None and bias is not None
    assert ifm.shape == (1, 49, 10, 1) and ifm.dtype == DataType.INT8 and not ifm.is_constant
    assert weights.data is not None and weights.data.shape == (64, 10, 4, 1)
    assert not weights.data.flags.writeable
    assert weights.quant is not None and len(weights.quant.scale) == 64 and weights.quant.axis == 0
    assert bias.dtype == DataType.INT32


def test_op_types_include_depthwise_pool_and_softmax() -> None:
    graph = read_tflite(DATA / "ds_cnn_kws.tflite").main
    types = {op.type for op in graph.ops}
    assert {"DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "SOFTMAX", "FULLY_CONNECTED", "RESHAPE"} <= types
    dw = next(op for op in graph.ops if op.type == "DEPTHWISE_CONV_2D")
    assert dw.options["depth_multiplier"] == 1
    pool = next(op for op in graph.ops if op.type == "AVERAGE_POOL_2D")
    assert (pool.options["filter_height"], pool.options["filter_width"]) == (25, 5)


@pytest.mark.parametrize("name", ["autoencoder_ad", "resnet8_cifar", "mobilenet_v1_025_96"])
def test_reads_every_shipped_model(name: str) -> None:
    model = read_tflite(str(DATA / f"{name}.tflite"))
    assert model.name == name
    assert model.main.ops and model.main.inputs and model.main.outputs
    assert all(t.shape[0] == 1 for t in model.main.inputs)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not found"):
        read_tflite(tmp_path / "nope.tflite")


def test_not_a_tflite_file(tmp_path: Path) -> None:
    path = tmp_path / "x.tflite"
    path.write_bytes(b"hello world, this is not a model")
    with pytest.raises(ModelError, match="not a TFLite flatbuffer"):
        read_tflite(path)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.tflite"
    path.write_bytes(b"")
    with pytest.raises(ModelError):
        read_tflite(path)


@pytest.mark.parametrize("keep", [8, 64, 1000, 30000])
def test_truncated_file(keep: int) -> None:
    data = (DATA / "ds_cnn_kws.tflite").read_bytes()[:keep]
    with pytest.raises(ModelError) as info:
        parse_tflite(data, name="cut")
    assert "\n" not in str(info.value)


def test_corrupt_bytes() -> None:
    data = bytearray((DATA / "ds_cnn_kws.tflite").read_bytes())
    data[0:4] = b"\xff\xff\xff\x7f"  # root table offset far outside the file
    with pytest.raises(ModelError, match="truncated or corrupt"):
        parse_tflite(bytes(data), name="bad")


_LEAN_READ = """
import sys
from npuplan.lean_bindings import use_lean_bindings
use_lean_bindings()
from npuplan.io.tflite import read_tflite
graph = read_tflite(sys.argv[1]).main
print(sum(name.startswith("tflite.") for name in sys.modules))
print(repr([(op.type, dict(op.options), [t.name for t in op.inputs if t]) for op in graph.ops]))
"""


@pytest.mark.parametrize("name", ["ds_cnn_kws.tflite", "resnet8_cifar.tflite"])
def test_lean_bindings_read_the_same_model_from_a_few_modules(name: str) -> None:
    """The program entry's bare ``tflite`` package: the reader imports only the modules it reads,
    and reads the same ops and options as with the package's full ``__init__``."""
    model = DATA / name
    done = subprocess.run([sys.executable, "-c", _LEAN_READ, str(model)], capture_output=True, text=True, check=True)
    count, ops = done.stdout.splitlines()
    graph = read_tflite(model).main
    assert int(count) < 30
    assert ops == repr([(op.type, dict(op.options), [t.name for t in op.inputs if t]) for op in graph.ops])
