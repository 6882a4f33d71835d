"""The explicit output scaling of a MEAN's operations, as Vela's decomposition runs them.

The lowering (``lowering.mean``) sums the reduced window by depthwise convolutions of ones into
int32 (per-channel scale 1: ``emit.weights``; a mean over the depth alone, by a 1x1 convolution of ones), in one position or in parallel rows, adds partial
sums (scale 1, shift 0),
and multiplies by a constant holding TFLite's reference multiplier
(``lowering.fixedpoint.mean_scaling``); the Mul's output scale is 1 with that multiplier's shift
(Vela's ``31 - shift``), so the stream computes TFLite's ``MultiplyByQuantizedMultiplier`` of the
sum, as Vela's output does.
"""

from __future__ import annotations

from collections.abc import Iterable

from npuplan.ir.lowered import BlockType, NpuOp
from npuplan.lowering.fixedpoint import mean_scaling


# the ops summing a MEAN's window: depthwise kernels of ones, or a 1x1 convolution of ones over the depth
_SUMS = frozenset({BlockType.DEPTHWISE, BlockType.CONV})


def mean_rescale(op: NpuOp, ops: Iterable[NpuOp]) -> tuple[int, int] | None:
    """``(scale, shift)`` of a MEAN's Add or Mul (None for any other operation)."""
    if op.tflite_type != "MEAN" or op.block_type is not BlockType.ELEMENTWISE:
        return None
    if op.elementwise == "ADD":
        return 1, 0
    sums = [o for o in ops if o.source_index == op.source_index and o.block_type in _SUMS and o.weights is not None]
    # elements averaged into each output: the MEAN's input over its output (the depthwise kernels
    # cover the reduced window once, summed in one position or in parallel rows then added)
    # (the op's own OFM view: it may write a box of a larger tensor, a concatenation's slice)
    # (a sum reading a slice where it lies, a batch element's rows: the box it reads)
    read = (sums[0].ifm_shape.elements if sums[0].reads_at_offset else sums[0].ifm.elements) if sums else 0
    count = read // max(op.ofm_shape.elements, 1)
    ifm, ofm = sums[0].ifm.quant if sums else None, op.ofm.quant
    if not sums or ifm is None or ofm is None:
        return None
    _, shift = mean_scaling(ifm.scale[0], ofm.scale[0], count)
    return 1, 31 - shift
