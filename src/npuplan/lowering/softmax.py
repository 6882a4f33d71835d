"""SOFTMAX -> Vela's fixed-point decomposition into NPU operations.

int8/uint8 softmax is 31 operations (a depthwise max-pool over channels, a Sub with the exp LUT,
a ReduceSum, CLZ, and a Newton-Raphson reciprocal made of Sub/SHL/SHR/Add/Mul), int16 softmax is
14. Each step is data in a table: (Vela op type, elementwise kind, IFM view, IFM2 view), where a
view is ``full`` (the softmax shape, the latest such result), ``exp`` (step 1's exponentials),
``row`` (one value per position) or ``scalar`` (a 1x1x1x1 constant). The arithmetic constants are not reproduced: only geometry, data types and count
matter downstream.
"""

from __future__ import annotations

import numpy as np

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import Activation, BlockType, Kernel, NpuOp, PoolKind
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization

Step = tuple[str, str | None, str, str | None, str]  # op_type, elementwise, ifm, ifm2, ofm view

_SCALAR = "scalar"
_EXP = "exp"  # the output of step 1, the Sub with the exp LUT (a full view)
_INT8_STEPS: tuple[Step, ...] = (
    ("MaxPool", None, "full", None, "row"),
    ("Sub", "SUB", "full", "row", "full"),  # + exp LUT
    ("SHR", "SHR", "full", _SCALAR, "full"),
    ("ReduceSum", None, "full", None, "row"),
    ("CLZ", "CLZ", "row", None, "row"),
    ("Sub", "SUB", _SCALAR, "row", "row"),
    ("Sub", "SUB", "row", _SCALAR, "row"),
    ("SHL", "SHL", "row", "row", "row"),
    ("Sub", "SUB", "row", _SCALAR, "row"),
    ("SHL", "SHL", "row", _SCALAR, "row"),
    ("Add", "ADD", "row", _SCALAR, "row"),
    ("Mul", "MUL", "row", _SCALAR, "row"),
    ("Add", "ADD", "row", _SCALAR, "row"),
    *(
        step
        for _ in range(3)
        for step in (
            ("Mul", "MUL", "row", "row", "row"),
            ("Sub", "SUB", _SCALAR, "row", "row"),
            ("Mul", "MUL", "row", "row", "row"),
            ("Mul", "MUL", "row", _SCALAR, "row"),
            ("Add", "ADD", "row", "row", "row"),
        )
    ),
    ("Mul", "MUL", "row", _SCALAR, "row"),
    ("Mul", "MUL", _EXP, "row", "full"),  # the exponentials themselves (the SHR'd copy only feeds the sum)
    ("SHR", "SHR", "full", "row", "out"),
)
_INT16_STEPS: tuple[Step, ...] = (
    ("MaxPool", None, "full", None, "row"),
    ("Sub", "SUB", "full", "row", "full"),  # + exp LUT
    ("Mul", "MUL", "full", _SCALAR, "full"),
    ("Add", "ADD", "full", _SCALAR, "full"),
    ("ReduceSum", None, "full", None, "row"),
    ("CLZ", "CLZ", "row", None, "row"),
    ("Sub", "SUB", _SCALAR, "row", "row"),
    ("SHL", "SHL", "row", "row", "row"),
    ("Sub", "SUB", "row", _SCALAR, "row"),
    ("SHL", "SHL", "row", _SCALAR, "row"),
    ("SHR", "SHR", "row", _SCALAR, "row"),
    ("Sub", "SUB", "row", _SCALAR, "row"),  # + 1/x LUT
    ("Mul", "MUL", "full", "row", "full"),
    ("SHR", "SHR", "full", "row", "out"),
)

_UNIT = Quantization(scale=(1.0,), zero_point=(0,))


def softmax_steps(dtype: DataType) -> tuple[Step, ...]:
    """The decomposition table used for a softmax on ``dtype``."""
    return _INT16_STEPS if dtype == DataType.INT16 else _INT8_STEPS


def convert_softmax(op: Op) -> tuple[NpuOp, ...]:
    """The NPU ops of one SOFTMAX; intermediate tensors are int32 and named like Vela's."""
    ifm, ofm = op.inputs[0], op.outputs[0]
    assert ifm is not None
    # Everything runs in the OFM's view, the shape the file gives the softmax: a removed reshape
    # before it may have left the IFM another view of the same rows (the support check asks for the
    # same depth and element count), read as the OFM's; Vela runs it in the file's shape.
    full = ofm.shape4d
    row = Shape4D(1, full.n * full.h, full.w, 1)
    views = {"full": full, _EXP: full, "row": row, _SCALAR: Shape4D(), "out": full}
    name = op.name
    prev_full: Tensor = ifm
    prev_row: Tensor | None = None
    exp: Tensor = ifm
    ops: list[NpuOp] = []
    for i, (op_type, kind, in1, in2, out_view) in enumerate(softmax_steps(ifm.dtype)):
        step_name = f"{name}_{op_type.lower().replace('reducesum', 'reduce_sum')}{i}"

        def operand(view: str | None, position: int) -> Tensor | None:
            if view is None:
                return None
            if view == _SCALAR:
                data = np.zeros((1, 1, 1, 1), dtype=np.int32)
                data.flags.writeable = False
                return Tensor(f"{step_name}_const{position}", (1, 1, 1, 1), DataType.INT32, _UNIT, data)
            if view == _EXP:
                return exp
            return prev_full if view == "full" else (prev_row or prev_full)

        a, b = operand(in1, 1), operand(in2, 2)
        assert a is not None
        out = ofm if out_view == "out" else Tensor(
            f"{step_name}_out", tuple(views[out_view].as_list()), DataType.INT32, _UNIT)
        block = {"MaxPool": BlockType.POOLING, "ReduceSum": BlockType.REDUCE_SUM}.get(op_type, BlockType.ELEMENTWISE)
        is_pool = op_type == "MaxPool"
        ops.append(NpuOp(
            name=step_name, tflite_type=op.type, op_type=op_type, block_type=block,
            ifm=a, ifm_shape=Shape4D(1, full.n * full.h * full.w, full.c, 1) if is_pool else views[in1],
            ifm2=b, ifm2_shape=views[in2] if in2 is not None else None,
            ofm=out, ofm_shape=Shape4D(1, full.n * full.h * full.w, 1, 1) if is_pool else views[out_view],
            kernel=Kernel(1, full.c) if is_pool else Kernel(),
            activation=Activation.LUT if i == 1 else Activation.NONE,
            pool=PoolKind.MAX if is_pool else PoolKind.NONE, elementwise=kind, source_index=op.index,
        ))
        if i == 1:
            exp = out
        if out_view in ("full", "out"):
            prev_full = out
        else:
            prev_row = out
    return tuple(ops)
