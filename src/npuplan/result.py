"""What planning produces: ``Plan`` (read by the emitter, the reports and the sweep) and the
names of the steps that make it (``STEPS``, for progress displays). ``api.plan`` builds it."""

from __future__ import annotations

from dataclasses import field

from npuplan.commands.addresses import AddressPlan
from npuplan.commands.types import Command
from npuplan.cost.weights import WeightEncodings
from npuplan.hw.memory import Architecture, MemArea
from npuplan.ir.lowered import LoweredGraph
from npuplan.options import PlanOptions
from npuplan.records import record
from npuplan.schedule.model.types import Schedule

# The steps of ``api.plan``, in order; ``on_step`` is called with each name as it starts.
STEPS = ("options", "read", "lower", "schedule", "allocate")


@record(eq=False, slots=False)
class Plan:
    """A planned network: the target, the lowered graph, the schedule, every buffer's address
    (``allocation``), the command stream the plan implies and the compile time in seconds.

    ``weight_encodings`` holds the weight encodings the planning computed, for the report to reuse.
    """

    network: str
    model_path: str
    options: PlanOptions
    arch: Architecture
    lowered: LoweredGraph
    schedule: Schedule
    compile_seconds: float
    allocation: AddressPlan | None = None
    commands: tuple[Command, ...] = ()
    weight_encodings: WeightEncodings | None = field(default=None, compare=False, repr=False)

    @property
    def sram_memory_used_bytes(self) -> int:
        """The allocated peak address of SRAM (Vela's ``sram_memory_used``, constants excluded)."""
        if self.allocation is None:
            return self.schedule.sram_peak_bytes
        return self.allocation.peak_bytes(MemArea.SRAM)
