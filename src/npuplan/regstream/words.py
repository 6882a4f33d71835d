"""Ethos-U register command words and the driver payload that carries them.

A command is one 32-bit word: bits 0-9 the opcode, bit 14 set for a command with a 32-bit payload
word after it (``cmd1``; clear: ``cmd0``), bits 16-31 a 16-bit parameter. ``cmd0`` opcodes run an
operation (``NPU_OP_*``) or set a 16-bit register (``NPU_SET_*``); ``cmd1`` opcodes set a 32-bit
register (addresses, lengths, strides, scales) from the payload word, the parameter holding the
address bits above 32. The opcode numbers below are the public Ethos-U register map.

The driver payload is little-endian 32-bit words: the fourcc ``COP1``, then driver actions, each a
tag word (bits 0-7 action, 8-15 reserved/length high, 16-31 parameter): CONFIG (1) followed by two
words, NOP (5), and CMD_STREAM (2) followed by ``(reserved << 16) | parameter`` command words.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from npuplan.errors import ValidationError
from npuplan.records import record

PAYLOAD32 = 1 << 14
OPCODE_MASK = 0x3FF

CMD0 = {
    0x000: "NPU_OP_STOP", 0x001: "NPU_OP_IRQ", 0x002: "NPU_OP_CONV", 0x003: "NPU_OP_DEPTHWISE",
    0x005: "NPU_OP_POOL", 0x006: "NPU_OP_ELEMENTWISE", 0x010: "NPU_OP_DMA_START", 0x011: "NPU_OP_DMA_WAIT",
    0x012: "NPU_OP_KERNEL_WAIT", 0x013: "NPU_OP_PMU_MASK",
    0x100: "IFM_PAD_TOP", 0x101: "IFM_PAD_LEFT", 0x102: "IFM_PAD_RIGHT", 0x103: "IFM_PAD_BOTTOM",
    0x104: "IFM_DEPTH_M1", 0x105: "IFM_PRECISION", 0x107: "IFM_UPSCALE", 0x109: "IFM_ZERO_POINT",
    0x10A: "IFM_WIDTH0_M1", 0x10B: "IFM_HEIGHT0_M1", 0x10C: "IFM_HEIGHT1_M1", 0x10D: "IFM_IB_END",
    0x10F: "IFM_REGION", 0x111: "OFM_WIDTH_M1", 0x112: "OFM_HEIGHT_M1", 0x113: "OFM_DEPTH_M1",
    0x114: "OFM_PRECISION", 0x115: "OFM_BLK_WIDTH_M1", 0x116: "OFM_BLK_HEIGHT_M1", 0x117: "OFM_BLK_DEPTH_M1",
    0x118: "OFM_ZERO_POINT", 0x11A: "OFM_WIDTH0_M1", 0x11B: "OFM_HEIGHT0_M1", 0x11C: "OFM_HEIGHT1_M1",
    0x11F: "OFM_REGION", 0x120: "KERNEL_WIDTH_M1", 0x121: "KERNEL_HEIGHT_M1", 0x122: "KERNEL_STRIDE",
    0x123: "PARALLEL_MODE", 0x124: "ACC_FORMAT", 0x125: "ACTIVATION", 0x126: "ACTIVATION_MIN",
    0x127: "ACTIVATION_MAX", 0x128: "WEIGHT_REGION", 0x129: "SCALE_REGION", 0x12D: "AB_START",
    0x12F: "BLOCKDEP", 0x130: "DMA0_SRC_REGION", 0x131: "DMA0_DST_REGION", 0x132: "DMA0_SIZE0",
    0x133: "DMA0_SIZE1", 0x180: "IFM2_BROADCAST", 0x181: "IFM2_SCALAR", 0x185: "IFM2_PRECISION",
    0x189: "IFM2_ZERO_POINT", 0x18A: "IFM2_WIDTH0_M1", 0x18B: "IFM2_HEIGHT0_M1", 0x18C: "IFM2_HEIGHT1_M1",
    0x18D: "IFM2_IB_START", 0x18F: "IFM2_REGION",
}
CMD1 = {
    0x000: "IFM_BASE0", 0x001: "IFM_BASE1", 0x002: "IFM_BASE2", 0x003: "IFM_BASE3", 0x004: "IFM_STRIDE_X",
    0x005: "IFM_STRIDE_Y", 0x006: "IFM_STRIDE_C", 0x010: "OFM_BASE0", 0x011: "OFM_BASE1", 0x012: "OFM_BASE2",
    0x013: "OFM_BASE3", 0x014: "OFM_STRIDE_X", 0x015: "OFM_STRIDE_Y", 0x016: "OFM_STRIDE_C",
    0x020: "WEIGHT_BASE", 0x021: "WEIGHT_LENGTH", 0x022: "SCALE_BASE", 0x023: "SCALE_LENGTH",
    0x024: "OFM_SCALE", 0x025: "OPA_SCALE", 0x026: "OPB_SCALE", 0x030: "DMA0_SRC", 0x031: "DMA0_DST",
    0x032: "DMA0_LEN", 0x033: "DMA0_SKIP0", 0x034: "DMA0_SKIP1", 0x080: "IFM2_BASE0", 0x081: "IFM2_BASE1",
    0x082: "IFM2_BASE2", 0x083: "IFM2_BASE3", 0x084: "IFM2_STRIDE_X", 0x085: "IFM2_STRIDE_Y",
    0x086: "IFM2_STRIDE_C", 0x090: "WEIGHT1_BASE", 0x091: "WEIGHT1_LENGTH", 0x092: "SCALE1_BASE",
    0x093: "SCALE1_LENGTH",
}
CODE_OF = {name: code for code, name in CMD0.items()} | {name: code | PAYLOAD32 for code, name in CMD1.items()}

MAGIC = b"COP1"
_CONFIG, _CMD_STREAM, _READ_APB, _DUMP_SHRAM, _NOP = 1, 2, 3, 4, 5


@record
class Word:
    """One decoded command: its name, 16-bit parameter, payload (cmd1; else None) and word offset."""

    name: str
    param: int
    payload: int | None
    offset: int

    @property
    def value(self) -> int:
        """The register value (``register_value``)."""
        return register_value(self.name, self.param, self.payload)


# The feature-map stride registers hold signed byte distances: 40 bits (the payload word and bits
# 0-7 of the parameter as bits 32-39), two's complement. Vela writes a negative stride (REVERSE_V2
# lowered to pools walking their OFM backwards) as 2**40 - |stride|. Bases and lengths are unsigned.
SIGNED_REGISTERS = frozenset(f"{fm}_STRIDE_{axis}" for fm in ("IFM", "IFM2", "OFM") for axis in "XYC")
_ADDRESS_BITS = 40


def register_value(name: str, param: int, payload: int | None) -> int:
    """The value a command sets its register to: a cmd0's 16-bit parameter, or a cmd1's payload with
    the parameter's bits 0-7 above bit 32 (sign-extended from bit 39 for ``SIGNED_REGISTERS``)."""
    if payload is None:
        return param
    value = payload | ((param & 0xFF) << 32)
    if name in SIGNED_REGISTERS and value >> (_ADDRESS_BITS - 1):
        value -= 1 << _ADDRESS_BITS
    return value


