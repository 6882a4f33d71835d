"""The NPU's lookup-table memory while a command stream runs: the configuration's table window
of SHRAM (``hw.lut_window``: its top 2 KiB) and which of its bytes hold a loaded table.

A table of 256 8-bit entries takes one 256-byte slot (``ACTIVATION`` 16 + k reads slot k), 256
32-bit entries four slots, and a 16-bit IFM or OFM reads the whole 2 KiB as 512 32-bit entries
(``sim.lut``). A DMA with the internal-memory bit in ``DMA0_DST_REGION`` writes SHRAM bytes; the
tables are the only SHRAM contents that outlive an operation, so a DMA into any other SHRAM byte
(an operation's IFM or accumulator buffer) or past the end of SHRAM is refused, one line naming
the configuration's window.

Where the top two banks are reserved (more than 16 banks) a table stays until a DMA overwrites it.
On a 16-bank SHRAM they are ordinary buffer banks: an operation without a table activation may use
them (Vela's generators place a convolution's, depthwise's or pooling's accumulators at the top of
SHRAM and an elementwise IFM buffer up to ``IFM_IB_END``, and both cores reload a table after such
an operation). The simulator forgets the tables such an operation may have overwritten, and a
lookup that reads bytes no DMA of this command stream loaded (or that were forgotten since) is
refused rather than computed from stale bytes.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from npuplan.errors import ValidationError
from npuplan.hw.lut_window import LutWindow

_ELEMENTWISE = "NPU_OP_ELEMENTWISE"


class LutMemory:
    """The bytes of the table window and which of them hold a table loaded in this command stream."""

    def __init__(self, window: LutWindow) -> None:
        self.window = window
        self.data = np.zeros(window.size_bytes, dtype=np.uint8)
        self.loaded = np.zeros(window.size_bytes, dtype=bool)

    def offsets(self, shram_lo: int, shram_hi: int, label: str) -> tuple[int, int]:
        """SHRAM bytes ``shram_lo..shram_hi`` as offsets in the window; refuses bytes outside it."""
        w = self.window
        if shram_lo < 0 or shram_hi > w.shram_bytes:
            raise ValidationError(f"DMA {label} SHRAM bytes {shram_lo}..{shram_hi} lie outside the "
                                  f"{w.shram_bytes}-byte SHRAM of {w.name}")
        if shram_lo < w.base or shram_hi > w.base + w.size_bytes:
            raise ValidationError(f"DMA {label} SHRAM bytes {shram_lo}..{shram_hi} lie outside {w.name}'s lookup-table "
                                  f"memory (SHRAM bytes {w.base}..{w.base + w.size_bytes}); the rest of SHRAM is "
                                  "operation buffers")
        return shram_lo - w.base, shram_hi - w.base

    def table(self, start: int, size: int, what: str) -> np.ndarray:
        """The window's bytes ``start..start + size``, all loaded."""
        if not self.loaded[start:start + size].all():
            raise ValidationError(f"{what} reads lookup-table bytes {start}..{start + size} that no DMA of this command "
                                  f"stream loaded{'' if self.window.reserved else ' since an operation without a table'}")
        return self.data[start:start + size]

    def after_operation(self, name: str, regs: Mapping[str, int], uses_table: bool) -> None:
        """Forgets the tables an operation without one may have overwritten (unreserved banks only)."""
        if self.window.reserved or uses_table:
            return
        if name == _ELEMENTWISE and regs.get("IFM_IB_END", 0) <= self.window.first_bank:
            return  # an elementwise op's buffers end at IFM_IB_END, below the tables
        self.loaded[:] = False
