"""Fuse standalone activation operators into the NPU operation that produces their input.

RELU, RELU6, RELU_N1_TO_1 and RELU_0_TO_1 become the producer's output-stage clamp; HARD_SWISH,
TANH and LOGISTIC become a lookup table (LUT) activation. Like Vela, a LUT is only fused when
the accelerator keeps spare SHRAM banks for it (``shram_reserved_unused_banks > 0``): on 32/64-MAC
Ethos-U55 the LUT shares SHRAM with the accumulators and only works for elementwise ops, so the
activation stays a separate operation there.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from npuplan.hw.accelerator import Accelerator
from npuplan.ir.graph import Graph, Op, Tensor
from npuplan.ir.lowered import Activation, BlockType, LoweredOp, NpuOp, PoolKind
from npuplan.ir.types import DataType
from npuplan.lowering._util import (
    STANDALONE_ACTIVATIONS, fused_activation, replace_op, standalone_activation, with_options, without_op,
)
from npuplan.lowering.decompose import is_decomposed_leaky_relu
from npuplan.lowering.lut_tables import activation_table
from npuplan.lowering.memory_ops import MEMORY_TYPES
from npuplan.lowering.resize import RESIZE_TYPES
from npuplan.lowering.support import BINARY_ELEMENTWISE, CONV_TYPES, POOL_TYPES, unsupported_reason

Removed = tuple[tuple[str, str], ...]

# Producers with an output stage that can apply an activation.
_FUSABLE_PRODUCERS = (CONV_TYPES | POOL_TYPES | frozenset(BINARY_ELEMENTWISE) | RESIZE_TYPES
                      | frozenset({"FULLY_CONNECTED", "MEAN", "TRANSPOSE_CONV"}))


# Producers the emitter runs a fused LUT on: one output stage scaling to the table's input
# quantization (``NpuOp.lut_input_quant``): convolutions by their channel scales, binary
# elementwise ops by their output scale.
EMITTED_LUT_PRODUCERS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL"})


def _lut_table(act: Op) -> np.ndarray | None:
    """The table of LUT activation ``act`` (input value to output value), or None."""
    ifm, ofm = act.inputs[0], act.outputs[0]
    if ifm is None or ifm.quant is None or ofm.quant is None or ifm.dtype != ofm.dtype:
        return None
    return activation_table(act.type, ifm.dtype, ifm.quant, ofm.quant, act.options)


def _emits_lut(producer: Op, act: Op) -> bool:
    """Whether the emitter can run LUT activation ``act`` fused into ``producer``: a producer it
    runs so (``EMITTED_LUT_PRODUCERS``) writing the activation's input type, and a table."""
    ifm = act.inputs[0]
    return (producer.type in EMITTED_LUT_PRODUCERS and ifm is not None
            and producer.outputs[0].dtype == ifm.dtype and _lut_table(act) is not None)


def _can_fuse(graph: Graph, producer: Op | None, act: Op, accelerator: Accelerator, *,
              emitted: bool = False) -> bool:
    if producer is None or producer.type not in _FUSABLE_PRODUCERS:
        return False
    if emitted and STANDALONE_ACTIVATIONS[act.type] is Activation.LUT and not _emits_lut(producer, act):
        return False
    if unsupported_reason(producer) is not None or unsupported_reason(act) is not None:
        return False
    if fused_activation(producer.options) is not Activation.NONE:
        return False
    out = producer.outputs[0]
    if len(graph.consumers().get(out, [])) != 1 or out in graph.outputs:
        return False
    if STANDALONE_ACTIVATIONS[act.type] is Activation.LUT and accelerator.shram_reserved_unused_banks == 0:
        return False
    if standalone_activation(act) in (Activation.TANH, Activation.SIGMOID):
        return False  # int16 tanh/sigmoid: Vela runs them as their own average pool, never fused
    ifm, ofm = act.inputs[0], act.outputs[0]
    # A clamp cannot also rescale: the activation must keep its input quantization.
    if STANDALONE_ACTIVATIONS[act.type] is not Activation.LUT and ifm is not None and ifm.quant != ofm.quant:
        return False
    return True


def _above_reshape(graph: Graph, act: Op, accelerator: Accelerator, *,
                   emitted: bool = False) -> tuple[Graph, Op, Op] | None:
    """``(graph, activation, producer)`` with ``act`` moved above the RESHAPE, SQUEEZE or
    EXPAND_DIMS it alone reads, when it then fuses into the producer before that (an activation is
    elementwise: it does not care for the shape). Vela removes such reshapes before fusing, so it
    fuses them; None when it would not fuse."""
    ifm = act.inputs[0]
    reshape = graph.producers().get(ifm) if ifm is not None else None
    if reshape is None or reshape.type not in MEMORY_TYPES or unsupported_reason(reshape) is not None:
        return None
    src, out = reshape.inputs[0], act.outputs[0]
    producer = graph.producers().get(src) if src is not None else None
    if ifm is None or src is None or producer is None or len(graph.consumers().get(ifm, [])) != 1 \
            or ifm in graph.outputs:
        return None
    moved_out = Tensor(f"{out.name}_before_{reshape.type.lower()}", src.shape, out.dtype, out.quant)
    moved = Op(act.type, (src, *act.inputs[1:]), (moved_out,), act.options, act.index)
    relinked = Op(reshape.type, (moved_out, *reshape.inputs[1:]), act.outputs, reshape.options, reshape.index)
    candidate = replace_op(replace_op(graph, reshape, moved), act, relinked)
    if not _can_fuse(candidate, producer, moved, accelerator, emitted=emitted):
        return None
    return candidate, moved, producer


