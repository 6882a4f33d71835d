"""LUT activations in the command stream: the DMA that loads a table into its slot of the NPU's
internal memory before the operation that looks it up (which slot holds which table, and when a
table must be loaded: ``hw.lut_slots``).

As Vela lays it out (facts from its generator, which the external API shares): the tables live
in the last two 1 KiB banks of the shared buffer (SHRAM), slot ``k`` at byte
``(banks - 2) * 1024 + 256 * k``; a DMA writes them there with the destination region
``0x103`` (internal memory), reading the table from the flash tensor; the operation names its
slot in ``lookup_table_index``. The register stream generator orders the DMA before the lookup
(the operation reads those SHRAM bytes) and after any operation still using them.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

from npuplan.emit.regions import FLASH_REGION
from npuplan.hw.accelerator import Accelerator
from npuplan.hw.lut_slots import SLOT_BYTES, TableSlots, reserved_table_banks
from npuplan.hw.lut_window import lut_window
from npuplan.ir.lowered import NpuOp

INTERNAL_MEMORY_REGION = 0x103  # a DMA destination in the NPU's internal memory (Vela's MEM2MEM index)


def lut_address(accelerator: Accelerator, slot: int) -> int:
    """The SHRAM byte address of table slot ``slot``."""
    return lut_window(accelerator).base + slot * SLOT_BYTES


class LutSlots:
    """The tables loaded in the NPU's slots while one command stream is built."""

    def __init__(self, api: ModuleType, accelerator: Accelerator, lut_offsets: Mapping[str, int]) -> None:
        self._api = api
        self._accelerator = accelerator
        self._offsets = lut_offsets  # op name -> flash offset of its table
        self._slots = TableSlots(reserved_table_banks(accelerator))

    def reset(self) -> None:
        """A new command stream: nothing loaded."""
        self._slots.reset()

    def load(self, op: NpuOp) -> tuple[list[Any], int]:
        """The DMAs to run before a stripe of ``op`` (none, or one loading its table) and the slot
        its lookup reads (``hw.lut_slots.TableSlots``)."""
        if op.lut is None:
            self._slots.place(None)
            return [], 0
        offset = self._offsets[op.name]
        size_bytes = op.lut.nbytes
        slot, needed = self._slots.place(offset, size_bytes)
        if not needed:
            return [], slot
        rng = self._api.NpuAddressRange
        dma = self._api.NpuDmaOperation(rng(region=FLASH_REGION, address=offset, length=size_bytes),
                                        rng(region=INTERNAL_MEMORY_REGION, address=lut_address(self._accelerator, slot),
                                            length=size_bytes))
        dma.name = f"{op.name}_lut"
        return [dma], slot
