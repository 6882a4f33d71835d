"""Run a compiled file whose operators are all ``ethos-u`` (a single-operator model Vela compiled)
through ``npuplan.sim.execute_stream``, and its original through LiteRT, for the oracle tests.

Memory as TensorFlow Lite Micro lays it out: tensors with an ``OfflineMemoryAllocation`` offset
are bytes of one arena (the scratch tensor at 0), a fast scratch tensor other than the scratch tensor
is memory of its own (the platform's fast memory); regions as the ethos-u kernel gives them to the
driver (0 the flash tensor, 1 scratch, 2 fast scratch, 3.. further inputs then outputs).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tflite

from npuplan.regstream.tflite_file import _offline_offsets, _tensor_bytes
from npuplan.sim import execute_stream

_DTYPES = {9: np.int8, 3: np.uint8, 7: np.int16, 2: np.int32, 0: np.float32}


def ethos_u_only(data: bytes) -> bool:
    model = tflite.Model.GetRootAsModel(data, 0)
    sg = model.Subgraphs(0)
    return all(model.OperatorCodes(sg.Operators(k).OpcodeIndex()).CustomCode() == b"ethos-u"
               for k in range(sg.OperatorsLength()))


def run_compiled(data: bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The outputs of a compiled file whose every operator is ethos-u, for ``inputs``."""
    model = tflite.Model.GetRootAsModel(data, 0)
    sg = model.Subgraphs(0)
    offsets = _offline_offsets(model, sg.TensorsLength())
    memory: dict[int, np.ndarray] = {}
    for k in range(sg.OperatorsLength()):  # a fast scratch other than the scratch: the platform's own memory
        ins = [int(i) for i in sg.Operators(k).InputsAsNumpy()]
        if ins[3] != ins[2]:
            memory[ins[3]] = np.zeros(_tensor_bytes(sg.Tensors(ins[3])), dtype=np.uint8)
    placed = [i for i in range(sg.TensorsLength()) if offsets[i] >= 0]
    arena = np.zeros(max((offsets[i] + _tensor_bytes(sg.Tensors(i)) for i in placed), default=0), dtype=np.uint8)

    def tensor(i: int) -> np.ndarray:
        if i not in memory:
            t = sg.Tensors(i)
            buffer = model.Buffers(t.Buffer())
            if buffer.DataLength():
                memory[i] = np.frombuffer(bytes(buffer.DataAsNumpy()), dtype=np.uint8)
            elif offsets[i] >= 0:
                memory[i] = arena[offsets[i]:]
            else:
                memory[i] = np.zeros(_tensor_bytes(t), dtype=np.uint8)
        return memory[i]

    for k, value in zip(sg.InputsAsNumpy(), inputs):
        t = sg.Tensors(int(k))
        raw = np.ascontiguousarray(value, dtype=_DTYPES[t.Type()]).view(np.uint8).reshape(-1)
        tensor(int(k))[:raw.size] = raw
    for k in range(sg.OperatorsLength()):
        op = sg.Operators(k)
        ins = [int(i) for i in op.InputsAsNumpy()]
        outs = [int(i) for i in op.OutputsAsNumpy()]
        payload = bytes(model.Buffers(sg.Tensors(ins[0]).Buffer()).DataAsNumpy())
        execute_stream(payload, {r: tensor(t) for r, t in enumerate(ins[1:] + outs)})
    out = []
    for k in sg.OutputsAsNumpy():
        t = sg.Tensors(int(k))
        shape = [int(d) for d in t.ShapeAsNumpy()]
        size = int(np.prod(shape)) * np.dtype(_DTYPES[t.Type()]).itemsize
        out.append(tensor(int(k))[:size].copy().view(_DTYPES[t.Type()]).reshape(shape))
    return out


def litert_outputs(original: bytes, inputs: list[np.ndarray], *, optimised: bool = False) -> list[np.ndarray]:
    """The original model's outputs through LiteRT: its reference kernels, or (``optimised``) its
    built-in optimised kernels without the default delegate. The two differ by one on some
    outputs: the reference's 1x1 convolutions and the optimised fully connected layers are the ones
    Vela's files reproduce."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    kernels = OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES if optimised else OpResolverType.BUILTIN_REF
    interp = Interpreter(model_content=original, experimental_op_resolver_type=kernels)
    interp.allocate_tensors()
    for detail, value in zip(interp.get_input_details(), inputs):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    return [interp.get_tensor(d["index"]) for d in interp.get_output_details()]


def seeded_inputs(original: bytes, seed: int) -> list[np.ndarray]:
    """Random inputs over each input's whole integer range."""
    from ai_edge_litert.interpreter import Interpreter

    rng = np.random.default_rng(seed)
    interp = Interpreter(model_content=original)
    out = []
    for d in interp.get_input_details():
        info = np.iinfo(d["dtype"])
        out.append(rng.integers(info.min, info.max, d["shape"], endpoint=True).astype(d["dtype"]))
    return out
