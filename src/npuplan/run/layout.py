"""A compiled TFLite file's memory as TensorFlow Lite Micro lays it out, and its operators as steps.

Tensors the ``OfflineMemoryAllocation`` plan places (offset >= 0) are bytes of one arena at that
offset; the scratch tensor (each ethos-u operator's input 2) sits at 0 and spans the NPU's scratch
area. Every other tensor has bytes of its own: constants (read-only), a fast scratch tensor other
than the scratch tensor (the platform's own fast memory, as the TensorFlow Lite Micro ethos-u kernel
gives the driver), and tensors the runtime would place itself. The file's structure is read by
``regstream.tflite_file`` (the reader ``npuplan validate`` uses) and ``io.tflite``.

A file exported with dynamic dimensions declares some CPU operators' outputs at placeholder shapes
(a RESHAPE whose target SHAPE -> STRIDED_SLICE -> PACK compute at run time, declared [1, 1, 8] for
[1, 256, 8]); TensorFlow Lite computes their shapes when it allocates the tensors. The layout gives
each such tensor the shape computed from its inputs (``lowering.dynamic_shapes``, the pass that
plans them) where that shape agrees with the file's shape signature (-1 where the size is free);
a tensor whose computed bytes exceed what the offline plan gave it (Vela plans such tensors at
their declared size) gets bytes of its own. TensorFlow Lite Micro does not resize them (its
RESHAPE reads a computed target at prepare time, before it is computed): these files, and the
models they were compiled from, run in TensorFlow Lite, not in TensorFlow Lite Micro.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from npuplan.errors import ModelError
from npuplan.io.tflite import parse_tflite
from npuplan.ir.graph import Graph, Tensor
from npuplan.ir.types import DataType
from npuplan.lowering._util import replace_tensor
from npuplan.lowering.dynamic_shapes import resolve_dynamic_shapes
from npuplan.records import record
from npuplan.regstream.tflite_file import flatbuffer_model, is_ethos_u, offline_offsets, tensor_bytes
from npuplan.run.variables import VARIABLE_OPS

NUMPY_DTYPES: dict[DataType, Any] = {
    DataType.INT8: np.int8, DataType.UINT8: np.uint8, DataType.INT16: np.int16, DataType.INT32: np.int32,
    DataType.INT64: np.int64, DataType.FLOAT16: np.float16, DataType.FLOAT32: np.float32, DataType.BOOL: np.bool_,
}


@record
class TensorSlot:
    """Where one tensor's bytes live: ``arena_offset`` in the arena (None: bytes of its own),
    ``size_bytes`` its declared size, ``constant`` the file's data for a constant."""

    index: int
    size_bytes: int
    arena_offset: int | None
    constant: bytes | None = None


@record
class NpuStep:
    """One ethos-u operator: its driver payload and the tensor each region is (region -> tensor)."""

    operator: int
    payload: bytes
    regions: tuple[tuple[int, int], ...]


@record
class CpuStep:
    """A maximal run of consecutive CPU operators (file operator indices ``first`` .. ``last``)."""

    first: int
    last: int


@record
class VariableStep:
    """One operator on a resource variable (``run.variables``), which the runner performs itself."""

    operator: int


Step = NpuStep | CpuStep | VariableStep


