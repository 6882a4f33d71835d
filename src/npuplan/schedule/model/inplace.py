"""Pointwise ops (``NpuOp.pointwise``: elementwise ops, and pools that copy element for element)
that write their OFM over one of their inputs (one buffer for both).

A pointwise op reads each element before it writes the same element, so its OFM may take the
buffer of an input that dies at that op, as Vela does for its live ranges (Vela 5.2's default core
runs a RELU lowered to a 1x1 pool in place too). The command stream marks such an op's stripes so
(``NpuStripeCommand.elementwise``) and the validator accepts the shared bytes at those stripes
only. The input must be a
feature map of the same NPU shape, storage format and element type, whose bytes hold the elements
in the OFM's order (``same_element_order``: its own shape may differ, a reshape removed), read last
by this op (other NPU ops may read it before: a squeeze-and-excitation block's map, pooled by its
branch, then scaled in place, as Vela 5.2's default core does; none after), not a network input
nor shared with a CPU op, read where it lies and only so by this op (not a box of it read at an
offset, though the other input may be another map read so); both must be whole (not rolling) in
fast storage and the op must not be in a cascade (an earlier reader in a cascade ends before it). The peak then counts the pair once instead of twice at the op's time step.

One group of maps sharing a buffer (a chain: each map is overwritten by its last reader only) holds
at most one pair over a map with other readers. Without that bound a residual network (an ADD
over its block input, a RELU over the ADD, the next ADD over that) chains into one group from end
to end, and every search that redoes the buffers of a span (``usage.inplace_group``) re-buckets
the whole group per span: quadratic planning. The single-reader pairs chained as before. A call
for some ``ops`` only (a span redone) takes no multi-reader pair: it cannot see the groups
outside them, and leaving a pair out only overstates the peak.
"""

from __future__ import annotations

from collections.abc import Iterable

from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import NpuOp
from npuplan.ir.shape import Shape4D, same_element_order
from npuplan.schedule.model.decisions import Decisions
from npuplan.schedule.model.network import Network


def inplace_outputs(net: Network, dec: Decisions, ops: Iterable[int] | None = None) -> dict[str, str]:
    """OFM name -> name of the input feature map whose fast-storage buffer it overwrites, for the
    NPU ops at indices ``ops`` (ascending; default all of them)."""
    if not dec.fast_fms:  # both must be in fast storage
        return {}
    fast, rolling = dec.fast_fms, dec.rolling_fms
    candidates = net.derived(_candidates)
    found: dict[str, str] = {}
    root: dict[str, str] = {}  # map -> the first map of its in-place group (so far)
    multi_roots: set[str] = set()  # groups holding a pair over a map with other readers
    chosen = candidates.values() if ops is None else (candidates[i] for i in ops if i in candidates)
    for i, ofm, inputs in chosen:
        if ofm not in fast or ofm in rolling or ofm in found or dec.cascade_of(i) is not None:
            continue
        for name, many in inputs:
            if name in rolling or name not in fast:
                continue
            group = root.get(name, name)
            if many and (ops is not None or group in multi_roots):
                continue  # one multi-reader pair per group (module docstring)
            found[ofm] = name
            root[ofm] = group
            if many:
                multi_roots.add(group)
            break
    return found


_Candidate = tuple[int, str, tuple[tuple[str, bool], ...]]


def _candidates(net: Network) -> dict[int, _Candidate]:
    """Per NPU op that may overwrite an input whatever the decisions: its index, OFM name and the
    inputs it may overwrite (name, whether other ops read it too), in operand order; what is left
    to ask is where the decisions put the maps and whether the op is in a cascade."""
    found: dict[int, _Candidate] = {}
    for i, op in enumerate(net.npu_ops):
        if not _may_overwrite(op):
            continue
        inputs = tuple((tensor.name, len(net.fms[tensor.name].consumers) > 1)  # type: ignore[union-attr]
                       for tensor, shape, offset in ((op.ifm, op.ifm_shape, op.ifm_read_offset),
                                                     (op.ifm2, op.ifm2_shape, op.ifm2_read_offset))
                       if offset is None and _overwritable(net, op, i, tensor, shape))
        if inputs:
            found[i] = (i, op.ofm.name, inputs)
    return found


def _may_overwrite(op: NpuOp) -> bool:
    return op.pointwise and op.ofm_write_offset is None


def _overwritable(net: Network, op: NpuOp, index: int, tensor: Tensor | None, shape: Shape4D | None) -> bool:
    """Whether ``op`` may overwrite ``tensor`` when both are whole in fast storage."""
    if tensor is None or shape is None or tensor.is_constant:
        return False
    fm, out = net.fms.get(tensor.name), net.fms.get(op.ofm.name)
    if fm is None or out is None or fm.whole_reason:
        return False
    return (
        shape == op.ofm_shape
        and same_element_order(tensor.shape4d, op.ofm.shape4d)  # reshaped views: the bytes must line up
        and fm.last_reader == index  # every other reader runs before this op
        and _read_once(op, tensor)
        and fm.format == out.format
        and tensor.dtype == op.ofm.dtype
        and fm.size_bytes == out.size_bytes
    )


def _read_once(op: NpuOp, tensor: Tensor) -> bool:
    """Whether ``op`` reads ``tensor`` as one operand, or as both at the same place and shape (an
    operand reading it elsewhere would see elements the OFM has already overwritten)."""
    if op.ifm2 is None or op.ifm.name != op.ifm2.name:
        return True
    return op.ifm_read_offset == op.ifm2_read_offset and op.ifm_shape == op.ifm2_shape
