"""Element types and quantization parameters."""

from __future__ import annotations

from npuplan._compat import StrEnum
from npuplan.records import record


class DataType(StrEnum):
    """Tensor element types npuplan knows about."""

    INT8 = "int8"
    UINT8 = "uint8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT16 = "float16"
    FLOAT32 = "float32"
    BOOL = "bool"
    STRING = "string"
    RESOURCE = "resource"  # a resource variable's handle (VAR_HANDLE's output)
    UNKNOWN = "unknown"

    @property
    def size_bytes(self) -> int:
        """Bytes per element (1 for bool, string, resource and unknown)."""
        return _SIZES.get(self, 1)

    @property
    def bits(self) -> int:
        return 8 * self.size_bytes

    @property
    def is_integer(self) -> bool:
        return self in (DataType.INT8, DataType.UINT8, DataType.INT16, DataType.INT32, DataType.INT64)

    @property
    def is_float(self) -> bool:
        return self in (DataType.FLOAT16, DataType.FLOAT32)


_SIZES = {
    DataType.INT8: 1,
    DataType.UINT8: 1,
    DataType.INT16: 2,
    DataType.INT32: 4,
    DataType.INT64: 8,
    DataType.FLOAT16: 2,
    DataType.FLOAT32: 4,
}


@record
class Quantization:
    """Affine quantization: ``real = scale * (q - zero_point)``, per tensor or per ``axis``."""

    scale: tuple[float, ...] = ()
    zero_point: tuple[int, ...] = ()
    axis: int = 0

    @property
    def is_valid(self) -> bool:
        return len(self.scale) > 0 and len(self.zero_point) > 0

    @property
    def is_per_axis(self) -> bool:
        return len(self.scale) > 1
