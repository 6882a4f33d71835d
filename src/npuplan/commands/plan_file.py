"""Validate a written plan JSON on its own: read its command stream and buffer tables back and
replay them (``npuplan validate PLAN.json``). The model is not needed: the plan JSON records every
tensor's shape and address, the network's inputs and outputs and the SRAM limit.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import MappingProxyType
from typing import Any

from npuplan.commands.serial import StreamFormatError, plan_int, plan_str, read_command_stream, read_layouts
from npuplan.commands.types import Address, Command
from npuplan.commands.context import StreamContext
from npuplan.commands.replay import raise_first, validate_stream
from npuplan.errors import ModelError
from npuplan.ir.model_checks import LIMITS
from npuplan.records import record


class PlanFileError(ModelError):
    """A plan JSON that is missing, unreadable or not one npuplan wrote (CLI exit status 2)."""


@record
class PlanStream:
    """A plan JSON's command stream with everything its replay needs."""

    network: str
    commands: tuple[Command, ...]
    addresses: dict[str, Address]
    context: StreamContext
    sram_limit_bytes: int | None


def _document(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise PlanFileError(f"cannot read plan '{path}': {error.strerror or error}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise PlanFileError(f"plan '{path}' is not valid JSON: {error.msg} at line {error.lineno}") from None
    if not isinstance(document, dict):
        raise PlanFileError(f"plan '{path}' is not a JSON object")
    return document


def _section(document: dict[str, Any], key: str, kind: type, path: Path) -> Any:
    value = document.get(key)
    if not isinstance(value, kind):
        raise PlanFileError(f"plan '{path}' has no '{key}' {kind.__name__}; was it written by npuplan plan?")
    return value


def load_plan_document(path: str | Path) -> dict[str, Any]:
    """The JSON object at ``path``; raises ``PlanFileError`` when it cannot be read as one."""
    return _document(Path(path))


def read_plan_stream(path: str | Path) -> PlanStream:
    """Read ``path``; raises ``PlanFileError`` naming what is missing or malformed."""
    path = Path(path)
    document = _document(path)
    tensors = _section(document, "tensors", dict, path)
    allocation = _section(document, "allocation", dict, path)
    entries = _section(document, "commands", list, path)
    try:
        shapes = {name: _shape(entry["shape"])
                  for name, entry in tensors.items() if isinstance(entry, dict) and entry.get("shape")}
        layouts = read_layouts([tensors, _section(allocation, "buffers", dict, path)])
        commands, addresses = read_command_stream(entries, layouts, shapes)
        inputs = tuple(plan_str(t, "input") for t in _section(document, "inputs", list, path))
        outputs = tuple(plan_str(t, "output") for t in _section(document, "outputs", list, path))
        limit = allocation.get("sram_limit_bytes")
        limit = None if limit is None else plan_int(limit, "sram_limit_bytes")
    except (StreamFormatError, TypeError, ValueError, KeyError) as error:
        raise PlanFileError(f"plan '{path}': {error}") from None
    context = StreamContext(MappingProxyType(shapes), inputs, outputs)  # type: ignore[arg-type]
    return PlanStream(str(document.get("network", path.stem)), commands, addresses, context, limit)


def _shape(values: Any) -> tuple[int, ...]:
    """A tensor shape from the plan (NHWC, at most ``LIMITS.max_tensor_bytes``
    elements: the replay keeps a mask of each tensor's written elements)."""
    if not isinstance(values, list) or len(values) != 4:
        raise StreamFormatError(f"a shape must be a list of 4 whole numbers (NHWC; it is {values!r:.40})")
    shape = tuple(plan_int(v, "shape dimension") for v in values)
    if math.prod(shape) > LIMITS.max_tensor_bytes:
        raise StreamFormatError(f"shape {list(shape)} has more than {LIMITS.max_tensor_bytes} elements")
    return shape


def validate_plan_file(path: str | Path) -> PlanStream:
    """Replay the plan JSON at ``path``; raises ``ValidationError`` (exit status 3) naming the first
    violation, or ``PlanFileError`` (exit status 2) when the file cannot be read as a plan."""
    stream = read_plan_stream(path)
    raise_first(validate_stream(stream.commands, stream.context, stream.addresses,
                                sram_limit_bytes=stream.sram_limit_bytes))
    return stream
