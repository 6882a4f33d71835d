"""The accelerator facts the register command stream generator needs, looked up by name.

Everything derives from the planner's presets (``npuplan.hw.accelerator``): the names of Vela's
``NpuAccelerator`` members (``Ethos_U55_128``) and npuplan's own (``ethos-u55-128``) both work.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from npuplan.errors import EmitError
from npuplan.hw.accelerator import ACCELERATORS, Accelerator
from npuplan.records import record

# The DMA region parameter that names the NPU's internal memory (the shared buffer): bit 8 set,
# region bits 3 (the value Vela's API uses for LUT loads into SHRAM).
SHRAM_REGION = (1 << 8) | 3
MAX_BLOCKDEP = 3  # BLOCKDEP's largest value: jobs of the next op that may start before the last ends


@record(eq=False)
class NativeArch:
    """One accelerator as the generator sees it (sizes in bytes, counts in operations)."""

    accelerator: Accelerator
    ncores: int
    is_u65: bool
    max_outstanding_dma: int
    max_outstanding_kernels: int
    max_address: int  # largest valid offset into a region (2**address bits)
    shram_bytes: int  # the whole shared buffer
    shram_bank_bytes: int
    shram_reserved_unused_banks: int
    shram_usable_banks: int  # banks less the reserved unused ones at the top


@lru_cache(maxsize=None)
def native_arch(name: str) -> NativeArch:
    """The ``NativeArch`` of an accelerator name (Vela's enum member name or npuplan's preset)."""
    key = name.lower().replace("_", "-")
    acc = ACCELERATORS.get(key)
    if acc is None:
        raise EmitError(None, f"accelerator '{name}' is not one the native generator knows "
                        f"({', '.join(ACCELERATORS)})")
    reserved = acc.shram_reserved_unused_banks
    return NativeArch(acc, acc.cores, acc.is_u65, acc.max_outstanding_dma, acc.max_outstanding_kernels,
                      acc.max_address_bytes, acc.shram_banks * acc.shram_bank_bytes, acc.shram_bank_bytes,
                      reserved, acc.shram_banks - reserved)


def arch_of(accelerator: Any) -> NativeArch:
    """``native_arch`` of an accelerator object (read by ``.name``) or name."""
    return native_arch(accelerator if isinstance(accelerator, str) else accelerator.name)


def available_shram_banks(arch: NativeArch, uses_lut: bool) -> int:
    """Banks an operation may write (a LUT takes the top two when no banks are reserved for it)."""
    return arch.shram_usable_banks - (2 if uses_lut and arch.shram_reserved_unused_banks == 0 else 0)
