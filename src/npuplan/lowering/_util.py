"""Small helpers shared by the lowering passes: op rewiring, activation names, SAME padding."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from npuplan.ir.graph import Graph, Op, Tensor, frozen_options
from npuplan.ir.lowered import Activation, Padding

ACTIVATIONS: dict[str, Activation] = {
    "NONE": Activation.NONE,
    "RELU": Activation.RELU,
    "RELU6": Activation.RELU6,
    "RELU_N1_TO_1": Activation.RELU_N1_TO_1,
    "TANH": Activation.TANH,
    "SIGN_BIT": Activation.CLAMP,
}

# Standalone TFLite activation operators and the fused activation they become.
STANDALONE_ACTIVATIONS: dict[str, Activation] = {
    "RELU": Activation.RELU,
    "RELU6": Activation.RELU6,
    "RELU_N1_TO_1": Activation.RELU_N1_TO_1,
    "RELU_0_TO_1": Activation.CLAMP,
    "HARD_SWISH": Activation.LUT,
    "LEAKY_RELU": Activation.LUT,
    "EXP": Activation.LUT,
    "RSQRT": Activation.LUT,
    "GELU": Activation.LUT,
    "LOG": Activation.LUT,
    "TANH": Activation.LUT,
    "LOGISTIC": Activation.LUT,
}


def standalone_activation(op: Op) -> Activation:
    """The output-stage activation of a standalone activation op: int16 TANH and LOGISTIC are the
    hardware's own functions (no table to load, as Vela runs them); the rest as
    ``STANDALONE_ACTIVATIONS`` says."""
    ifm = op.inputs[0] if op.inputs else None
    if op.type in ("TANH", "LOGISTIC") and ifm is not None and ifm.dtype.bits == 16:
        return Activation.TANH if op.type == "TANH" else Activation.SIGMOID
    return STANDALONE_ACTIVATIONS[op.type]


def with_options(op: Op, **changes: Any) -> Op:
    """A copy of ``op`` with some options added or changed."""
    merged: dict[str, Any] = dict(op.options)
    merged.update(changes)
    return replace(op, options=frozen_options(merged))


def replace_tensor(graph: Graph, old: Tensor, new: Tensor) -> Graph:
    """A copy of ``graph`` where every use (input or output) of ``old`` reads/writes ``new``."""
    return replace_tensors(graph, {id(old): new})


def replace_tensors(graph: Graph, new_by_old: Mapping[int, Tensor]) -> Graph:
    """``replace_tensor`` for many tensors in one pass: ``new_by_old`` maps ``id(old)`` to its
    replacement (the old tensors must stay alive, as ``graph`` holds them)."""

    ops = tuple(with_tensors_replaced(op, new_by_old) for op in graph.ops)
    return replace(graph, ops=ops, inputs=_swapped(graph.inputs, new_by_old),
                   outputs=_swapped(graph.outputs, new_by_old))


def with_tensors_replaced(op: Op, new_by_old: Mapping[int, Tensor]) -> Op:
    """``op`` reading and writing the replacements ``new_by_old`` (by ``id`` of the old tensor)
    gives; ``op`` itself when it uses none of the old tensors."""
    if not any(t is not None and id(t) in new_by_old for t in (*op.inputs, *op.outputs)):
        return op
    return replace(op, inputs=_swapped(op.inputs, new_by_old), outputs=_swapped(op.outputs, new_by_old))


def _swapped(ts: tuple[Any, ...], new_by_old: Mapping[int, Tensor]) -> tuple[Any, ...]:
    return tuple(new_by_old.get(id(t), t) if t is not None else t for t in ts)


def without_op(graph: Graph, op: Op) -> Graph:
    return replace(graph, ops=tuple(o for o in graph.ops if o is not op))


def replace_op(graph: Graph, old: Op, new: Op) -> Graph:
    return replace(graph, ops=tuple(new if o is old else o for o in graph.ops))


def fused_activation(options: Mapping[str, Any]) -> Activation:
    """The activation an op's options ask for (fused function, or one set by a fusion pass)."""
    if "npu_activation" in options:
        return Activation(options["npu_activation"])
    return ACTIVATIONS.get(str(options.get("fused_activation_function", "NONE")), Activation.CLAMP)


def same_padding(in_size: int, stride: int, dilated_kernel: int) -> tuple[int, int]:
    """TFLite SAME padding (before, after) along one axis."""
    out_size = math.ceil(in_size / stride)
    total = max(0, (out_size - 1) * stride + dilated_kernel - in_size)
    return total // 2, total - total // 2


def op_padding(
    options: Mapping[str, Any], ifm_h: int, ifm_w: int, kernel_hw: tuple[int, int], stride_hw: tuple[int, int]
) -> Padding:
    """Explicit padding for an op: folded PAD values, SAME as TFLite computes it, or none (VALID)."""
    if "explicit_padding" in options:
        top, left, bottom, right = options["explicit_padding"]
        return Padding(top=top, left=left, bottom=bottom, right=right)
    if options.get("padding") == "SAME":
        top, bottom = same_padding(ifm_h, stride_hw[0], kernel_hw[0])
        left, right = same_padding(ifm_w, stride_hw[1], kernel_hw[1])
        return Padding(top=top, left=left, bottom=bottom, right=right)
    return Padding()
