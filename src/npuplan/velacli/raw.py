"""``--output-format raw``: ``<network>_vela.npz``, the arrays Vela 5.2 writes for a driver that runs a
command stream without TensorFlow Lite Micro, taken from npuplan's emitted TFLite file.

The file's one ``ethos-u`` operator gives the driver payload (``cmd_data``), the flash tensor
(``weight_data``), the scratch and fast scratch sizes, and the network's inputs and outputs with
their shapes (6-D, as Vela writes them), element sizes, regions and offsets in the scratch region
(the file's offline memory plan). Regions follow the Ethos-U driver's convention: 0 flash, 1 the
arena (scratch), 2 the fast scratch. A network that keeps operators on the CPU has no single command
stream to write: that is refused in one line.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from npuplan.errors import NpuplanError
from npuplan.io.tflite import binding
# The file reader's rules (regstream owns reading an emitted file): element sizes, tensor bytes, offsets.
from npuplan.regstream.tflite_file import _SIZES as _ELEMENT_BYTES
from npuplan.regstream.tflite_file import _offline_offsets
from npuplan.regstream.tflite_file import _tensor_bytes as _bytes

FLASH_REGION, SCRATCH_REGION, FAST_REGION = 0, 1, 2
_RANK = 6


def raw_npz(data: bytes, fast_scratch_bytes: int) -> bytes:
    """The ``.npz`` of Vela's raw output for the emitted TFLite file ``data``. ``fast_scratch_bytes``:
    the emitter's figure (0 when the fast scratch is the arena itself, whatever the tensor's size)."""
    model = binding("Model").GetRootAsModel(data, 0)
    sg = model.Subgraphs(0)
    ops = [sg.Operators(i) for i in range(sg.OperatorsLength())]
    npu = [op for op in ops if model.OperatorCodes(op.OpcodeIndex()).CustomCode() == b"ethos-u"]
    if len(npu) != 1 or len(ops) != 1:
        raise NpuplanError(f"--output-format raw needs the whole network in one NPU command stream; this one has "
                           f"{len(npu)} NPU partition(s) and {len(ops) - len(npu)} operator(s) on the CPU "
                           "(use --output-format tflite)")
    op = npu[0]
    inputs = [int(i) for i in op.InputsAsNumpy()]
    outputs = [int(i) for i in op.OutputsAsNumpy()]
    offsets = _offline_offsets(model, sg.TensorsLength())

    def buffer(index: int) -> bytes:
        return bytes(model.Buffers(sg.Tensors(index).Buffer()).DataAsNumpy())

    scratch, fast = _bytes(sg.Tensors(inputs[2])), fast_scratch_bytes
    arrays: dict[str, Any] = dict(
        cmd_data=np.bytes_(buffer(inputs[0])), weight_data=np.bytes_(buffer(inputs[1])),
        weight_region=FLASH_REGION,
        scratch_shape=[scratch], scratch_region=SCRATCH_REGION, scratch_size=scratch,
        scratch_fast_shape=[fast], scratch_fast_region=FAST_REGION if fast else FLASH_REGION, scratch_fast_size=fast,
    )
    arrays.update(_operands("input", [sg.Tensors(i) for i in inputs[4:]], [offsets[i] for i in inputs[4:]]))
    arrays.update(_operands("output", [sg.Tensors(i) for i in outputs], [offsets[i] for i in outputs]))
    arrays.update(variable_shape=[], variable_elem_size=[], variable_region=[], variable_offset=[],
                  variable_quantization=[])
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def _operands(kind: str, tensors: list[Any], offsets: list[int]) -> dict[str, Any]:
    shapes = [[1] * (_RANK - t.ShapeLength()) + [int(d) for d in t.ShapeAsNumpy()] if t.ShapeLength() else [1] * _RANK
              for t in tensors]
    quant = np.empty(len(tensors), dtype=object)
    for i, t in enumerate(tensors):
        quant[i] = _quantization(t)
    return {f"{kind}_shape": shapes, f"{kind}_elem_size": [_ELEMENT_BYTES.get(t.Type(), 1) for t in tensors],
            f"{kind}_region": [SCRATCH_REGION] * len(tensors), f"{kind}_offset": offsets,
            f"{kind}_quantization": quant}


def _quantization(t: Any) -> dict[str, Any]:
    """Vela's record of a tensor's quantization: per_tensor, per_channel or none."""
    q = t.Quantization()
    scale = np.array(q.ScaleAsNumpy(), dtype=np.float32).flatten() if q is not None and q.ScaleLength() else None
    zero = np.array(q.ZeroPointAsNumpy(), dtype=np.int32).flatten() if q is not None and q.ZeroPointLength() else None
    if scale is None or zero is None:
        return {"quant_type": "none", "scale": np.array([], np.float32), "zero_point": np.array([], np.int32)}
    if scale.size > 1:
        return {"quant_type": "per_channel", "scale": scale, "zero_point": zero}
    return {"quant_type": "per_tensor", "scale": scale[:1], "zero_point": zero[:1]}
