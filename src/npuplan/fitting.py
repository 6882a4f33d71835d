"""A schedule's buffers allocated and its command stream drafted, re-planned under a tighter
budget while the allocation's SRAM peak overshoots it (``fitted_draft``)."""

from __future__ import annotations

import logging
from dataclasses import replace

from npuplan.commands.addresses import AddressPlan, drafted_stream
from npuplan.commands.types import Command
from npuplan.cost.weights import WeightEncodings
from npuplan.errors import InfeasiblePlan
from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.lowered import LoweredGraph
from npuplan.options import PlanOptions
from npuplan.schedule import plan_schedule
from npuplan.schedule.model.limits import Limits
from npuplan.schedule.model.types import Schedule
from npuplan.schedule.pricing.cost_adapter import default_oracle
from npuplan.schedule.pricing.oracle import CostOracle

log = logging.getLogger(__name__)

# How many times a schedule is re-planned under a tighter budget when its allocated SRAM peak
# (fragmentation) overshoots the budget, before giving up.
MAX_TIGHTENINGS = 8


def fitted_draft(
    schedule: Schedule, lowered: LoweredGraph, arch: Architecture, options: PlanOptions, *,
    encodings: WeightEncodings | None = None, oracle: CostOracle | None = None,
) -> tuple[Schedule, AddressPlan, tuple[Command, ...]]:
    """``fit_addressed_stream`` with the command stream drafted (``drafted_stream``), not addressed."""
    encodings = encodings or WeightEncodings(arch.accelerator)
    limits = Limits.of(arch)
    tighter = limits
    for _ in range(MAX_TIGHTENINGS + 1):
        allocation, drafted = drafted_stream(schedule, lowered, arch, allocator=options.tensor_allocator,
                                             cpu_tensor_alignment=options.cpu_tensor_alignment_bytes,
                                             encodings=encodings,
                                             placements=oracle.placements if oracle is not None else None)
        peak = allocation.peak_bytes(MemArea.SRAM)
        if limits.fits(peak):
            if tighter != limits:
                note = (f"re-planned within {tighter.sram_budget_bytes} bytes: "
                        f"the {options.tensor_allocator} allocation overshot")
                schedule = replace(schedule, notes=(*schedule.notes, note))
            return schedule, allocation, drafted
        tighter_bytes = tighter.sram_budget_bytes
        tighter_bytes -= max(peak - limits.sram_budget_bytes, tighter_bytes // 64, 16)
        if tighter_bytes <= 0:
            break
        tighter = limits.tightened(tighter_bytes)
        log.info("allocated SRAM peak %d > budget %d: re-planning within %d bytes", peak, limits.sram_budget_bytes,
                 tighter_bytes)
        try:
            schedule = plan_schedule(lowered, arch, options, limits=tighter,
                                     oracle=oracle or default_oracle(arch, encodings=encodings))
        except InfeasiblePlan:
            break
    raise InfeasiblePlan(
        op=lowered.name, needed_bytes=peak, budget_bytes=limits.sram_budget_bytes,
        why=f"the {options.tensor_allocator} allocator fragments SRAM", hint="try --tensor-allocator HillClimb "
        "or a larger --arena-cache-size")

