"""LUT activations in the command stream: which of the NPU's eight 256-byte table slots holds
which table, and the DMA that loads a table before the operation that looks it up.

A table takes as many slots as its bytes need (256 entries of 8 bits: one; the softmax's 256
int32 entries: four; a 16-bit input's 512 int32 entries: all eight), at a slot aligned to its size.

As Vela lays it out (facts from its generator, which the external API shares): the tables live
in the last two 1 KiB banks of the shared buffer (SHRAM), slot ``k`` at byte
``(banks - 2) * 1024 + 256 * k``; a DMA writes them there with the destination region
``0x103`` (internal memory), reading the table from the flash tensor; the operation names its
slot in ``lookup_table_index``. The register stream generator orders the DMA before the lookup
(the operation reads those SHRAM bytes) and after any operation still using the banks.

A table stays loaded until something overwrites it: on accelerators whose two last banks are
reserved (``shram_reserved_unused_banks``: more than 16 banks) nothing else uses them, so only
another table loaded into the same slot does; on the smaller Ethos-U55 an operation without a
LUT may use every bank, so each table is loaded again after one. Each command stream starts with
no table loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

from npuplan.emit.regions import FLASH_REGION
from npuplan.hw.accelerator import Accelerator
from npuplan.hw.lut_window import lut_window
from npuplan.ir.lowered import NpuOp

INTERNAL_MEMORY_REGION = 0x103  # a DMA destination in the NPU's internal memory (Vela's MEM2MEM index)
SLOT_BYTES = 256
SLOTS = 8


def lut_address(accelerator: Accelerator, slot: int) -> int:
    """The SHRAM byte address of table slot ``slot``."""
    return lut_window(accelerator).base + slot * SLOT_BYTES


def table_slots(size_bytes: int) -> int:
    """How many slots a table of ``size_bytes`` takes (256, 1024 or 2048 bytes: 1, 4 or 8)."""
    count = -(-size_bytes // SLOT_BYTES)
    if count not in (1, 2, 4, 8):
        raise ValueError(f"a lookup table of {size_bytes} bytes does not fit the NPU's slots")
    return count


class LutSlots:
    """The tables loaded in the NPU's slots while one command stream is built."""

    def __init__(self, api: ModuleType, accelerator: Accelerator, lut_offsets: Mapping[str, int]) -> None:
        self._api = api
        self._accelerator = accelerator
        self._offsets = lut_offsets  # op name -> flash offset of its table
        self._slots: dict[int, tuple[int, int]] = {}  # flash offset of a loaded table -> (first slot, slots)
        self._next = 0

    def reset(self) -> None:
        """A new command stream: nothing loaded."""
        self._slots.clear()
        self._next = 0

    def load(self, op: NpuOp) -> tuple[list[Any], int]:
        """The DMAs to run before a stripe of ``op`` (none, or one loading its table) and the slot
        its lookup reads; an op without a LUT gets ``([], 0)`` and, on an accelerator without
        reserved banks, unloads every table."""
        if op.lut is None:
            if self._accelerator.shram_reserved_unused_banks == 0:
                self.reset()
            return [], 0
        offset = self._offsets[op.name]
        if offset in self._slots:
            return [], self._slots[offset][0]
        size_bytes = op.lut.nbytes
        count = table_slots(size_bytes)
        slot = -(-self._next // count) * count % SLOTS  # the next free slot, aligned to the table's size
        self._next = (slot + count) % SLOTS
        self._slots = {o: (s, n) for o, (s, n) in self._slots.items() if s + n <= slot or s >= slot + count}
        self._slots[offset] = (slot, count)
        rng = self._api.NpuAddressRange
        dma = self._api.NpuDmaOperation(rng(region=FLASH_REGION, address=offset, length=size_bytes),
                                        rng(region=INTERNAL_MEMORY_REGION, address=lut_address(self._accelerator, slot),
                                            length=size_bytes))
        dma.name = f"{op.name}_lut"
        return [dma], slot
