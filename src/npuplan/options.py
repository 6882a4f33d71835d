"""Plan options: one frozen record that travels through every pass (no globals, no env flags)."""

from __future__ import annotations


from npuplan._compat import StrEnum
from npuplan.records import record


class Optimise(StrEnum):
    """What to optimise for, as Vela's ``--optimise``."""

    PERFORMANCE = "Performance"
    SIZE = "Size"


class TensorAllocator(StrEnum):
    """Address allocator, as Vela's ``--tensor-allocator``."""

    GREEDY = "Greedy"
    LINEAR = "LinearAlloc"
    HILLCLIMB = "HillClimb"


class Search(StrEnum):
    """Which scheduler search to run: the 2021 cascade search, the Pareto DP, or both (best kept)."""

    AUTO = "auto"
    CASCADE = "cascade"
    PARETO = "pareto"


DEFAULT_CONFIG = "internal-default"


@record
class PlanOptions:
    """Every user-settable option; names follow Vela's command line.

    ``arena_cache_size_bytes`` of ``None`` takes the memory mode's value.
    """

    accelerator_config: str = "ethos-u55-128"
    config_files: tuple[str, ...] = ()
    system_config: str = DEFAULT_CONFIG
    memory_mode: str = DEFAULT_CONFIG
    optimise: Optimise = Optimise.PERFORMANCE
    arena_cache_size_bytes: int | None = None
    tensor_allocator: TensorAllocator = TensorAllocator.HILLCLIMB
    cpu_tensor_alignment_bytes: int = 16
    search: Search = Search.AUTO
    fm_staging: bool = True  # Dedicated_Sram: DMA arena feature maps into the cache before their reader when faster
    concat_in_place: bool = True  # also plan producers writing concatenated slices in place; keep the better plan
    buffer_weights: bool = False  # copy every op's weights into SRAM where they fit, faster or not (as Vela)
    reorder: bool = True  # also plan the ops in the order of least memory (schedule.order); keep the better plan
    deployable: bool = False  # only what --emit-tflite can express on the NPU (lowering.deployable); the rest on the CPU
    deploy_cpu_ops: tuple[int, ...] = ()  # deployable: TFLite operator indices also kept on the CPU (emitter refused them)
