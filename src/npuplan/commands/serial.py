"""The command stream as JSON, and back from a written plan JSON (``npuplan validate PLAN.json``).

Every operand names its buffer and gives its absolute address; the buffers' addresses and layouts
come from the plan's ``tensors`` table (feature maps and constant operands) and its
``allocation.buffers`` table (weight streams and weight buffers). Reading a stream back takes each
buffer's address from those tables, so moving a buffer in a table moves every use of it, and an
operand address that disagrees with its buffer is replayed where it points.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from npuplan.commands.stream import iter_operands
from npuplan.commands.types import (
    Address,
    Box,
    BufferKind,
    BufferRef,
    Command,
    CpuCommand,
    DmaCommand,
    DmaPurpose,
    NpuStripeCommand,
    Operand,
    WeightSlice,
)
from npuplan.hw.memory import MemArea

Layout = tuple[Address, BufferKind, int, int | None]  # address, kind, row bytes, rolling rows


def _operand_json(operand: Operand | None) -> dict[str, Any] | None:
    if operand is None:
        return None
    return {"tensor": operand.tensor, **operand.box.as_json(), **operand.buffer.as_json()}


def _slice_json(piece: WeightSlice) -> dict[str, Any]:
    return {"index": piece.index, "depth": [piece.depth_start, piece.depth_end],
            "stream_offset_bytes": piece.stream_offset_bytes, "size_bytes": piece.size_bytes}


def _command_json(command: Command) -> dict[str, Any]:
    if isinstance(command, DmaCommand):
        return {
            "kind": "dma", "purpose": str(command.purpose), "tensor": command.tensor, "op": command.op,
            "src_area": str(command.src_area), "src_address": command.src_address, "src_buffer": command.src.name,
            "dst_area": str(command.dst_area), "dst_address": command.dst_address, "dst_buffer": command.dst.name,
            "size_bytes": command.size_bytes,
            "slice": None if command.weight_slice is None else _slice_json(command.weight_slice),
        } | ({"ahead": True} if command.ahead else {})
    if isinstance(command, NpuStripeCommand):
        piece, ref = command.weight_slice, command.weights
        return {
            "kind": "npu_stripe", "op": command.op, "block_config": command.block_config,
            "ifm": _operand_json(command.ifm), "ifm2": _operand_json(command.ifm2),
            "ofm": _operand_json(command.ofm),
            "weights": None if piece is None or ref is None else {
                "content": command.weights_tensor, **_slice_json(piece), **ref.as_json(),
            },
            "elementwise": command.elementwise,
        }
    return {"kind": "cpu", "op": command.op,
            "inputs": [_operand_json(o) for o in command.inputs],
            "outputs": [_operand_json(o) for o in command.outputs]}


def command_stream_json(commands: Sequence[Command]) -> list[dict[str, Any]]:
    """The command stream as JSON-ready dicts (one per command, ``"kind"`` first)."""
    return [_command_json(c) for c in commands]


def _refs(command: Command) -> Iterator[BufferRef]:
    yield from (o.buffer for o in iter_operands(command))
    if isinstance(command, NpuStripeCommand) and command.weights is not None:
        yield command.weights
    if isinstance(command, DmaCommand):
        yield command.src
        yield command.dst


def buffer_layouts(commands: Sequence[Command]) -> dict[str, Layout]:
    """Every buffer the stream touches, with its address and row layout, in first-use order."""
    found: dict[str, Layout] = {}
    for command in commands:
        for ref in _refs(command):
            found.setdefault(ref.name, (ref.address, ref.kind, ref.row_bytes, ref.rows))
    return found


def operand_tensors(commands: Sequence[Command]) -> set[str]:
    """Names of the buffers that are a tensor's own buffer (the rest hold weight streams, weight
    buffers or staged copies)."""
    return {o.buffer.name for c in commands for o in iter_operands(c) if o.buffer.name == o.tensor}


def layout_json(layout: Layout) -> dict[str, Any]:
    """One buffer's address and layout as the plan JSON's ``tensors``/``buffers`` entries give it."""
    address, kind, row_bytes, rows = layout
    return {"area": str(address.area), "offset": address.offset, "size_bytes": address.size_bytes,
            "kind": str(kind), "row_bytes": row_bytes, "rows": rows}


# ---------------------------------------------------------------------------- reading back


class StreamFormatError(ValueError):
    """A plan JSON whose command stream or buffer tables cannot be read."""


# The largest address, size or coordinate a plan JSON may hold (1 TiB: beyond any NPU's memory).
MAX_PLAN_VALUE = 1 << 40


def plan_int(value: Any, what: str) -> int:
    """``value`` as a whole number in ``[0, MAX_PLAN_VALUE]``; a JSON float, bool, string or
    anything else is a malformed plan, not something to coerce."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_PLAN_VALUE:
        raise StreamFormatError(f"{what} must be a whole number in [0, {MAX_PLAN_VALUE}] (it is {value!r:.40})")
    return value


def plan_str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise StreamFormatError(f"{what} must be a string (it is {value!r:.40})")
    return value


def _layout(entry: Mapping[str, Any]) -> Layout:
    rows = entry.get("rows")
    return (Address(MemArea(entry["area"]), plan_int(entry["offset"], "offset"),
                    plan_int(entry["size_bytes"], "size_bytes")),
            BufferKind(entry["kind"]), plan_int(entry.get("row_bytes") or 0, "row_bytes"),
            None if rows is None else max(plan_int(rows, "rows"), 1) if rows else _no_rows())


def _no_rows() -> int:
    raise StreamFormatError("a rolling buffer must hold at least one row")


