"""OFM block configs the hardware accepts, checked against the emitting backend for each operation.

The planner's block config is a cost-model choice (it may clamp a block to a stripe's height).
The emitted stream must use one of the configs the backend's ``npu_find_block_configs`` lists for the op's whole
shapes (each dimension a multiple of the microblock, clamped to the OFM, fitting the shared
buffer); when the plan's is not among them, the valid config of the same depth nearest to it is
used instead (the weights are encoded for that depth), and the note counts those ops.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from npuplan.emit.operations import probe_ofm_view, probe_operation
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


def resolve_block(api: ModuleType, accelerator: Any, op: NpuOp, planned: Block, *, part_kernel_first: bool,
                  memo: dict[tuple[object, ...], list[Block]] | None = None) -> Block:
    """The block config the emitted stream uses for ``op``; ``memo`` keeps the valid blocks of the
    ops seen (``probe_key``): enumerating them is most of the API's cost."""
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