Decoded = tuple[str, int, "int | None", int]  # name, parameter, payload (cmd1; else None), word offset


def decoded(words: list[int]) -> Iterator[Decoded]:
    """The commands of a register command stream one by one, as plain tuples (a stream of tens of
    thousands of words makes no object per word); ``ValidationError`` for an unknown opcode."""
    k, count = 0, len(words)
    cmd0, cmd1 = CMD0.get, CMD1.get
    while k < count:
        word = words[k]
        code, param = word & OPCODE_MASK, (word >> 16) & 0xFFFF
        if word & PAYLOAD32:
            name = cmd1(code)
            if name is None or k + 1 >= count:
                raise ValidationError(f"command word {k}: unknown or truncated cmd1 opcode {code:#x}")
            yield name, param, words[k + 1], k
            k += 2
        else:
            name = cmd0(code)
            if name is None:
                raise ValidationError(f"command word {k}: unknown cmd0 opcode {code:#x}")
            yield name, param, None, k
            k += 1


def decode_words(words: list[int]) -> list[Word]:
    """The commands of a register command stream; raises ``ValidationError`` for an unknown opcode."""
    return [Word(*command) for command in decoded(words)]


@record
class Payload:
    """A driver payload's command words, the product its CONFIG action names (0 U55, 1 U65) and
    the whole CONFIG word (log2 of the MACs per cycle over all cores in bits 0-3; 0: no CONFIG)."""

    words: list[int]
    product: int
    config: int = 0


def payload_words(payload: bytes) -> Payload:
    """The register command stream inside a driver payload; ``ValidationError`` if it is not one."""
    if payload[:4] != MAGIC or len(payload) % 4:
        raise ValidationError(f"command stream tensor does not start with the driver header {MAGIC!r}")
    words = list(struct.unpack(f"<{len(payload) // 4}I", payload))
    k, stream, config = 1, [], 0
    while k < len(words):
        tag = words[k]
        action = tag & 0xFF
        if action == _CONFIG:
            config = words[k + 1] if k + 1 < len(words) else 0
            k += 3
        elif action in (_NOP, _READ_APB, _DUMP_SHRAM):
            k += 1
        elif action == _CMD_STREAM:
            length = (((tag >> 8) & 0xFF) << 16) | (tag >> 16)
            if k + 1 + length > len(words):
                raise ValidationError(f"driver payload: command stream of {length} words runs past its end")
            stream += words[k + 1:k + 1 + length]
            k += 1 + length
        else:
            raise ValidationError(f"driver payload word {k}: unknown driver action {action}")
    return Payload(stream, (config >> 28) & 0xF, config)


def encode_commands(commands: list[tuple[str, int]]) -> list[int]:
    """Command words of ``(register or operation name, value)`` pairs: the inverse of ``decoded``
    (a cmd1 carries its value's low 32 bits in its payload word, bits 32-39 in its parameter)."""
    out: list[int] = []
    for name, value in commands:
        code = CODE_OF[name]
        if code & PAYLOAD32:
            out += [code | (((value >> 32) & 0xFF) << 16), value & 0xFFFFFFFF]
        else:
            out.append(code | ((value & 0xFFFF) << 16))
    return out
