"""Where the NPU keeps its activation lookup tables: the top two 1 KiB banks of the shared buffer
(SHRAM), per configuration.

Facts from Vela 5.2.0's files (both cores) for every configuration: SHRAM has ``shram_banks`` banks
(16 on the Ethos-U55-32/64, 24 on the U55-128, 48 on the U55-256 and both U65s) and the tables are
DMAed to SHRAM byte ``(banks - 2) * 1024``: 14336, 22528 and 47104. On more than 16 banks those two
banks are reserved (``Accelerator.shram_reserved_unused_banks``): no operation's buffers use them.
The emitter (``emit.luts``) places tables here and the simulator (``sim.lut_memory``) reads them here.
"""

from __future__ import annotations


from npuplan.hw.accelerator import Accelerator
from npuplan.records import record

TABLE_BANKS = 2


@record(eq=False)
class LutWindow:
    """Where one configuration keeps its tables: SHRAM bytes ``base`` to ``base + size_bytes``, of
    ``shram_bytes``; ``reserved`` when no operation's buffers use those banks."""

    name: str
    shram_bytes: int
    base: int
    size_bytes: int
    bank_bytes: int
    reserved: bool

    @property
    def first_bank(self) -> int:
        return self.base // self.bank_bytes


def lut_window(accelerator: Accelerator) -> LutWindow:
    """The table window of ``accelerator``."""
    shram_bytes = accelerator.shram_banks * accelerator.shram_bank_bytes
    size_bytes = TABLE_BANKS * accelerator.shram_bank_bytes
    return LutWindow(accelerator.name, shram_bytes, shram_bytes - size_bytes, size_bytes,
                     accelerator.shram_bank_bytes, accelerator.shram_reserved_unused_banks >= TABLE_BANKS)
