"""Tiny compiled TFLite files built in code: CPU operators, an ethos-u operator whose command stream
is one DMA (written with ``regstream.words`` names), and the offline memory plan placing feature
maps in the scratch tensor's bytes, as Vela and npuplan write them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from npuplan.emit.native.payload import create_driver_payload
from npuplan.io.tflite_write import write_tflite
from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
from npuplan.ir.types import DataType, Quantization
from npuplan.regstream.words import encode_commands

SHAPE = (1, 2, 2, 4)  # 16 int8 elements
Q = Quantization((0.1,), (0,))
ROOT = Path(__file__).resolve().parents[3]


def dma_payload(*, src_region: int, dst_region: int, length: int, src: int = 0, dst: int = 0) -> bytes:
    """A stream that copies ``length`` bytes between two regions and stops."""
    return create_driver_payload(encode_commands([
        ("DMA0_SRC_REGION", src_region), ("DMA0_DST_REGION", dst_region), ("DMA0_SRC", src), ("DMA0_DST", dst),
        ("DMA0_LEN", length), ("NPU_OP_DMA_START", 0), ("NPU_OP_DMA_WAIT", 0), ("NPU_OP_STOP", 0xFFFF)]),
        "Ethos_U55_128")


def _bytes_tensor(name: str, data: bytes) -> Tensor:
    return Tensor(name, (len(data),), DataType.UINT8, data=np.frombuffer(data, dtype=np.uint8))


def _file(graph: Graph, offsets: dict[Tensor, int]) -> bytes:
    plan = [offsets.get(t, -1) for t in graph.tensors()]
    metadata = {"OfflineMemoryAllocation": np.array([0, 1, len(plan), *plan], dtype="<i4").tobytes()}
    return write_tflite(Model("m", (graph,)), metadata=metadata)


def cpu_npu_cpu_file(payload: bytes) -> bytes:
    """x -> ADD(x, x) on the CPU -> t -> ethos-u (``payload``, t as region 3, u as region 4) -> u ->
    RELU on the CPU -> y. t and u live in the scratch tensor's bytes (offsets 16 and 32)."""
    x, t, u, y = (Tensor(n, SHAPE, DataType.INT8, Q) for n in ("x", "t", "u", "y"))
    scratch = Tensor("scratch", (64,), DataType.UINT8)
    flash = _bytes_tensor("read_only", bytes(range(16)))
    ops = (Op("ADD", (x, x), (t,), frozen_options({"fused_activation_function": "NONE"}), 0),
           Op("CUSTOM:ethos-u", (_bytes_tensor("ethos_u_command_stream", payload), flash, scratch, scratch, t), (u,),
              frozen_options({"custom_options": b"\x01\x04\x01"}), 1),
           Op("RELU", (u,), (y,), index=2))
    return _file(Graph("main", ops, (x,), (y,)), {scratch: 0, t: 16, u: 32, x: 48})


def npu_only_file(payload: bytes) -> bytes:
    """One ethos-u operator (``payload``) reading x (region 3) and writing y (region 4), both in the
    scratch tensor's bytes: no CPU operator."""
    x, y = (Tensor(n, SHAPE, DataType.INT8, Q) for n in ("x", "y"))
    scratch = Tensor("scratch", (48,), DataType.UINT8)
    flash = _bytes_tensor("read_only", bytes(range(100, 116)))
    op = Op("CUSTOM:ethos-u", (_bytes_tensor("ethos_u_command_stream", payload), flash, scratch, scratch, x), (y,),
            frozen_options({"custom_options": b"\x01\x04\x01"}), 0)
    return _file(Graph("main", (op,), (x,), (y,)), {scratch: 0, x: 0, y: 16})


def add_relu_model() -> bytes:
    """The CPU part of ``cpu_npu_cpu_file`` as one plain model (ADD then RELU): its reference."""
    x, t, y = (Tensor(n, SHAPE, DataType.INT8, Q) for n in ("x", "t", "y"))
    ops = (Op("ADD", (x, x), (t,), frozen_options({"fused_activation_function": "NONE"}), 0),
           Op("RELU", (t,), (y,), index=1))
    return write_tflite(Model("m", (Graph("main", ops, (x,), (y,)),)))


def lstm_model(**shape: object) -> bytes:
    """A stateful LSTM network (variable output and cell states) from bench/zoo/lstm_models.py."""
    spec = importlib.util.spec_from_file_location("lstm_models", ROOT / "bench" / "zoo" / "lstm_models.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.lstm_model(**shape)  # type: ignore[no-any-return]
