"""Which lookup tables the NPU's eight 256-byte table slots hold while one command stream runs,
and so which operations must load theirs: the one rule the emitter loads tables by (``emit.luts``)
and the scheduler prices their DMAs by (``schedule.model.network``).

A table takes as many slots as its bytes need (256 entries of 8 bits: one; the softmax's 256
int32 entries: four; a 16-bit input's 512 int32 entries: all eight), at the next free slot aligned
to its size, evicting the tables it overlaps. A table stays loaded until something overwrites it:
on accelerators whose table banks are reserved (``shram_reserved_unused_banks``) only another table
does; on the smaller Ethos-U55 an operation without a table may use every bank, so each table is
loaded again after one. Each command stream starts with no table loaded.
"""

from __future__ import annotations

from collections.abc import Hashable

from npuplan.hw.accelerator import Accelerator

SLOT_BYTES = 256
SLOTS = 8


def reserved_table_banks(accelerator: Accelerator) -> bool:
    """Whether ``accelerator`` keeps its table banks for tables alone."""
    return accelerator.shram_reserved_unused_banks > 0


def table_slots(size_bytes: int) -> int:
    """How many slots a table of ``size_bytes`` takes (256, 1024 or 2048 bytes: 1, 4 or 8)."""
    count = -(-size_bytes // SLOT_BYTES)
    if count not in (1, 2, 4, 8):
        raise ValueError(f"a lookup table of {size_bytes} bytes does not fit the NPU's slots")
    return count


class TableSlots:
    """The tables loaded in the slots while one command stream runs (``reset`` for the next)."""

    def __init__(self, reserved: bool) -> None:
        """``reserved``: no operation's buffers use the table banks (``reserved_table_banks``)."""
        self._reserved = reserved
        self._slots: dict[Hashable, tuple[int, int]] = {}  # table -> (first slot, slots)
        self._next = 0

    def reset(self) -> None:
        """A new command stream: nothing loaded."""
        self._slots.clear()
        self._next = 0

    def place(self, table: Hashable | None, size_bytes: int = 0) -> tuple[int, bool]:
        """The slot an operation looks ``table`` up in and whether it must be loaded first (an
        operation without a table, ``None``: slot 0, nothing to load; on an accelerator without
        reserved table banks it unloads every table)."""
        if table is None:
            if not self._reserved:
                self.reset()
            return 0, False
        if table in self._slots:
            return self._slots[table][0], False
        count = table_slots(size_bytes)
        slot = -(-self._next // count) * count % SLOTS  # the next free slot, aligned to the table's size
        self._next = (slot + count) % SLOTS
        self._slots = {t: (s, n) for t, (s, n) in self._slots.items() if s + n <= slot or s >= slot + count}
        self._slots[table] = (slot, count)
        return slot, True
