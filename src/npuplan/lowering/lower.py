"""The lowering driver: ``lower(model, accelerator) -> LoweredGraph``.

Graph-level passes run first (each a pure ``Graph -> Graph`` function that also reports the ops it
removed), then every remaining op is either converted to NPU operations or kept for the CPU with
the reason from the support checks. Only the main (first) subgraph is lowered; later subgraphs
(called by control-flow ops) are ignored.
"""

from __future__ import annotations

import logging

from npuplan.hw.accelerator import Accelerator
from npuplan.ir.graph import Graph, Model, Op
from npuplan.ir.lowered import CpuOp, LoweredGraph, LoweredOp, NpuOp
from npuplan.lowering.activations import fuse_activations
from npuplan.lowering.convert import (
    Converter,
    convert_binary_elementwise,
    convert_conv,
    convert_depthwise,
    convert_fully_connected,
    convert_pool,
    convert_standalone_activation,
)
from npuplan.lowering.dilated_conv import fuse_dilated_convs
from npuplan.lowering.mean import convert_mean, drop_noop_means
from npuplan.lowering.memory_ops import convert_concat, convert_pad
from npuplan.lowering.operands import primary_input_first
from npuplan.lowering.order import vela_order
from npuplan.lowering.pads import fold_pads
from npuplan.lowering.reshapes import drop_noop_reshapes
from npuplan.lowering.shape_ops import fold_shape_ops
from npuplan.lowering.softmax import convert_softmax
from npuplan.lowering.support import ACTIVATION_TYPES, BINARY_ELEMENTWISE, unsupported_reason
from npuplan.lowering.views import lower_with_views

logger = logging.getLogger(__name__)

_CONVERTERS: dict[str, Converter] = {
    "CONV_2D": convert_conv,
    "DEPTHWISE_CONV_2D": convert_depthwise,
    "FULLY_CONNECTED": convert_fully_connected,
    "AVERAGE_POOL_2D": convert_pool,
    "MAX_POOL_2D": convert_pool,
    "MEAN": convert_mean,
    "SOFTMAX": convert_softmax,
    "PAD": convert_pad,
    "CONCATENATION": convert_concat,
    **{t: convert_binary_elementwise for t in BINARY_ELEMENTWISE},
    **{t: convert_standalone_activation for t in ACTIVATION_TYPES},
}


def lower_op(op: Op) -> tuple[LoweredOp, ...]:
    """The NPU operations of one TFLite op, or a ``CpuOp`` with the reason it stays on the CPU."""
    reason = unsupported_reason(op)
    if reason is None and op.type not in _CONVERTERS:
        reason = f"{op.type} is not lowered by npuplan"
    if reason is not None:
        return (CpuOp(op, reason),)
    return _CONVERTERS[op.type](op)


def rewrite_graph(graph: Graph, accelerator: Accelerator) -> tuple[Graph, tuple[tuple[str, str], ...]]:
    """Run the graph-level passes in order; return the graph and every op they removed."""
    removed: tuple[tuple[str, str], ...] = ()
    graph, gone = fold_shape_ops(graph)
    removed += gone
    graph, gone = drop_noop_reshapes(graph)
    removed += gone
    graph, gone = drop_noop_means(graph)
    removed += gone
    graph, gone = fold_pads(graph)
    removed += gone
    graph, gone = fuse_dilated_convs(graph)
    removed += gone
    graph, gone = fuse_activations(graph, accelerator)
    removed += gone
    return vela_order(graph), removed


def lower(model: Model, accelerator: Accelerator) -> LoweredGraph:
    """Lower the main subgraph of ``model`` for ``accelerator``."""
    if len(model.subgraphs) > 1:
        logger.warning("only the main subgraph is lowered; %d other subgraph(s) ignored", len(model.subgraphs) - 1)
    source = model.main
    graph, removed = rewrite_graph(source, accelerator)
    ops: list[LoweredOp] = []
    for op in graph.ops:
        ops.extend(primary_input_first(o) if isinstance(o, NpuOp) else o for o in lower_with_views(op, lower_op))
    return LoweredGraph(
        name=source.name,
        ops=tuple(ops),
        inputs=graph.inputs,
        outputs=graph.outputs,
        tflite_op_count=len(source.ops),
        removed=removed,
    )
