"""High-level command stream and its replay validator."""

from npuplan.commands.addresses import plan_addresses
from npuplan.commands.stream import build_command_stream, command_stream_json
from npuplan.commands.types import (
    Address,
    Box,
    BufferRef,
    Command,
    CpuCommand,
    DmaCommand,
    NpuStripeCommand,
    Operand,
    WeightSlice,
)
from npuplan.commands.validate import Violation, ViolationKind, validate, validate_plan

__all__ = [
    "Address", "Box", "BufferRef", "Command", "CpuCommand", "DmaCommand", "NpuStripeCommand", "Operand",
    "Violation", "ViolationKind", "WeightSlice", "build_command_stream", "command_stream_json",
    "plan_addresses", "validate", "validate_plan",
]
