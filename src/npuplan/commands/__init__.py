"""High-level command stream and its replay validator.

The package's names are those of its modules, each imported when first asked for (PEP 562): a plan
builds the stream and its addresses but never replays it, so ``npuplan plan`` loads neither the
validator nor the memory-contents model it replays over (issue 26: start-up).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_MODULE_OF = {
    "AddressPlan": "addresses", "allocate_plan": "addresses", "cpu_tensor_names": "addresses",
    "plan_addresses": "addresses",
    "command_stream_json": "serial", "read_command_stream": "serial",
    "build_command_stream": "stream",
    "Address": "types", "Box": "types", "BufferRef": "types", "Command": "types", "CpuCommand": "types",
    "DmaCommand": "types", "NpuStripeCommand": "types", "Operand": "types", "WeightSlice": "types",
    "StreamContext": "context", "stream_context": "context",
    "Violation": "replay", "ViolationKind": "replay", "raise_first": "replay", "validate": "replay",
    "validate_plan": "replay", "validate_stream": "replay",
}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    """The public name ``name`` from the module that defines it, imported on first use."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'npuplan.commands' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"npuplan.commands.{module}"), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from npuplan.commands.addresses import AddressPlan, allocate_plan, cpu_tensor_names, plan_addresses
    from npuplan.commands.context import StreamContext, stream_context
    from npuplan.commands.serial import command_stream_json, read_command_stream
    from npuplan.commands.stream import build_command_stream
    from npuplan.commands.types import Address, Box, BufferRef, Command, CpuCommand, DmaCommand, NpuStripeCommand
    from npuplan.commands.types import Operand, WeightSlice
    from npuplan.commands.replay import Violation, ViolationKind, raise_first, validate, validate_plan, validate_stream
