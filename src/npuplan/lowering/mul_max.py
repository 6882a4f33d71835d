"""Recognise ``max(x, x * alpha)`` with a constant scalar ``alpha >= 0`` as LEAKY_RELU.

Converters export a leaky ReLU written by hand (``tf.maximum(x, alpha * x)``) as MUL then MAXIMUM;
as one LEAKY_RELU it becomes a lookup table that fuses into the op producing ``x`` (as Vela does).
The LEAKY_RELU keeps the MUL's constant (``mul_alpha_q``, ``mul_alpha_scale``): its table is the
MUL's and MAXIMUM's integer arithmetic, bit for bit as TFLite computes the pair.
Rewritten only for 8-bit types when ``x``, the product and the result share their quantization
and the product has no other reader and no activation of its own.
"""

from __future__ import annotations

from npuplan.ir.graph import Graph, Op, frozen_options
from npuplan.ir.types import DataType
from npuplan.lowering._util import replace_op, without_op

Removed = tuple[tuple[str, str], ...]

FOLDED_REASON = "MUL and MAXIMUM of"  # how each removed MUL's reason starts (``api`` asks for it)


def _alpha(mul: Op, shared: object) -> tuple[int, float] | None:
    """The MUL's constant as (its value less its zero point, its scale), or None."""
    const = next((t for t in mul.inputs if t is not None and t is not shared), None)
    if const is None or const.data is None or const.data.size != 1 or const.quant is None or not const.quant.scale:
        return None
    zero = const.quant.zero_point[0] if const.quant.zero_point else 0
    return int(const.data.reshape(-1)[0]) - int(zero), float(const.quant.scale[0])


def _leaky(graph: Graph, op: Op) -> tuple[Op, Op] | None:
    """``(mul, leaky_relu)`` when the MAXIMUM ``op`` is ``max(x, x * alpha)``."""
    producers = graph.producers()
    for mine in op.inputs:
        if mine is None:
            continue
        mul = producers.get(mine)
        if mul is None or mul.type != "MUL" or mul.options.get("fused_activation_function", "NONE") != "NONE":
            continue
        if len(graph.consumers().get(mine, [])) != 1 or mine in graph.outputs:
            continue
        x = next((t for t in op.inputs if t is not mine), None)
        if x is None or x not in mul.inputs:
            continue
        out = op.outputs[0]
        if x.dtype not in (DataType.INT8, DataType.UINT8) or x.dtype != out.dtype:
            continue
        if not (x.quant == out.quant == mine.quant):
            continue
        found = _alpha(mul, x)
        if found is None or found[0] * found[1] < 0:
            continue
        alpha_q, alpha_scale = found
        # alpha_q/alpha_scale: the table computes TFLite's MUL (integer product, then its output
        # stage) and MAXIMUM input by input, not LEAKY_RELU's own rounding of the float alpha
        options = {"alpha": alpha_q * alpha_scale, "mul_alpha_q": alpha_q, "mul_alpha_scale": alpha_scale}
        return mul, Op("LEAKY_RELU", (x,), (out,), frozen_options(options), op.index)
    return None


def fold_mul_max(graph: Graph) -> tuple[Graph, Removed]:
    """Replace each ``max(x, x * alpha)`` pair by a LEAKY_RELU; return the graph and removed MULs."""
    removed: list[tuple[str, str]] = []
    for op in [o for o in graph.ops if o.type == "MAXIMUM"]:
        found = _leaky(graph, op)
        if found is None:
            continue
        mul, leaky = found
        graph = without_op(replace_op(graph, op, leaky), mul)
        alpha = leaky.options["alpha"]
        removed.append((mul.name, f"{FOLDED_REASON} '{op.name}' are one LEAKY_RELU (alpha {alpha:.4g})"))
    return graph, tuple(removed)