def fuse_activations(graph: Graph, accelerator: Accelerator, *,
                     only: frozenset[str] | None = None, emitted: bool = False,
                     luts: bool = True) -> tuple[Graph, Removed]:
    """Fold each fusable standalone activation into its producer; return graph and removed ops.
    ``only`` limits the activation types fused (None: every type); ``emitted`` fuses a LUT only
    where the emitter runs it (``_emits_lut``); without ``luts`` no table is fused (each runs as its
    own op: which is faster is the planner's choice, ``api.PreparedModel.forms``). A fused LUT keeps the quantization of its input
    (``npu_lut_quant``): the producer's output stage scales to it, the table maps it
    (``with_fused_lut``)."""
    removed: list[tuple[str, str]] = []
    for act in [o for o in graph.ops if o.type in STANDALONE_ACTIVATIONS and not is_decomposed_leaky_relu(o)
                and (only is None or o.type in only)
                and (luts or STANDALONE_ACTIVATIONS[o.type] is not Activation.LUT)]:
        ifm = act.inputs[0]
        producer = graph.producers().get(ifm) if ifm is not None else None
        if not _can_fuse(graph, producer, act, accelerator, emitted=emitted):
            hoisted = _above_reshape(graph, act, accelerator, emitted=emitted)
            if hoisted is None:
                continue
            graph, act, producer = hoisted
        assert producer is not None
        fused = with_options(
            producer,
            npu_activation=STANDALONE_ACTIVATIONS[act.type].value,
            npu_lut=act.type,
            npu_lut_quant=None if act.inputs[0] is None else act.inputs[0].quant,
            npu_lut_options=act.options,
            npu_lut_index=act.index,
            npu_name=producer.options.get("npu_name", producer.name),
        )
        fused = type(fused)(fused.type, fused.inputs, act.outputs, fused.options, fused.index)
        graph = without_op(replace_op(graph, producer, fused), act)
        removed.append((act.name, f"{act.type} fused into '{producer.name}'"))
    return graph, tuple(removed)


def with_fused_lut(op: Op, lowered: tuple[LoweredOp, ...]) -> tuple[LoweredOp, ...]:
    """``lowered`` (the operations of ``op``) with the LUT fused into ``op`` (``fuse_activations``)
    on each operation writing ``op``'s output: its table and the quantization its output stage
    writes. Unchanged without a fused LUT, or without the table (the op then asks for one:
    ``lowering.deployable``)."""
    quant = op.options.get("npu_lut_quant")
    if op.options.get("npu_activation") != Activation.LUT.value or quant is None:
        return lowered
    out = op.outputs[0]
    table = None
    if out.quant is not None and out.dtype in (DataType.INT8, DataType.UINT8):
        table = activation_table(str(op.options["npu_lut"]), out.dtype, quant, out.quant,
                                 op.options.get("npu_lut_options", {}))
    source = int(op.options.get("npu_lut_index", -1))
    return tuple(replace(n, lut=table, lut_input_quant=quant, lut_source_index=source)
                 if isinstance(n, NpuOp) and n.ofm is out else n for n in lowered)


def standalone_luts_as_pools(ops: tuple[LoweredOp, ...], accelerator: Accelerator) -> tuple[LoweredOp, ...]:
    """Each standalone LUT activation (``convert_standalone_activation``'s Add of a scalar zero) as a
    1x1 average pool through the table where the accelerator keeps spare SHRAM banks for tables (as
    Vela's default core runs it): the same output stage (the IFM's quantization, no rescale) and
    table, but one input stream instead of two and no elementwise block. Elsewhere (32/64-MAC
    Ethos-U55) a table works for elementwise ops only, and the Add stays."""
    if accelerator.shram_reserved_unused_banks == 0:
        return ops
    return tuple(_pooled(op) if standalone_lut(op) else op for op in ops)


def standalone_lut(op: LoweredOp) -> bool:
    """Whether ``op`` is a standalone LUT activation run as an Add of a scalar zero."""
    return (isinstance(op, NpuOp) and op.activation is Activation.LUT and op.op_type == "Add"
            and op.tflite_type in STANDALONE_ACTIVATIONS and op.ifm2 is not None and op.ifm2.is_constant
            and op.ifm2.shape == () and op.lut_input_quant is None and op.ifm_read_offset is None
            and op.ofm_write_offset is None and op.ifm_shape == op.ofm_shape)


def _pooled(op: LoweredOp) -> NpuOp:
    assert isinstance(op, NpuOp)
    return replace(op, op_type="AvgPool", block_type=BlockType.POOLING, ifm2=None, ifm2_shape=None,
                   elementwise=None, pool=PoolKind.AVERAGE)


def fuses_lut(op: LoweredOp) -> bool:
    """Whether ``op`` runs a table activation fused into it (``fuse_activations``)."""
    return isinstance(op, NpuOp) and op.activation is Activation.LUT and op.lut_input_quant is not None
