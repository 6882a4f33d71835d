"""Per-accelerator datapath timing tables used by the cost model (hardware as data).

``output_cycles_per_element`` is indexed by ``OutputKind`` and ``activation_cycles_per_element``
by ``ActivationKind``; both are NPU cycles per output element (Vela 5.2.0 output-perf tables).
``acc40_delay_cycles``/``delay_cycles`` are the accumulator stall per kernel step when an OFM
block holds a single micro-block.

``lookup_only_cycles`` is the output stage's cycles per element of an op that only looks its input
up in a table (a 1x1 average pool with a table activation: a standalone sigmoid, tanh or LUT): one
lookup a cycle per 128 MACs (Vela 5.2.0's default core; a table fused into a convolution, depthwise
or elementwise op keeps ``activation_cycles``: measured on u55-128, u55-256, u65-256, u65-512).
"""

from __future__ import annotations


from npuplan._compat import StrEnum
from npuplan.records import record


class OutputKind(StrEnum):
    """Which output-stage path an op uses (selects the output cycles per element)."""

    ELEMENTWISE_32BIT_UNARY = "ew32_unary"  # the tables' first column (Vela's legacy core read it for binary ops)
    ELEMENTWISE_32BIT_BINARY = "ew32_binary"
    MUL_32BIT = "mul32"
    ACC40_OR_MUL = "acc40_or_mul"
    SIMPLE_ADD_SUB = "simple_add_sub"
    ADD_SUB = "add_sub"
    MAX_POOL = "max_pool"
    DEFAULT = "default"


class ActivationKind(StrEnum):
    """Activation-stage cost class."""

    TABLE = "table"  # sigmoid, tanh, LUT
    RELU = "relu"
    NONE = "none"


_OUTPUT_ORDER = tuple(OutputKind)
_ACTIVATION_ORDER = tuple(ActivationKind)


@record(eq=False)
class OutputTiming:
    """Output-stage and accumulator timing of one accelerator."""

    output_cycles: tuple[float, ...]  # in ``OutputKind`` order
    activation_cycles: tuple[float, ...]  # in ``ActivationKind`` order
    delay_cycles: int = 2
    acc40_delay_cycles: int = 2
    pooling_16bit_doubles: bool = True
    single_ublock_z_delay_only: bool = False  # U55-32: extra acc40 delay per z micro-block
    lookup_only_cycles: float = 1.0  # an op that is only a table lookup (see the module's note)

    def output_cycles_per_element(self, kind: OutputKind) -> float:
        return self.output_cycles[_OUTPUT_ORDER.index(kind)]

    def activation_cycles_per_element(self, kind: ActivationKind) -> float:
        return self.activation_cycles[_ACTIVATION_ORDER.index(kind)]


OUTPUT_TIMINGS: dict[str, OutputTiming] = {
    "ethos-u55-32": OutputTiming(
        (2.0, 3.0, 3.0, 3.0, 4.0, 6.0, 1.0, 2.0), (1.0, 1.0, 0.0), 3, 7, False, True
    ),
    "ethos-u55-64": OutputTiming((1.0, 1.5, 1.5, 1.5, 2.0, 3.0, 0.5, 1.0), (1.0, 1.0, 0.0), 2, 3),
    "ethos-u55-128": OutputTiming((0.75, 1.25, 0.75, 0.75, 1.0, 1.5, 0.25, 0.5), (1.0, 0.5, 0.0), 2, 3),
    "ethos-u55-256": OutputTiming((0.625, 1.125, 0.5, 0.375, 0.5, 0.75, 0.125, 0.25), (1.0, 0.25, 0.0),
                                  lookup_only_cycles=0.5),
    "ethos-u65-256": OutputTiming((0.625, 1.125, 0.5, 0.375, 0.5, 0.75, 0.125, 0.25), (1.0, 0.25, 0.0),
                                  lookup_only_cycles=0.5),
    "ethos-u65-512": OutputTiming(
        (0.3125, 0.5625, 0.25, 0.1875, 0.25, 0.375, 0.0625, 0.125), (0.5, 0.125, 0.0), lookup_only_cycles=0.25
    ),
}


def output_timing(accelerator_name: str) -> OutputTiming:
    """The output timing table of ``accelerator_name`` (``ethos-u55-128``...)."""
    return OUTPUT_TIMINGS[accelerator_name]