def read_layouts(tables: Sequence[Mapping[str, Any]]) -> dict[str, Layout]:
    """Buffer layouts from the plan JSON's tables (``tensors``, ``allocation.buffers``)."""
    layouts: dict[str, Layout] = {}
    for table in tables:
        for name, entry in table.items():
            if not isinstance(entry, Mapping) or "offset" not in entry:
                continue
            try:
                layouts[name] = _layout(entry)
            except (KeyError, TypeError, ValueError) as error:
                raise StreamFormatError(f"bad buffer entry '{name:.60}' ({error})") from None
    return layouts


# The largest batch a plan's box may span when its tensor's shape is not recorded.
MAX_BATCH = 1 << 16


class _Reader:
    def __init__(self, layouts: Mapping[str, Layout], shapes: Mapping[str, tuple[int, ...]]) -> None:
        self.layouts = layouts
        self.shapes = shapes

    def ref(self, name: Any, address: Any) -> BufferRef:
        name = plan_str(name, "buffer name")
        if name not in self.layouts:
            raise StreamFormatError(f"command names buffer '{name:.60}', which has no address")
        where, kind, row_bytes, rows = self.layouts[name]
        return BufferRef(name, where, kind, row_bytes, rows, plan_int(address, "address") - where.offset)

    def operand(self, data: Mapping[str, Any] | None) -> Operand | None:
        if data is None:
            return None
        box = Box(_coordinates(data["start"]), _coordinates(data["end"]))  # type: ignore[arg-type]
        tensor = plan_str(data["tensor"], "tensor")
        shape = self.shapes.get(tensor, (MAX_BATCH, MAX_PLAN_VALUE, MAX_PLAN_VALUE, MAX_PLAN_VALUE))
        if any(not 0 <= a <= b <= d for a, b, d in zip(box.start, box.end, shape)):
            raise StreamFormatError(f"box {list(box.start)}..{list(box.end)} of '{tensor:.60}' is not inside "
                                    f"its shape {list(shape)}")
        return Operand(tensor, box, self.ref(data["buffer"], data["address"]))

    def command(self, data: Mapping[str, Any]) -> Command:
        kind = data["kind"]
        if kind == "dma":
            piece = None if data.get("slice") is None else _slice(data["slice"], data["size_bytes"])
            return DmaCommand(MemArea(data["src_area"]), plan_int(data["src_address"], "src_address"),
                              MemArea(data["dst_area"]), plan_int(data["dst_address"], "dst_address"),
                              plan_int(data["size_bytes"], "size_bytes"), plan_str(data["tensor"], "tensor"),
                              DmaPurpose(data["purpose"]), self.ref(data["src_buffer"], data["src_address"]),
                              self.ref(data["dst_buffer"], data["dst_address"]), piece, plan_str(data.get("op", ""), "op"),
                              data.get("ahead", False) is True)
        if kind == "npu_stripe":
            w = data.get("weights")
            ofm = self.operand(data["ofm"])
            assert ofm is not None
            return NpuStripeCommand(
                plan_str(data["op"], "op"), self.operand(data.get("ifm")), self.operand(data.get("ifm2")), ofm,
                None if w is None else _slice(w, w["size_bytes"]),
                None if w is None else self.ref(w["buffer"], w["address"]),
                plan_str(data.get("block_config", ""), "block_config"),
                "" if w is None else plan_str(w["content"], "weights content"), bool(data.get("elementwise", False)))
        if kind == "cpu":
            return CpuCommand(plan_str(data["op"], "op"), tuple(self.operand(o) for o in data["inputs"]),  # type: ignore[misc]
                              tuple(self.operand(o) for o in data["outputs"]))  # type: ignore[misc]
        raise StreamFormatError(f"unknown command kind '{kind}'")


def _coordinates(values: Any) -> tuple[int, ...]:
    if not isinstance(values, list) or len(values) != 4:
        raise StreamFormatError(f"a box corner must be a list of 4 whole numbers (it is {values!r:.40})")
    return tuple(plan_int(v, "box coordinate") for v in values)


def _slice(data: Mapping[str, Any], size_bytes: Any) -> WeightSlice:
    depth = data["depth"]
    if not isinstance(depth, list) or len(depth) != 2:
        raise StreamFormatError(f"weight slice depth must be [start, end] (it is {depth!r:.40})")
    return WeightSlice(plan_int(data["index"], "slice index"), plan_int(depth[0], "depth"),
                       plan_int(depth[1], "depth"), plan_int(data["stream_offset_bytes"], "stream_offset_bytes"),
                       plan_int(size_bytes, "size_bytes"))


def read_command_stream(
    entries: Sequence[Mapping[str, Any]], layouts: Mapping[str, Layout],
    shapes: Mapping[str, tuple[int, ...]] | None = None,
) -> tuple[tuple[Command, ...], dict[str, Address]]:
    """Commands and every buffer's address from a plan JSON's ``commands`` and buffer layouts;
    ``shapes`` (4D, per tensor) bound the boxes the commands may name.

    Raises ``StreamFormatError`` naming the first command that cannot be read.
    """
    reader = _Reader(layouts, shapes or {})
    commands: list[Command] = []
    for k, entry in enumerate(entries):
        try:
            commands.append(reader.command(entry))
        except StreamFormatError as error:
            raise StreamFormatError(f"command {k}: {error}") from None
        except (KeyError, TypeError, ValueError, AssertionError, AttributeError, IndexError) as error:
            raise StreamFormatError(f"command {k} is malformed ({type(error).__name__}: {error})") from None
    return tuple(commands), {name: layout[0] for name, layout in layouts.items()}
