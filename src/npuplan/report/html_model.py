"""The HTML report's model: everything the page shows, as plain frozen data read from a plan
document (the plan JSON's contents), so ``npuplan plan --html`` and ``npuplan report PLAN.json``
show the same figures. Nothing here needs plotly.

Units: bytes, cycles (NPU core clock) and MACs as counts. Names are kept as the model gave them;
the renderer escapes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from npuplan.commands.addresses import name_lifetimes
from npuplan.commands.plan_file import PlanFileError
from npuplan.commands.serial import StreamFormatError, read_layouts
from npuplan.records import record
from npuplan.report.doc_fields import Fields
from npuplan.report.sram_timeline import SramStep, sram_steps
from npuplan.report.stream_uses import CommandUse, command_uses

@record
class CycleSplit:
    """An NPU op's cycles: compute, each memory's transfer time (the op takes the longest) and the
    op's lower bound: its MACs at the array's peak rate, its weight bytes (less those prebuffered
    during an earlier op) at the bandwidth of the memory they are stored in."""

    total_cycles: float
    compute_cycles: float
    access_cycles: Mapping[str, float]
    macs: int
    weight_bytes: float
    mac_bound_cycles: float
    weight_bound_cycles: float

    @property
    def lower_bound_cycles(self) -> float:
        return max(self.mac_bound_cycles, self.weight_bound_cycles)

    @property
    def bound_by(self) -> str:
        """What sets the op's time: ``"compute"`` or the memory whose transfers take longest."""
        area, cycles = max(self.access_cycles.items(), key=lambda item: item[1], default=("", 0.0))
        return area if cycles > self.compute_cycles else "compute"


@record
class OpRow:
    """One op in execution order (step = its index), NPU or CPU."""

    step: int
    name: str
    placement: str  # "npu" or "cpu"
    tflite_operator: str
    operator: str  # the NPU operator ("" on the CPU)
    reason: str  # why the op runs on the CPU ("" on the NPU)
    cascade: int  # cascade id, -1 when not in a cascade
    block_config: str  # "HxWxD" of the OFM block ("" on the CPU)
    ofm_shape: tuple[int, ...]
    ofm_stripe: tuple[int, ...]
    ifm_stripe: tuple[int, ...]
    weight_buffering: str
    sram_usage_bytes: int
    cycles: CycleSplit | None


@record
class TensorRow:
    """Where one buffer lives: memory area, kind, bytes, offset, shape and the op steps it is live."""

    name: str
    area: str
    kind: str
    size_bytes: int
    offset: int
    shape: tuple[int, ...]
    first_step: int
    last_step: int


@record
class CascadeRow:
    """A cascade: its ops run stripe by stripe from ``first_step`` to ``last_step``."""

    id: int
    first_step: int
    last_step: int
    ops: tuple[str, ...]
    sram_bytes: int


@record(slots=False)
class HtmlReport:
    """One plan, as the HTML report shows it."""

    network: str
    source: str  # the model (or plan file) the report was made from
    target: tuple[tuple[str, str], ...]
    summary: tuple[tuple[str, object], ...]
    ops: tuple[OpRow, ...]
    sram: tuple[SramStep, ...]
    sram_area: str
    sram_budget_bytes: int
    sram_allocated_bytes: int
    tensors: tuple[TensorRow, ...]
    cascades: tuple[CascadeRow, ...]
    removed_ops: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]

    @property
    def peak_step(self) -> int:
        """The op step where the most fast-memory bytes are live (the first such; -1 without ops)."""
        totals = [s.total_bytes for s in self.sram]
        return totals.index(max(totals)) if totals else -1

    def summary_value(self, key: str) -> object:
        return dict(self.summary).get(key)


def html_report(document: Mapping[str, Any], source: str | Path) -> HtmlReport:
    """The report of a plan document read from ``source`` (named in errors). Raises
    ``PlanFileError`` naming the first field that is missing or of the wrong type."""
    path = Path(source)
    target = document.get("target")
    if isinstance(target, Mapping) and "accelerator_config" in target and "macs_per_cycle" not in target:
        raise PlanFileError(f"plan '{path}' lacks the target rates the HTML report needs (written by an older "
                            "npuplan?): plan the model again")
    try:
        return _report(Fields(document, "plan"), path)
    except (StreamFormatError, TypeError, ValueError, KeyError) as error:
        raise PlanFileError(f"plan '{path}': {error}") from None


@record
class _Rates:
    """The target's peak rates: MACs per cycle, and where weights are stored and its bytes per cycle."""

    macs_per_cycle: int
    weights_area: str
    weight_bytes_per_cycle: float


def _rates(target: Fields) -> _Rates:
    area = target.text("weights_area")
    return _Rates(max(target.whole("macs_per_cycle"), 1), area,
                  target.section("bytes_per_cycle").numbers().get(area, 0.0))


