"""OFM block configs the hardware accepts, checked for each operation: the plan's, as priced.

The planner's block config (``hw.block_config``, chosen for the stripe it computes) is emitted
when the hardware's rules accept it for the op's whole shapes (``hw.block_config.try_block_config``:
micro-block multiples no larger than the largest block, IFM and accumulators fitting the shared
buffer). That includes the 1-high blocks of a 1-row stripe on the Ethos-U55-128 (a 1x2 micro-block),
which the backend's ``npu_find_block_configs`` never lists (its listing starts at 2 x 2). Otherwise
the emitted stream uses one of the configs that listing gives, the one of the same depth nearest to
the plan's (the weights are encoded for that depth), and the note counts those ops.
"""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType
from typing import Any

from npuplan.emit.operations import probe_ofm_view, probe_operation, scalar_ifm2
from npuplan.hw.accelerator import Accelerator
from npuplan.hw.accelerator import Block as HwBlock
from npuplan.hw.block_config import query_for, try_block_config
from npuplan.emit.vela import quietly
from npuplan.errors import EmitError
from npuplan.ir.lowered import NpuOp

Block = tuple[int, int, int]  # OFM block height, width, depth


def nearest_valid(planned: Block, valid: list[Block]) -> Block:
    """``planned`` if valid, else the valid block of the same depth (or the nearest depth) whose
    height and width are closest to it; on ties one covering it (the plan's block rounded up to the
    microblock, the block Vela clamps to the OFM in its reports), then the larger."""
    if planned in valid:
        return planned
    depth = min({b[2] for b in valid}, key=lambda d: (abs(d - planned[2]), -d))
    same = [b for b in valid if b[2] == depth]
    def distance(b: Block) -> tuple[int, int, int]:
        covers = b[0] >= planned[0] and b[1] >= planned[1]  # the plan's block rounded up to microblocks
        return abs(b[0] - planned[0]) + abs(b[1] - planned[1]), 0 if covers else 1, -b[0] * b[1]

    return min(same, key=distance)


def probe_key(op: NpuOp, part_kernel_first: bool) -> tuple[object, ...]:
    """Everything ``npu_find_block_configs`` reads of an op (ops alike share their valid blocks)."""
    def fm(tensor: Any, view: Any) -> object:
        return None if tensor is None else (view, tensor.dtype, tensor.quant is None)
    return (op.block_type, op.pool, op.elementwise, fm(op.ifm, op.ifm_shape), fm(op.ifm2, op.ifm2_shape),
            fm(op.ofm, probe_ofm_view(op)), op.kernel, op.activation, op.resampling, part_kernel_first)


def hardware_accepts(op: NpuOp, block: Block, accel: Accelerator, *, part_kernel_first: bool) -> bool:
    """Whether ``block`` is a valid OFM block for all of ``op`` on ``accel`` by the hardware's rules."""
    # the shared buffer as the emitted operation uses it: a scalar IFM2 only where emitted so
    query = replace(query_for(op, ofm_box=probe_ofm_view(op)), uses_scalar=scalar_ifm2(op) is not None)
    return try_block_config(query, accel, HwBlock(*block), is_partkernel=part_kernel_first) is not None


def resolve_block(api: ModuleType, accelerator: Any, op: NpuOp, planned: Block, *, part_kernel_first: bool,
                  memo: dict[tuple[object, ...], list[Block]] | None = None,
                  hardware: Accelerator | None = None) -> Block:
    """The block config the emitted stream uses for ``op``: ``planned`` when ``hardware`` (the
    plan's accelerator) accepts it, else the backend's nearest; ``memo`` keeps the valid blocks of
    the ops seen (``probe_key``): enumerating them is most of the API's cost."""
    if hardware is not None and hardware_accepts(op, planned, hardware, part_kernel_first=part_kernel_first):
        return planned
    memo = {} if memo is None else memo
    key = probe_key(op, part_kernel_first)
    if key not in memo:
        probe = probe_operation(api, op, part_kernel_first=part_kernel_first)
        try:
            found = quietly(api.npu_find_block_configs, probe, accelerator)
        except AssertionError:  # Vela's API asserts where no block fits; npuplan's lists none
            found = []
        memo[key] = [(int(b.height), int(b.width), int(b.depth)) for b in found]
    if not memo[key]:
        raise EmitError(op.name, "no OFM block config fits the shared buffer for it", cpu_fallback=op.source_index)
    return nearest_valid(planned, memo[key])
