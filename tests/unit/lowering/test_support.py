from __future__ import annotations

import numpy as np

from npuplan.ir.types import DataType
from npuplan.lowering.support import unsupported_reason

from ._build import conv, const, fm, op


def test_int8_conv_is_supported() -> None:
    assert unsupported_reason(conv(fm("a", (1, 8, 8, 4)), fm("b", (1, 8, 8, 8)))) is None


def test_stride_4_is_rejected_with_reason() -> None:
    reason = unsupported_reason(conv(fm("a", (1, 16, 16, 4)), fm("b", (1, 4, 4, 8)), stride=4))
    assert reason is not None and "Stride" in reason and "4x4" in reason


def test_float_tensors_are_rejected() -> None:
    a = fm("a", (1, 8, 8, 4), DataType.FLOAT32, None)
    reason = unsupported_reason(op("ADD", [a, a], [fm("b", (1, 8, 8, 4), DataType.FLOAT32, None)]))
    assert reason is not None and "Tensors must be of type" in reason


def test_batch_above_one_is_rejected() -> None:
    reason = unsupported_reason(conv(fm("a", (2, 8, 8, 4)), fm("b", (2, 8, 8, 8))))
    assert reason == "IFM Tensor batch size must be 1 (it is 2)"


def test_dynamic_scalar_and_non_constant_shape() -> None:
    scalar = fm("s", ())
    assert "dynamic" in str(unsupported_reason(op("PACK", [scalar], [fm("p", (2,))])))
    shape = fm("shape", (2,), DataType.INT32)
    reason = unsupported_reason(op("RESHAPE", [fm("a", (1, 1, 1, 64)), shape], [fm("b", (1, 64))]))
    assert reason is not None and reason.startswith("Shape must be constant")


def test_unknown_op_type() -> None:
    assert unsupported_reason(op("GATHER", [fm("a", (4,))], [fm("b", (4,))])) == "GATHER is not supported on the NPU"


def test_kernel_too_tall() -> None:
    a, b = fm("a", (1, 100, 8, 1)), fm("b", (1, 30, 8, 1))
    w = const("w", np.ones((1, 71, 1, 1)))
    reason = unsupported_reason(op("CONV_2D", [a, w, None], [b], padding="VALID", stride_h=1, stride_w=1))
    assert reason is not None and "Dilated kernel height" in reason
