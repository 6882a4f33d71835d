"""What the flash holds beside the weight streams: the constant feature maps NPU operations read
(a PAD's fill values, an elementwise op's constant operand), NHWC in their element type, and each
LUT activation's table. The emitter lays them out (``emit.layout``) and the report counts them
(``report.model``), both from here, so the figure is the file's."""

from __future__ import annotations

import numpy as np

from npuplan.errors import EmitError
from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import LoweredGraph
from npuplan.ir.types import DataType

_NUMPY_TYPES = {DataType.INT8: "<i1", DataType.UINT8: "<u1", DataType.INT16: "<i2", DataType.INT32: "<i4"}

Named = tuple[tuple[str, bytes], ...]  # (tensor or op name, bytes)


def constant_bytes(tensor: Tensor) -> bytes:
    """A constant feature map's values as the NPU reads them: NHWC, little-endian, its element type."""
    assert tensor.data is not None
    kind = _NUMPY_TYPES.get(tensor.dtype)
    if kind is None:
        raise EmitError(tensor.name, f"a {tensor.dtype} constant operand")
    return np.ascontiguousarray(np.asarray(tensor.data).astype(kind)).tobytes()


def constant_operands(lowered: LoweredGraph) -> list[Tensor]:
    """The constant feature maps NPU operations read (each once, in op order)."""
    found: dict[str, Tensor] = {}
    for op in lowered.npu_ops:
        for t in (op.ifm, op.ifm2):
            if t is not None and t.is_constant:
                found.setdefault(t.name, t)
    return list(found.values())


def flash_constants(lowered: LoweredGraph) -> tuple[Named, Named]:
    """In the order the flash places them: each constant feature map NPU operations read (tensor
    name, bytes) and each LUT activation's table (op name, bytes); the same bytes are stored once."""
    constants = tuple((t.name, constant_bytes(t)) for t in constant_operands(lowered))
    luts = tuple((npu.name, np.ascontiguousarray(npu.lut).tobytes()) for npu in lowered.npu_ops if npu.lut is not None)
    return constants, luts
