"""Staging: copy an arena feature map whole into fast storage by DMA just before its one reader.

When the arena is off-chip (Dedicated_Sram), an op reading a feature map from DRAM with short
bursts (a network input with 3 channels, NHWC) can be bound by DRAM access; one DMA of the whole
tensor (long bursts) into free cache, then reading it from SRAM, can be much faster. Candidates are
IFMs in the arena with exactly one reader, not cascaded and not already in fast storage; each is
kept only if its reader gets faster (the DMA wait included) and the copy fits in ``budget``
bytes at that time step. Proposals are scored alone, taken best first.
"""

from __future__ import annotations

from dataclasses import replace

from npuplan.hw.memory import Architecture
from npuplan.schedule.pricing.costing import cost_op
from npuplan.schedule.model.decisions import Decisions
from npuplan.schedule.model.network import FeatureMap, Network
from npuplan.schedule.pricing.oracle import CostOracle
from npuplan.units import ALIGN_BYTES, round_up
from npuplan.schedule.model.usage import fast_buffers, usage_by_time


def staging_candidates(net: Network, dec: Decisions, arch: Architecture) -> list[tuple[FeatureMap, int]]:
    """``(feature map, reader index)`` pairs that could be staged."""
    if arch.arena_area == arch.fast_area:
        return []
    rolling = {r.tensor_name for c in dec.cascades for r in c.rolling}
    found = []
    for i, op in enumerate(net.npu_ops):
        fm = net.fms.get(op.ifm.name)
        if (fm is None or fm.consumers != (i,) or fm.name in dec.fast_fms or fm.name in rolling
                or dec.cascade_of(i) is not None or op.ifm_read_offset is not None):
            continue
        found.append((fm, i))
    return found


def stage_inputs(net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit_bytes: int) -> Decisions:
    """``dec`` with the arena feature maps worth staging added to ``staged_fms`` (within ``limit_bytes``)."""
    scored = []
    for fm, i in staging_candidates(net, dec, arch):
        trial = replace(dec, staged_fms=dec.staged_fms | {fm.name})
        saved = cost_op(net, dec, arch, oracle, i).cycles - cost_op(net, trial, arch, oracle, i).cycles
        if saved > 0:
            scored.append((saved, fm.name, net.times[i], round_up(fm.size_bytes, ALIGN_BYTES)))
    if not scored:  # usually: the buffers live over time need not be gathered
        return dec
    usage = usage_by_time(net, fast_buffers(net, dec))
    staged = set(dec.staged_fms)
    for _, name, t, size in sorted(scored, reverse=True):
        if usage[t] + size <= limit_bytes:
            usage[t] += size
            staged.add(name)
    return replace(dec, staged_fms=frozenset(staged))


def staged_bases(
    net: Network, base: Decisions, arch: Architecture, oracle: CostOracle,
) -> dict[int, tuple[Decisions, int]]:
    """Per op whose IFM the Pareto search's ``choose`` may stage (``stage_inputs``: an arena
    feature map with that one reader, the op not cascaded) and which reads it faster so: ``base``
    with that IFM staged, and the bytes the staged copy holds at the op's time step. The Pareto
    search offers each such op staged too, so that its metric sees what leaving the op out of a
    cascade buys it."""
    found: dict[int, tuple[Decisions, int]] = {}
    for fm, i in staging_candidates(net, base, arch):
        trial = replace(base, staged_fms=base.staged_fms | {fm.name})
        if cost_op(net, trial, arch, oracle, i).cycles < cost_op(net, base, arch, oracle, i).cycles:
            found[i] = trial, round_up(fm.size_bytes, ALIGN_BYTES)
    return found