def _report(doc: Fields, path: Path) -> HtmlReport:
    target = doc.section("target")
    rates = _rates(target)
    ops = tuple(_op(f, step, rates) for step, f in enumerate(doc.items("ops")))
    step_of = {op.name: op.step for op in ops}
    buffers = (doc.section("tensors"), doc.section("allocation").section("buffers"))
    layouts = read_layouts([b.data for b in buffers])
    uses = command_uses(doc.data.get("commands"), layouts)
    lives = name_lifetimes([u.buffers for u in uses], doc.strs("inputs"), doc.strs("outputs"),
                           stripes=[u.stripe for u in uses], ahead=[u.ahead for u in uses])
    steps = _steps_of_commands(uses, step_of)
    area = target.text("fast_area")
    areas = doc.section("allocation").section("areas")
    return HtmlReport(
        network=doc.text("network"),
        source=str(doc.optional("model", str) or path),
        target=(*((k, _text(v)) for k, v in target.scalars().items()),
                *((f"bytes_per_cycle.{k}", f"{v:g}") for k, v in target.section("bytes_per_cycle").numbers().items())),
        summary=tuple(doc.section("summary").scalars().items()),
        ops=ops,
        sram=sram_steps(layouts, lives, steps, len(ops), area=area),
        sram_area=area,
        sram_budget_bytes=target.whole("arena_cache_size_bytes"),
        sram_allocated_bytes=areas.section(area).whole("peak_bytes") if area in areas.keys() else 0,
        tensors=_tensors(buffers, lives, steps),
        cascades=tuple(_cascade(f, step_of) for f in doc.items("cascades")),
        removed_ops=tuple((f.text("name"), f.text("reason")) for f in doc.items("removed_ops")),
        notes=doc.strs("notes"),
    )


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _op(f: Fields, step: int, rates: _Rates) -> OpRow:
    placement = f.text("placement")
    if placement not in ("npu", "cpu"):
        raise StreamFormatError(f"{f.where}.placement must be 'npu' or 'cpu' (it is {placement!r:.40})")
    if placement == "cpu":
        return OpRow(step, f.text("name"), "cpu", f.text("tflite_operator"), "", f.text("reason"), -1, "",
                     (), (), (), "", 0, None)
    stripes = f.section("stripes")
    block = f.optional("block_config", dict)
    ofm_block = Fields(block, f"{f.where}.block_config").shape("ofm_block") if block else ()
    return OpRow(
        step=step, name=f.text("name"), placement="npu", tflite_operator=f.text("tflite_operator"),
        operator=f.text("operator"), reason="", cascade=f.signed("cascade"),
        block_config="x".join(str(v) for v in ofm_block), ofm_shape=f.section("ofm").shape("shape"),
        ofm_stripe=stripes.shape("ofm"), ifm_stripe=stripes.shape("ifm"),
        weight_buffering=f.section("weights").text("buffering"), sram_usage_bytes=f.whole("sram_usage_bytes"),
        cycles=_cycles(f, rates),
    )


def _cycles(f: Fields, rates: _Rates) -> CycleSplit | None:
    cost = f.optional("cost", dict)
    if cost is None:
        return None
    c = Fields(cost, f"{f.where}.cost")
    moved = c.section("access_bytes").numbers()
    stored = (f"{rates.weights_area}.weights.", f"{rates.weights_area}.scales.")
    # Bytes fetched during an earlier op (prebuffered) are not on this op's path.
    read = sum(v for k, v in moved.items() if k.startswith(stored))
    weight_bytes = max(read - f.section("weights").whole("prebuffered_bytes"), 0)
    rate = rates.weight_bytes_per_cycle
    macs = c.whole("nn_macs")
    return CycleSplit(
        total_cycles=c.number("total_cycles"), compute_cycles=c.number("npu_cycles"),
        access_cycles=c.section("access_cycles").numbers(), macs=macs, weight_bytes=weight_bytes,
        mac_bound_cycles=macs / rates.macs_per_cycle, weight_bound_cycles=weight_bytes / rate if rate > 0 else 0.0,
    )


def _steps_of_commands(uses: Sequence[CommandUse], step_of: Mapping[str, int]) -> list[int]:
    """Each command's op step; a command naming no known op belongs to the step before it."""
    steps, current = [], 0
    for use in uses:
        current = step_of.get(use.op, current)
        steps.append(current)
    return steps


def _tensors(tables: Sequence[Fields], lives: Mapping[str, tuple[int, int]], steps: Sequence[int]) -> tuple[TensorRow, ...]:
    """Every buffer of the ``tensors`` and ``allocation.buffers`` tables that has an address, with
    the op steps of the commands it is live across (as the SRAM chart counts it)."""
    by_command = np.asarray(steps, dtype=np.int64)
    rows = []
    for table in tables:
        for name in table.keys():
            entry = table.section(name)
            if "offset" not in entry.keys():
                continue
            first = last = -1
            if name in lives:
                span = by_command[lives[name][0]: lives[name][1] + 1]
                first, last = int(span.min()), int(span.max())
            rows.append(TensorRow(name, entry.text("area"), entry.text("kind"), entry.whole("size_bytes"),
                                  entry.whole("offset"), entry.optional_shape("shape"), first, last))
    return tuple(rows)


def _cascade(f: Fields, step_of: Mapping[str, int]) -> CascadeRow:
    names = f.strs("ops")
    steps = [step_of[n] for n in names if n in step_of] or [-1]
    return CascadeRow(f.signed("id"), min(steps), max(steps), names, f.whole("sram_bytes"))
