"""Ethos-U55 and Ethos-U65 accelerator presets: hardware is data, not branches."""

from __future__ import annotations


from npuplan.errors import UsageError
from npuplan.records import record

SCALE_BIAS_BYTES = 10  # one OFM channel's encoded record: 40-bit bias, 32-bit scale, 6-bit shift


@record
class Block:
    """A block of elements, height x width x depth."""

    height: int
    width: int
    depth: int

    @property
    def elements(self) -> int:
        return self.height * self.width * self.depth


@record
class ShramGranules:
    """Shared-buffer granules (in banks) per element kind: accumulators and IFM buffers."""

    ifm8: int
    ifm16: int
    ifm8_elementwise: int
    ifm16_elementwise: int
    ifm32: int
    acc16: int
    acc32: int
    acc40: int


@record
class Accelerator:
    """One accelerator configuration.

    ``macs_per_cycle`` per core; ``ofm_ublock``/``ifm_ublock`` the micro-blocks the datapath works
    in; ``shram_banks`` of ``shram_bank_bytes`` each, of which ``shram_reserved_output_banks`` are
    kept for the output stage; ``elementwise_units`` how many elements per cycle the elementwise
    path handles; ``axi_port_bits`` the width of each AXI port.
    """

    name: str
    vela_name: str
    macs_per_cycle: int
    cores: int
    ofm_ublock: Block
    ifm_ublock: Block
    shram_banks: int
    granules: ShramGranules
    elementwise_units: int
    axi_port_bits: int
    shram_bank_bytes: int = 1024
    shram_bank_granule_banks: int = 2
    ofm_block_max: Block = Block(32, 64, 128)  # h, w, c
    ofm_split_depth: int = 16
    sub_kernel_max: Block = Block(8, 8, 65536)
    max_outstanding_kernels: int = 2
    max_outstanding_dma: int = 1
    axi_address_bits: int = 32

    @property
    def max_address_bytes(self) -> int:
        """Largest addressable offset (2**address bits): Vela's default and cap for arena_cache_size."""
        return 1 << self.axi_address_bits

    @property
    def is_u65(self) -> bool:
        return self.name.startswith("ethos-u65")

    @property
    def shram_reserved_output_banks(self) -> int:
        return 2

    @property
    def shram_reserved_unused_banks(self) -> int:
        return 2 if self.shram_banks > 16 else 0

    @property
    def shram_available_banks(self) -> int:
        return self.shram_banks - self.shram_reserved_output_banks - self.shram_reserved_unused_banks

    @property
    def axi_port_bytes(self) -> int:
        return self.axi_port_bits // 8


_G_LARGE = ShramGranules(8, 8, 8, 8, 16, 8, 16, 20)
_U55_128_G = ShramGranules(4, 4, 4, 4, 8, 4, 8, 12)
_U55_64_G = ShramGranules(2, 2, 2, 2, 4, 4, 4, 8)
_U55_32_G = ShramGranules(2, 2, 2, 2, 4, 4, 4, 4)

ACCELERATORS: dict[str, Accelerator] = {
    a.name: a
    for a in (
        Accelerator("ethos-u55-32", "Ethos_U55_32", 32, 1, Block(1, 1, 4), Block(1, 1, 8), 16, _U55_32_G, 1, 64),
        Accelerator("ethos-u55-64", "Ethos_U55_64", 64, 1, Block(1, 1, 8), Block(1, 1, 8), 16, _U55_64_G, 2, 64),
        Accelerator("ethos-u55-128", "Ethos_U55_128", 128, 1, Block(1, 2, 8), Block(1, 2, 8), 24, _U55_128_G, 4, 64),
        Accelerator("ethos-u55-256", "Ethos_U55_256", 256, 1, Block(2, 2, 8), Block(2, 2, 8), 48, _G_LARGE, 8, 64),
        Accelerator(
            "ethos-u65-256", "Ethos_U65_256", 256, 1, Block(2, 2, 8), Block(2, 2, 8), 48, _G_LARGE, 8, 128,
            max_outstanding_dma=2, axi_address_bits=40,
        ),
        Accelerator(
            "ethos-u65-512", "Ethos_U65_512", 256, 2, Block(2, 2, 8), Block(2, 2, 8), 48, _G_LARGE, 8, 128,
            max_outstanding_dma=2, axi_address_bits=40,
        ),
    )
}


def accelerator(name: str) -> Accelerator:
    """The preset called ``name`` (``ethos-u55-128``...); ``UsageError`` (a ``ConfigError``) listing the
    valid ones, or saying Ethos-U85 is not supported yet."""
    try:
        return ACCELERATORS[name.lower()]
    except KeyError:
        valid = ", ".join(ACCELERATORS)
        if name.lower().startswith("ethos-u85"):
            raise UsageError(f"Ethos-U85 is not supported yet: '{name}' (valid: {valid})") from None
        raise UsageError(f"unknown accelerator config '{name}' (valid: {valid})") from None
