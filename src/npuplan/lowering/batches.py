"""Run the batch elements of a 4-D operator with a batch above 1 as NPU operations of batch 1.

The NPU has no batch axis: Vela's default core runs each batch element as its own operation (the
feature maps' batch offsets in its base addresses). Here a batched operator's input (``N x H x W x C``)
is seen as ``N * H`` rows (a RESHAPE: the same bytes), and

- where no kernel window crosses from one batch element's rows into the next (a kernel one row
  high at vertical stride 1, an elementwise operator of operands of one shape, an activation, a
  BATCH_MATMUL, whose batch elements' heads are then its heads), the operator runs once on the rows;
- else (a convolution or pool of a taller kernel or stride) the rows are split into the batch
  elements (a SPLIT along the rows), the operator runs on each, and their outputs are concatenated
  along the rows (a CONCATENATION), which the NPU reads and writes in place or copies.

The result is seen in its declared shape again (a RESHAPE). Reshapes that meet cancel out
(``reshapes.drop_noop_reshapes``). An operator whose batch-1 form the NPU does not run is left as
it is (for the CPU).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
from npuplan.ir.types import DataType
from npuplan.lowering.support import ACTIVATION_TYPES, BINARY_ELEMENTWISE, CONV_TYPES, POOL_TYPES, \
    unsupported_reason

_ROWWISE = frozenset(BINARY_ELEMENTWISE) | ACTIVATION_TYPES | {"QUANTIZE", "ABS"}


def _batch(op: Op) -> int:
    """The batch of ``op``'s 4-D feature maps when it is above 1 and they all have it, else 1."""
    fms = [t for t in (*op.inputs[:1], *op.outputs) if t is not None]
    if op.type == "MEAN" and fms and len(fms[0].shape) == 4 and len(op.outputs[0].shape) in (2, 4):
        return int(fms[0].shape[0]) if op.outputs[0].shape[0] == fms[0].shape[0] else 1
    if op.type in BINARY_ELEMENTWISE or op.type == "BATCH_MATMUL":
        fms = [t for t in (*op.inputs, *op.outputs) if t is not None and not t.is_constant]
    if not fms or any(len(t.shape) != 4 for t in fms) or len({t.shape[0] for t in fms}) != 1:
        return 1
    return int(fms[0].shape[0])


def _rows_independent(op: Op) -> bool:
    """Whether ``op`` on the batch elements' rows stacked computes each element's rows from its own
    rows only (one operation on the stacked rows)."""
    if op.type == "BATCH_MATMUL":  # batched over its leading axes: each batch's heads as rows
        return True
    if op.type in _ROWWISE:
        shapes = {tuple(t.shape) for t in (*op.inputs, *op.outputs) if t is not None and not t.is_constant}
        constants = [t for t in op.inputs if t is not None and t.is_constant]
        return len(shapes) == 1 and all(t.elements == 1 for t in constants)
    if op.type in CONV_TYPES:
        weights = op.inputs[1]
        kernel_height = 1 if weights is None else int(weights.shape[1])
        return kernel_height == 1 and int(op.options.get("stride_h", 1)) == 1
    if op.type in POOL_TYPES:
        return int(op.options.get("filter_height", 1)) == 1 and int(op.options.get("stride_h", 1)) == 1
    return False


def _rows(t: Tensor, name: str) -> Tensor:
    """``t`` (``N x H x W x C``) seen as ``1 x N*H x W x C``."""
    n, h, w, c = t.shape
    return replace(t, name=name, shape=(1, n * h, w, c), data=None, signature=None)


def int32_constant(name: str, values: list[int]) -> Tensor:
    """A 1-D int32 constant without quantization (a shape, an axis, a slice's begin)."""
    data = np.array(values, dtype=np.int32)
    data.flags.writeable = False
    return Tensor(name, (len(values),), DataType.INT32, None, data)


def reshape_view(src: Tensor, out: Tensor, index: int) -> Op:
    """A RESHAPE of ``src`` to ``out`` (the same bytes seen in ``out``'s shape), at TFLite index ``index``."""
    return Op("RESHAPE", (src, int32_constant(f"{out.name}_shape", list(out.shape))), (out,),
              frozen_options({"new_shape": list(out.shape)}), index)


