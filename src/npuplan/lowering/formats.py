"""Which feature maps must stay in linear NHWC format between NPU ops (Vela's format rules).

Every other feature map that only NPU ops touch is stored in the NHCWB16 brick format. A tensor
stays NHWC when: it is a network input or output or a CPU op touches it; NPU operations on both
sides of a CPU op touch it (it crosses NPU partitions, as a subgraph's input or output); an op writes it at (or
reads it from) a depth offset that is not a multiple of 16 (concat/split); an op sees it with a
different shape than its own (reshaped views) or a TRANSPOSE writes it (strides swapped); a
ReduceSum reads it as int32; or an elementwise
op whose OFM depth is not a multiple of 16 could write over an NHWC input of the same shape
(Vela keeps such OFMs linear to save memory traffic; constants count as NHWC inputs).
"""

from __future__ import annotations

from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import BlockType, CpuOp, LoweredGraph, NpuOp
from npuplan.units import BRICK_DEPTH



def _offset_unaligned(offset: object) -> bool:
    return offset is not None and getattr(offset, "c", 0) % BRICK_DEPTH != 0


def _view_mismatch(op: NpuOp, tensor: Tensor) -> bool:
    """Whether ``op`` reads or writes ``tensor`` with a shape other than the tensor's own."""
    shape = tensor.shape4d
    if op.ofm.name == tensor.name and op.ofm_write_offset is None and op.ofm_shape != shape:
        return True
    if op.ofm.name == tensor.name and op.ofm_frame is not None and op.ofm_frame != shape:
        return True  # written at offsets in a view of all of it in another shape
    if op.ifm.name == tensor.name and op.ifm_read_offset is None and op.ifm_shape != shape:
        return True
    if op.ifm.name == tensor.name and op.ifm_frame is not None and op.ifm_frame != shape:
        return True  # read at offsets in a view of all of it in another shape
    if (op.ifm2 is not None and op.ifm2.name == tensor.name and op.block_type is BlockType.ELEMENTWISE
            and op.ifm2_read_offset is None and op.ifm2_shape is not None and op.ifm2_shape != shape):
        return True
    return False


def _restricted(op: NpuOp, tensor: Tensor) -> bool:
    """Whether ``op``'s use of ``tensor`` rules the brick format out."""
    if op.ofm.name == tensor.name and _offset_unaligned(op.ofm_write_offset):
        return True
    if op.ifm.name == tensor.name and _offset_unaligned(op.ifm_read_offset):
        return True
    if op.ifm2 is not None and op.ifm2.name == tensor.name and _offset_unaligned(op.ifm2_read_offset):
        return True
    if op.ifm.name == tensor.name and op.block_type is BlockType.REDUCE_SUM and tensor.dtype.bits == 32:
        return True
    if op.ofm.name == tensor.name and op.writes_transposed:
        return True
    if (op.ofm.name == tensor.name and op.ofm_step is not None) or (op.ifm.name == tensor.name and op.ifm_step is not None):
        return True  # a strided view: strides of whole elements, NHWC only  # written NHWC with its height and width strides swapped, even when its view is square
    return _view_mismatch(op, tensor)


def _keeps_elementwise_ofm_linear(op: NpuOp, linear: set[str]) -> bool:
    """An elementwise OFM of unaligned depth that could overwrite a same-shaped NHWC input."""
    if op.block_type is not BlockType.ELEMENTWISE or op.ofm_shape.c % BRICK_DEPTH == 0:
        return False
    inputs = [(op.ifm, op.ifm_shape), (op.ifm2, op.ifm2_shape)]
    for tensor, shape in inputs:
        if tensor is None or shape != op.ofm_shape or not tensor.shape:
            continue
        if tensor.dtype == op.ofm.dtype and (tensor.is_constant or tensor.name in linear):
            return True
    return False


def _crossing_partitions(graph: LoweredGraph) -> set[str]:
    """Feature maps NPU operations of two NPU partitions (runs of NPU ops between CPU ops) touch:
    one partition's output and a later one's input, which Vela keeps NHWC (a subgraph's inputs
    and outputs are linear) and a deployable file declares as a plain tensor."""
    partition = 0
    seen: dict[str, int] = {}
    crossing: set[str] = set()
    for op in graph.ops:
        if isinstance(op, CpuOp):
            partition += 1
            continue
        for tensor in (op.ifm, op.ifm2, op.ofm):
            if tensor is None or tensor.is_constant:
                continue
            if seen.setdefault(tensor.name, partition) != partition:
                crossing.add(tensor.name)
    return crossing


def linear_format_tensors(graph: LoweredGraph) -> frozenset[str]:
    """Names of the non-constant tensors that must be stored NHWC (all others may be NHCWB16)."""
    linear: set[str] = {t.name for t in graph.inputs} | {t.name for t in graph.outputs}
    for op in graph.ops:
        if isinstance(op, CpuOp):
            linear.update(t.name for t in (*op.op.inputs, *op.op.outputs) if t is not None)
    linear |= _crossing_partitions(graph)
    npu_ops = [op for op in graph.ops if isinstance(op, NpuOp)]
    for op in npu_ops:
        for tensor in (op.ifm, op.ifm2, op.ofm):
            if tensor is not None and not tensor.is_constant and _restricted(op, tensor):
                linear.add(tensor.name)
    for op in npu_ops:  # in execution order: an input's format is known before its consumer's OFM
        if op.ofm.name not in linear and _keeps_elementwise_ofm_linear(op, linear):
            linear.add(op.ofm.name)
    return frozenset(linear)


def brick_format_tensors(graph: LoweredGraph) -> frozenset[str]:
    """Names of the feature maps that must be NHCWB16 whatever the depth: the IFM of an op padded
    with its edges (``NpuOp.edge_padding``), whose tiles re-read the edge rows and columns at
    16-byte aligned addresses (Vela's TILE padding asks for bricks)."""
    return frozenset(op.ifm.name for op in graph.ops if isinstance(op, NpuOp) and op.edge_padding)
