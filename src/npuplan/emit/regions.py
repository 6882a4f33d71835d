"""Base-pointer regions of the emitted command stream, numbered as the TFLite Micro ethos-u kernel
hands them to the driver: the operator's inputs after the command stream, in order.

Region 0 is the flash (read-only) tensor, region 1 the scratch tensor (the arena: feature maps,
inputs and outputs at their planned offsets), region 2 the fast scratch tensor (the fast storage of
Dedicated_Sram; in the other modes it is the scratch tensor again, as Vela passes it).
"""

from __future__ import annotations

from npuplan.errors import EmitError
from npuplan.hw.memory import Architecture, MemArea

FLASH_REGION = 0
SCRATCH_REGION = 1
FAST_SCRATCH_REGION = 2


def feature_map_regions(arch: Architecture) -> dict[MemArea, int]:
    """The region of each memory area that holds feature maps or weight buffers."""
    if arch.const_area == arch.arena_area and arch.const_area == arch.fast_area:
        raise EmitError(None, f"memory mode '{arch.mode.name}' keeps constants, arena and fast storage in one "
                        "area; the emitter needs the read-only data in its own tensor (use Shared_Sram or Dedicated_Sram)")
    regions = {arch.arena_area: SCRATCH_REGION}
    if arch.fast_area != arch.arena_area:
        regions[arch.fast_area] = FAST_SCRATCH_REGION
    return regions
