"""NPU operations whose results nothing reads are left out (``lowering.unread``)."""

from __future__ import annotations

from npuplan.ir.lowered import CpuOp
from npuplan.lowering.slices import convert_split
from npuplan.lowering.unread import drop_unread_writes

from ._build import fm, op


def _unpack():
    """An UNPACK of a 1x6x8x4 map into six 1x8x4 rows: one copy per row."""
    x = fm("x", (1, 6, 8, 4))
    rows = [fm(f"r{i}", (1, 8, 4)) for i in range(6)]
    return convert_split(op("UNPACK", [x], rows, 0, axis=1, num=6)), rows


def test_only_the_rows_something_reads_are_copied() -> None:
    """split_gather_pack_12: a PACK of 4 of an UNPACK's 12 rows; the 8 others were copied for nothing."""
    copies, rows = _unpack()
    reader = CpuOp(op("PACK", rows[:2], [fm("out", (1, 2, 8, 4))], 1, axis=1), "test")
    left = drop_unread_writes((*copies, reader), [fm("out", (1, 2, 8, 4))])
    assert [o.ofm.name for o in left if not isinstance(o, CpuOp)] == ["r0", "r1"]
    assert left[-1] is reader  # a CPU operator stays whatever it writes


def test_outputs_and_chains_of_readers() -> None:
    copies, rows = _unpack()
    assert drop_unread_writes(copies, rows) == copies  # every row a network output
    assert drop_unread_writes(copies, rows[5:]) == copies[5:]
    # a row read only by a copy nothing reads goes too (dropped until none is left)
    again = convert_split(op("UNPACK", [rows[3]], [fm("again", (8, 4))], 2, axis=0, num=1))
    assert drop_unread_writes((*copies, *again), rows[:1]) == copies[:1]
