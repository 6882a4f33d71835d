"""Staging: copy an arena feature map whole into fast storage by DMA just before its first reader.

When the arena is off-chip (Dedicated_Sram), an op reading a feature map from DRAM with short
bursts (a network input with 3 channels, NHWC) can be bound by DRAM access; one DMA of the whole
tensor (long bursts) into free cache, then reading it from SRAM, can be much faster. Candidates are
arena IFMs whose NPU readers all read them (whole, or a box at an offset: rows of patches) as their
first operand, none cascaded, and not already in fast storage; the copy lives from the first reader to the last (a TCN's input read by
its first convolution and by the residual branch's 1x1: tcn_residual_800 reads it from DRAM
twice otherwise). Each is kept only if its readers get faster together (the first waits for the
DMA) and the copy fits in ``limit_bytes`` over their time steps. Proposals are scored alone,
taken best first. The Pareto search offers staging per op (``staged_bases``): maps of one reader.
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


def _stageable(net: Network, dec: Decisions, fm: FeatureMap, rolling: set[str]) -> bool:
    """Whether every NPU reader of ``fm`` could read a staged copy of it (see module docstring)."""
    if not fm.consumers or fm.name in dec.fast_fms or fm.name in rolling:
        return False
    for k in fm.consumers:
        op = net.npu_ops[k]
        if (op.ifm.name != fm.name or (op.ifm2 is not None and op.ifm2.name == fm.name)
                or dec.cascade_of(k) is not None or op.ifm_step is not None):
            return False
    return True


def staging_candidates(net: Network, dec: Decisions, arch: Architecture) -> list[tuple[FeatureMap, tuple[int, ...]]]:
    """``(feature map, its reader indices)`` pairs that could be staged."""
    if arch.arena_area == arch.fast_area:
        return []
    rolling = {r.tensor_name for c in dec.cascades for r in c.rolling}
    return [(fm, fm.consumers) for fm in net.fms.values() if _stageable(net, dec, fm, rolling)]


def stage_inputs(net: Network, dec: Decisions, arch: Architecture, oracle: CostOracle, limit_bytes: int) -> Decisions:
    """``dec`` with the arena feature maps worth staging added to ``staged_fms`` (within ``limit_bytes``)."""
    scored = []
    for fm, readers in staging_candidates(net, dec, arch):
        trial = replace(dec, staged_fms=dec.staged_fms | {fm.name})
        saved = sum(cost_op(net, dec, arch, oracle, i).cycles - cost_op(net, trial, arch, oracle, i).cycles
                    for i in readers)
        if saved > 0:
            times = [net.times[i] for i in readers]
            span = range(min(times), max(times) + 1)
            scored.append((saved, fm.name, span, round_up(fm.size_bytes, ALIGN_BYTES)))
    if not scored:  # usually: the buffers live over time need not be gathered
        return dec
    usage = usage_by_time(net, fast_buffers(net, dec))
    staged = set(dec.staged_fms)
    for _, name, span, size in sorted(scored, key=lambda s: (s[0], s[1]), reverse=True):
        if all(usage[t] + size <= limit_bytes for t in span):
            for t in span:
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
    for fm, readers in staging_candidates(net, base, arch):
        if len(readers) != 1:
            continue
        i = readers[0]
        trial = replace(base, staged_fms=base.staged_fms | {fm.name})
        if cost_op(net, trial, arch, oracle, i).cycles < cost_op(net, base, arch, oracle, i).cycles:
            found[i] = trial, round_up(fm.size_bytes, ALIGN_BYTES)
    return found
