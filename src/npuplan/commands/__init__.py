"""High-level command stream and its replay validator."""

from npuplan.commands.addresses import AddressPlan, allocate_plan, cpu_tensor_names, plan_addresses
from npuplan.commands.serial import command_stream_json, read_command_stream
from npuplan.commands.stream import build_command_stream
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
from npuplan.commands.validate import (
    StreamContext,
    Violation,
    ViolationKind,
    raise_first,
    stream_context,
    validate,
    validate_plan,
    validate_stream,
)

__all__ = [
    "Address", "AddressPlan", "Box", "BufferRef", "Command", "CpuCommand", "DmaCommand", "NpuStripeCommand",
    "Operand", "StreamContext", "Violation", "ViolationKind", "WeightSlice", "allocate_plan",
    "build_command_stream", "command_stream_json", "cpu_tensor_names", "plan_addresses", "raise_first", "read_command_stream",
    "stream_context", "validate", "validate_plan", "validate_stream",
]
