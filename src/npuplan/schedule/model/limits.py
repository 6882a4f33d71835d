"""``Limits``: the one owner of what a plan may use of fast storage.

The SRAM budget (``--arena-cache-size``, else the memory mode's ``arena_cache_size``, else the
accelerator's address space: ``hw.build.arena_cache_size`` reads and bounds it into
``Architecture.arena_cache_size_bytes``), the check that a decision set fits it, and Size's rule
for trading peak bytes against cycles. The search reads the budget from here and nowhere else;
``api`` re-plans under ``limits.tightened(...)`` when an allocation overshoots, never by
rewriting the options.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from npuplan.errors import InfeasiblePlan
from npuplan.hw.memory import Architecture
from npuplan.records import record
from npuplan.schedule.model.decisions import Decisions
from npuplan.schedule.model.network import Network
from npuplan.schedule.model.usage import fast_buffers, usage_by_time

# Size keeps the least peak unless more memory buys disproportionate speed: a percent of extra SRAM
# must save more than this many percent of cycles (ds_cnn_kws: +17% SRAM for -75% cycles is taken)
SIZE_MEMORY_WEIGHT = 3.0


@record
class Limits:
    """The fast-storage budget of one plan in bytes, and the rules that read it.

    ``sram_budget_bytes`` caps the allocated peak of fast storage (SRAM; the cache on
    Dedicated_Sram); ``size_memory_weight`` is Size's price of a percent of extra peak in percent
    of cycles (``size_trade``)."""

    sram_budget_bytes: int
    size_memory_weight: float = SIZE_MEMORY_WEIGHT

    @classmethod
    def of(cls, arch: Architecture) -> Limits:
        """The limits of ``arch``: its arena cache size (the option already applied by ``hw.build``)."""
        return cls(int(arch.arena_cache_size_bytes))

    def tightened(self, sram_budget_bytes: int) -> Limits:
        """These limits with a smaller budget (``api`` re-plans with it when allocation overshoots)."""
        return replace(self, sram_budget_bytes=min(sram_budget_bytes, self.sram_budget_bytes))

    def fits(self, peak_bytes: int) -> bool:
        """Whether a peak of ``peak_bytes`` of fast storage is within the budget."""
        return peak_bytes <= self.sram_budget_bytes

    def check_fits(self, net: Network, dec: Decisions) -> None:
        """Raise ``InfeasiblePlan`` naming the op at ``dec``'s live-bytes peak, what it needs, and why."""
        check_fits(net, dec, self.sram_budget_bytes)

    def size_trade(self, figures: Sequence[tuple[int, int]], *, free_bytes: int = 0) -> int:
        """Size's choice among ``(peak bytes, cycles)`` pairs (``size_trade`` with this weight)."""
        return size_trade(figures, self.size_memory_weight, free_bytes=free_bytes)


def size_trade(figures: Sequence[tuple[int, int]], memory_weight: float = SIZE_MEMORY_WEIGHT, *,
               free_bytes: int = 0) -> int:
    """Index of Size's choice among ``(peak bytes, cycles)`` pairs: the least peak unless more
    memory buys disproportionate speed, i.e. the least ``cycles / C + memory_weight * (peak / P - 1)``
    where ``P`` is the least peak and ``C`` the fewest cycles at it (as ``cascade_split.plan_cascades``).
    Peaks up to ``free_bytes`` count as the least (``P`` is at least that; on a cache it is
    ``fast_storage.size_cascades``' limit, the least peak itself being 0)."""
    least = max(min(p for p, _ in figures), free_bytes, 1)
    fewest = max(min(c for p, c in figures if p <= least), 1)

    def score(i: int) -> tuple[float, int, int]:
        peak, cycles = figures[i]
        return cycles / fewest + memory_weight * (max(peak, least) / least - 1), peak, cycles

    return min(range(len(figures)), key=score)


def check_fits(net: Network, dec: Decisions, limit_bytes: int) -> None:
    """Raise ``InfeasiblePlan`` naming the op at the peak, what it needs, and why, when ``dec``'s
    live bytes of fast storage pass ``limit_bytes``."""
    usage = usage_by_time(net, fast_buffers(net, dec))
    if not usage or max(usage) <= limit_bytes:
        return
    t = max(range(len(usage)), key=usage.__getitem__)
    op_name, why = _blame(net, dec, t)
    raise InfeasiblePlan(
        op=op_name, needed_bytes=usage[t], budget_bytes=limit_bytes, why=why,
        hint=f"raise --arena-cache-size to at least {usage[t]} bytes, or use a memory mode "
             "with the arena off-chip (Dedicated_Sram)",
    )


def _blame(net: Network, dec: Decisions, t: int) -> tuple[str, str]:
    name = f"time step {t}"
    for i, when in enumerate(net.times):
        if when == t:
            name = net.npu_ops[i].name
    live = [b for b in fast_buffers(net, dec) if b.start <= t <= b.end]
    whole = [b for b in live if b.kind == "fm" and net.fms[b.name].whole_reason]
    if whole:
        big = max(whole, key=lambda b: b.size_bytes)
        return name, f"{net.fms[big.name].whole_reason}: '{big.name}' is {big.size_bytes} bytes"
    big = max(live, key=lambda b: b.size_bytes)
    return name, f"smallest stripes leave '{big.name}' at {big.size_bytes} bytes ({len(live)} buffers live)"