@record(slots=False)
class FileLayout:
    """A compiled file read for running: the IR graph (the first subgraph, the one that runs), the
    file's tensor index of each IR tensor, each used tensor's slot, the arena's size in bytes and
    the steps in the subgraph's order; ``others`` the file's further subgraphs (a CPU operator's
    bodies, e.g. CALL_ONCE's initialisation), kept at their indices for the CPU models."""

    graph: Graph
    index_of: dict[int, int]  # id(ir tensor) -> the file's tensor index
    tensors: dict[int, Tensor]  # the file's tensor index -> ir tensor
    slots: dict[int, TensorSlot]
    arena_bytes: int
    steps: tuple[Step, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    others: tuple[Graph, ...] = ()


def read_layout(data: bytes, *, label: str = "the file") -> FileLayout:
    """The layout of compiled TFLite bytes; ``ModelError`` (one line) for a file this runner cannot
    lay out (corrupt, an ethos-u operator without its four leading inputs)."""
    model_ir = parse_tflite(data, label=label)
    fb = flatbuffer_model(data)
    sg = fb.Subgraphs(0)
    offsets = offline_offsets(fb)
    graph = _computed_shapes(model_ir.main)
    index_of = _index_map(sg, graph)
    npu_ops = [k for k in range(sg.OperatorsLength()) if is_ethos_u(fb, sg.Operators(k))]
    own = _own_memory(sg, npu_ops)
    slots: dict[int, TensorSlot] = {}
    for t in graph.tensors():
        i = index_of[id(t)]
        ft = sg.Tensors(i)
        constant = bytes(fb.Buffers(ft.Buffer()).DataAsNumpy()) if fb.Buffers(ft.Buffer()).DataLength() else None
        offset = offsets[i] if i < len(offsets) and offsets[i] >= 0 and constant is None and i not in own else None
        size = len(constant) if constant is not None else max(t.size_bytes, tensor_bytes(ft))
        if offset is not None and size > tensor_bytes(ft):
            offset = None  # a computed shape larger than the plan's bytes for it
        slots[i] = TensorSlot(i, size, offset, constant)
    arena = max((s.arena_offset + s.size_bytes for s in slots.values() if s.arena_offset is not None), default=0)
    steps = _steps(fb, sg, npu_ops, graph, label)
    tensors = {index_of[id(t)]: t for t in graph.tensors()}
    return FileLayout(graph, index_of, tensors, slots, arena, steps,
                      tuple(int(i) for i in sg.InputsAsNumpy()), tuple(int(i) for i in sg.OutputsAsNumpy()),
                      model_ir.subgraphs[1:])


def _fits(shape: tuple[int, ...], signature: tuple[int, ...] | None) -> bool:
    """Whether ``shape`` agrees with a shape signature (-1: any size)."""
    return signature is not None and len(shape) == len(signature) and all(
        s in (-1, d) for s, d in zip(signature, shape))


def _computed_shapes(graph: Graph) -> Graph:
    """``graph`` with each placeholder shape computed from its operator's inputs where the computed
    shape agrees with the tensor's signature (the rest keep their declared shapes)."""
    resolved, changed = resolve_dynamic_shapes(graph)
    if not changed:
        return graph
    for before, after in zip(graph.tensors(), resolved.tensors()):
        if after.shape != before.shape and not _fits(after.shape, before.signature):
            resolved = replace_tensor(resolved, after, before)
    return resolved


def _index_map(sg: Any, graph: Graph) -> dict[int, int]:
    """id(IR tensor) -> file tensor index, pairing the reader's operators with the file's."""
    found: dict[int, int] = {}

    def pair(ir: tuple[Tensor | None, ...], indices: Any) -> None:
        kept = [int(i) for i in indices if int(i) >= 0]
        for t, i in zip((t for t in ir if t is not None), kept):
            found.setdefault(id(t), i)

    pair(graph.inputs, sg.InputsAsNumpy() if sg.InputsLength() else [])
    pair(graph.outputs, sg.OutputsAsNumpy() if sg.OutputsLength() else [])
    for k, op in enumerate(graph.ops):
        fb_op = sg.Operators(k)
        pair(op.inputs, fb_op.InputsAsNumpy() if fb_op.InputsLength() else [])
        pair(op.outputs, fb_op.OutputsAsNumpy() if fb_op.OutputsLength() else [])
        pair(op.intermediates, fb_op.IntermediatesAsNumpy() if fb_op.IntermediatesLength() else [])
    return found


def _own_memory(sg: Any, npu_ops: list[int]) -> set[int]:
    """Fast scratch tensors that are not the scratch tensor: the platform's own fast memory."""
    own = set()
    for k in npu_ops:
        inputs = [int(i) for i in sg.Operators(k).InputsAsNumpy()]
        if len(inputs) >= 4 and inputs[3] != inputs[2]:
            own.add(inputs[3])
    return own


def _steps(fb: Any, sg: Any, npu_ops: list[int], graph: Graph, label: str) -> tuple[Step, ...]:
    steps: list[Step] = []
    npu = set(npu_ops)
    for k in range(sg.OperatorsLength()):
        op = sg.Operators(k)
        if graph.ops[k].type in VARIABLE_OPS:
            steps.append(VariableStep(k))
            continue
        if k not in npu:
            last = steps[-1] if steps else None
            if isinstance(last, CpuStep) and last.last == k - 1:
                steps[-1] = CpuStep(last.first, k)
            else:
                steps.append(CpuStep(k, k))
            continue
        inputs = [int(i) for i in op.InputsAsNumpy()]
        outputs = [int(i) for i in op.OutputsAsNumpy()] if op.OutputsLength() else []
        if len(inputs) < 4 or min(inputs) < 0:
            raise ModelError(f"{label}: ethos-u operator {k} needs [command stream, flash, scratch, fast scratch, "
                             f"...] inputs, it has {len(inputs)}")
        stream = sg.Tensors(inputs[0])
        payload = bytes(fb.Buffers(stream.Buffer()).DataAsNumpy()) if fb.Buffers(stream.Buffer()).DataLength() else b""
        regions = tuple(enumerate(inputs[1:] + outputs))
        steps.append(NpuStep(k, payload, regions))
    return tuple(steps)
