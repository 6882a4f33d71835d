"""Run a compiled file whose operators are all ``ethos-u`` (a single-operator model Vela compiled)
through ``npuplan.sim.execute_stream``, and its original through LiteRT, for the oracle tests.

The compiled file runs on ``npuplan.run.CompiledModel`` (memory as TensorFlow Lite Micro lays it
out, regions as the ethos-u kernel gives them to the driver).
"""

from __future__ import annotations

import numpy as np
import tflite

from npuplan.run.runner import CompiledModel


def ethos_u_only(data: bytes) -> bool:
    model = tflite.Model.GetRootAsModel(data, 0)
    sg = model.Subgraphs(0)
    return all(model.OperatorCodes(sg.Operators(k).OpcodeIndex()).CustomCode() == b"ethos-u"
               for k in range(sg.OperatorsLength()))


def run_compiled(data: bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The outputs of the compiled file ``data`` on ``inputs``, through npuplan's runner."""
    return CompiledModel(data).invoke(inputs)


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
