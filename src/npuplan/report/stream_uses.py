"""What the HTML report needs of a plan JSON's command stream: each command's op and the buffers it
touches, and so each buffer's lifetime in command indices (as the allocator placed it: from the
first command touching it to the last, network inputs from the start, outputs to the end, a DMA
fetched ahead holding its destination from the stripe it runs under: ``name_lifetimes``, the one rule).

Read strictly but narrowly: the replay validator (``npuplan validate``) reads every box and
address; the report reads only names, so a large plan's page does not wait for a full parse.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from npuplan.commands.serial import StreamFormatError
from npuplan.records import record

# Where each kind of command names its buffers: operand fields (objects with a "buffer"), operand
# list fields, and fields that are buffer names themselves.
_OPERANDS = {"npu_stripe": ("ifm", "ifm2", "ofm", "weights"), "cpu": (), "dma": ()}
_OPERAND_LISTS = {"npu_stripe": (), "cpu": ("inputs", "outputs"), "dma": ()}
_NAMES = {"npu_stripe": (), "cpu": (), "dma": ("src_buffer", "dst_buffer")}


@record
class CommandUse:
    """One command: the op it works for, the buffers it reads or writes, whether it is an NPU
    stripe and, for a DMA fetched ahead of its op, its destination (else None)."""

    op: str
    buffers: tuple[str, ...]
    stripe: bool = False
    ahead: str | None = None


def _name(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise StreamFormatError(f"{where} must be a string (it is {value!r:.40})")
    return value


def _operand_buffer(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, Mapping):
        raise StreamFormatError(f"{where} must be an object or null")
    return [_name(value.get("buffer"), f"{where}.buffer")]


def command_use(entry: Any, where: str, known: Mapping[str, object]) -> CommandUse:
    """The op and buffers of one ``commands`` entry; every buffer must be in ``known``."""
    if not isinstance(entry, Mapping):
        raise StreamFormatError(f"{where} must be an object")
    kind = entry.get("kind")
    if kind not in _OPERANDS:
        raise StreamFormatError(f"{where}.kind must be one of {sorted(_OPERANDS)} (it is {kind!r:.40})")
    buffers: list[str] = []
    for key in _OPERANDS[kind]:
        buffers += _operand_buffer(entry.get(key), f"{where}.{key}")
    for key in _OPERAND_LISTS[kind]:
        items = entry.get(key)
        if not isinstance(items, list):
            raise StreamFormatError(f"{where}.{key} must be a list")
        for k, item in enumerate(items):
            buffers += _operand_buffer(item, f"{where}.{key}[{k}]")
    buffers += [_name(entry.get(key), f"{where}.{key}") for key in _NAMES[kind]]
    for name in buffers:
        if name not in known:
            raise StreamFormatError(f"{where} names buffer '{name:.60}', which has no address")
    ahead = buffers[-1] if kind == "dma" and entry.get("ahead", False) is True else None
    return CommandUse(_name(entry.get("op", ""), f"{where}.op"), tuple(buffers), kind == "npu_stripe", ahead)


def command_uses(entries: Any, known: Mapping[str, object]) -> tuple[CommandUse, ...]:
    """Every entry of a plan's ``commands`` list read with ``command_use``."""
    if not isinstance(entries, list):
        raise StreamFormatError("plan.commands must be a list")
    return tuple(command_use(e, f"plan.commands[{k}]", known) for k, e in enumerate(entries))
