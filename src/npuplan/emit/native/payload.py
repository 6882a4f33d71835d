"""``create_driver_payload``: the command words wrapped for the Ethos-U driver.

Little-endian 32-bit words: the fourcc ``COP1``; a CONFIG action (tag, the CONFIG register word:
log2 of the MACs per cycle over all cores in bits 0-3, command stream version 0 in bits 4-7, SHRAM
KiB over all cores in bits 8-15, product 0 U55 / 1 U65 in bits 28-31; the ID register word of
architecture 1.0.6: patch bits 16-19, minor 20-27, major 28-31); NOPs so that the command words
start 16-byte aligned; the CMD_STREAM tag (length bits 16-23 in the tag's reserved byte, 0-15
in its parameter) and the command words.
"""

from __future__ import annotations

import struct
from typing import Any

from npuplan.emit.native.hardware import arch_of
from npuplan.errors import EmitError

_CONFIG, _CMD_STREAM, _NOP = 1, 2, 5
_CONFIG_PATCH, _CONFIG_REL = 1, 0  # the CONFIG action's parameter: patch << 4 | release
_ARCH_VERSION = (1, 0, 6)  # major, minor, patch of the register map the streams use
_MAX_WORDS = 1 << 24


def _tag(action: int, reserved: int, param: int) -> int:
    return action | (reserved << 8) | (param << 16)


def config_word(accelerator: Any) -> int:
    """The CONFIG register word the driver checks the hardware against."""
    arch = arch_of(accelerator)
    acc = arch.accelerator
    macs = arch.ncores * acc.macs_per_cycle
    shram_kib = arch.ncores * arch.shram_bytes // 1024
    return (macs.bit_length() - 1) | (shram_kib << 8) | ((1 if arch.is_u65 else 0) << 28)


def id_word() -> int:
    """The ID register word: the architecture version only."""
    major, minor, patch = _ARCH_VERSION
    return (patch << 16) | (minor << 20) | (major << 28)


def create_driver_payload(words: list[int], accelerator: Any) -> bytes:
    """The driver payload (bytes, to be placed 16-byte aligned) of command words ``words``."""
    if len(words) >= _MAX_WORDS:
        raise EmitError(None, f"the command stream of {len(words)} words exceeds the driver's limit of "
                        f"{_MAX_WORDS} words")
    header = [int.from_bytes(b"COP1", "little"), _tag(_CONFIG, 0, (_CONFIG_PATCH << 4) | _CONFIG_REL),
              config_word(accelerator), id_word()]
    header += [_tag(_NOP, 0, 0)] * (4 - (len(header) + 1) % 4)
    header.append(_tag(_CMD_STREAM, (len(words) >> 16) & 0xFF, len(words) & 0xFFFF))
    return struct.pack(f"<{len(header) + len(words)}I", *header, *words)