def _element(t: Tensor, k: int) -> Tensor:
    """Batch element ``k`` of ``t`` (``1 x H x W x C``)."""
    return replace(t, name=f"{t.name}_batch{k}", shape=(1, *t.shape[1:]), data=None, signature=None)


def _batched_ops(op: Op, n: int) -> list[Op] | None:
    """The operators running ``op`` on its batch elements' rows (None: the NPU does not run them)."""
    fms = {i: t for i, t in enumerate(op.inputs) if t is not None and not t.is_constant}
    fm_inputs = list(fms)
    out = op.outputs[0]
    out_rows = _rows(out, f"{out.name}_rows")
    views = [reshape_view(t, _rows(t, f"{t.name}_rows"), op.index) for t in fms.values()]
    rows_of = {i: v.outputs[0] for i, v in zip(fm_inputs, views)}
    if _rows_independent(op):
        inputs = tuple(rows_of.get(i, t) for i, t in enumerate(op.inputs))
        once = Op(op.type, inputs, (out_rows,), op.options, op.index)
        return None if unsupported_reason(once) is not None else [*views, once, reshape_view(out_rows, out, op.index)]
    if op.type not in CONV_TYPES | POOL_TYPES or fm_inputs != [0]:
        return None
    return _per_element(op, n, views[0], (1, *out.shape[1:]), out_rows, 1)


def _per_element(op: Op, n: int, view: Op, shape: tuple[int, ...], stacked: Tensor, axis: int,
                 options: dict[str, object] | None = None) -> list[Op] | None:
    """``op`` on each batch element of the rows ``view`` writes (SPLIT), each result of ``shape``,
    concatenated along ``axis`` into ``stacked``, seen as ``op``'s output (None: the NPU does not
    run the element's operator)."""
    src, out = view.outputs[0], op.outputs[0]
    parts = tuple(_element(view.inputs[0], k) for k in range(n))  # type: ignore[arg-type]
    split = Op("SPLIT", (int32_constant(f"{src.name}_axis", [1]), src), parts, frozen_options({"num_splits": n}), op.index)
    results = tuple(replace(out, name=f"{out.name}_batch{k}", shape=shape, signature=None) for k in range(n))
    kept = frozen_options({**op.options, **(options or {})})
    each = [Op(op.type, (part, *op.inputs[1:]), (result,), kept, op.index) for part, result in zip(parts, results)]
    if unsupported_reason(each[0]) is not None:
        return None
    concat = Op("CONCATENATION", results, (stacked,), frozen_options({"axis": axis, "fused_activation_function": "NONE"}),
                op.index)
    return [view, split, *each, concat, reshape_view(stacked, out, op.index)]


def _mean_ops(op: Op, n: int) -> list[Op] | None:
    """A MEAN over the rows and columns of a batched map: per element, the means (``1 x 1 x 1 x C``)
    side by side in one row (``1 x 1 x N x C``: the output's bytes)."""
    src, axes, out = op.inputs[0], op.inputs[1], op.outputs[0]
    if src is None or axes is None or axes.data is None or sorted(int(a) % 4 for a in axes.data.reshape(-1)) != [1, 2]:
        return None
    depth = int(src.shape[3])
    stacked = replace(out, name=f"{out.name}_row", shape=(1, 1, n, depth), signature=None)
    return _per_element(op, n, reshape_view(src, _rows(src, f"{src.name}_rows"), op.index), (1, 1, 1, depth), stacked, 2,
                        {"keep_dims": True})


def split_batches(graph: Graph) -> tuple[Graph, bool]:
    """Each 4-D operator of a batch above 1 that the NPU runs per batch element, as such (see the
    module's docstring), and whether there was any."""
    ops: list[Op] = []
    changed = False
    for op in graph.ops:
        n = _batch(op)
        batched = None if n == 1 or not op.outputs else _mean_ops(op, n) if op.type == "MEAN" else _batched_ops(op, n)
        ops.extend(batched if batched is not None else (op,))
        changed = changed or batched is not None
    return (replace(graph, ops=tuple(ops)), True) if changed else (graph, False)
