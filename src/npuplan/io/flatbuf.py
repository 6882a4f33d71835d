"""Field reads of flatbuffer tables by field id, for the TFLite reader's many small tables.

The generated object API (the ``tflite`` package) builds an object and re-reads the vtable for each
accessor; a 10,000-op network has some 20,000 tensors, and reading them so took most of the
reader's time (issue 26). These functions read one field each straight from the file's bytes, by
the flatbuffers binary format: a table starts with the signed offset back to its vtable; the vtable
holds its own size in bytes, then one 16-bit offset per field (0: absent, the schema's default);
a reference field holds an unsigned offset forward to its table, vector or string; a vector or
string starts with its 32-bit element count. Numeric vectors come back as read-only numpy views of
the file's bytes. A position outside the bytes raises ``struct.error`` or ``ValueError``, which
the reader turns into its one-line ``ModelError``.
"""

from __future__ import annotations

import struct

import numpy as np

from npuplan.records import record

_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")
_U16 = struct.Struct("<H")


@record(eq=False)
class Table:
    """One flatbuffer table: the file's ``data``, the table's position ``pos``, its vtable's
    position and size in bytes."""

    data: bytes
    pos: int
    vtable: int
    vtable_bytes: int


def table_at(data: bytes, pos: int) -> Table:
    """The table that starts at byte ``pos`` of ``data``."""
    vtable = pos - _I32.unpack_from(data, pos)[0]
    return Table(data, pos, vtable, _U16.unpack_from(data, vtable)[0])


def field_pos(t: Table, field_id: int) -> int:
    """Position of field ``field_id`` of ``t`` in the file, 0 when absent."""
    slot = 4 + 2 * field_id
    if slot >= t.vtable_bytes:
        return 0
    offset = _U16.unpack_from(t.data, t.vtable + slot)[0]
    return t.pos + offset if offset else 0


def scalar(t: Table, field_id: int, fmt: struct.Struct, default: int | float = 0) -> int | float:
    """A scalar field read with ``fmt`` (one value), ``default`` when absent."""
    pos = field_pos(t, field_id)
    return fmt.unpack_from(t.data, pos)[0] if pos else default


def _target(t: Table, field_id: int) -> int:
    """Where a reference field points, 0 when absent."""
    pos = field_pos(t, field_id)
    return pos + _U32.unpack_from(t.data, pos)[0] if pos else 0


def sub_table(t: Table, field_id: int) -> Table | None:
    """A table field, ``None`` when absent."""
    pos = _target(t, field_id)
    return table_at(t.data, pos) if pos else None


def vector_length(t: Table, field_id: int) -> int:
    """Elements of a vector field (0 when absent)."""
    pos = _target(t, field_id)
    return _U32.unpack_from(t.data, pos)[0] if pos else 0


def vector_span(t: Table, field_id: int) -> tuple[int, int]:
    """(position of the first element, element count) of a vector field; (0, 0) when absent."""
    pos = _target(t, field_id)
    return (pos + 4, _U32.unpack_from(t.data, pos)[0]) if pos else (0, 0)


def numbers(t: Table, field_id: int, dtype: type) -> np.ndarray | None:
    """A numeric vector field as a read-only little-endian numpy view, ``None`` when absent."""
    pos = _target(t, field_id)
    if not pos:
        return None
    count = _U32.unpack_from(t.data, pos)[0]
    return np.frombuffer(t.data, dtype=np.dtype(dtype).newbyteorder("<"), count=count, offset=pos + 4)


def string(t: Table, field_id: int) -> bytes | None:
    """A string field's bytes, ``None`` when absent."""
    pos = _target(t, field_id)
    if not pos:
        return None
    count = _U32.unpack_from(t.data, pos)[0]
    if pos + 4 + count > len(t.data):
        raise ValueError(f"a string at byte {pos} runs past the end of the file")
    return t.data[pos + 4 : pos + 4 + count]


def tables(t: Table, field_id: int) -> list[Table]:
    """A vector-of-tables field's tables (none when absent)."""
    pos = _target(t, field_id)
    if not pos:
        return []
    data = t.data
    count = _U32.unpack_from(data, pos)[0]
    if pos + 4 + 4 * count > len(data):
        raise ValueError(f"a vector at byte {pos} runs past the end of the file")
    found = []
    for i in range(count):
        item = pos + 4 + 4 * i
        found.append(table_at(data, item + _U32.unpack_from(data, item)[0]))
    return found
