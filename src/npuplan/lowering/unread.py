"""Drop NPU operations whose results nothing reads (an UNPACK's outputs no op uses).

A TFLite operator with several outputs lowers to one NPU operation per output (``slices``); an
output no operator reads and the network does not return is computed for nothing. Vela leaves
such writes out too. CPU operators are kept whatever they write (the file runs them as they are).
"""

from __future__ import annotations

from collections.abc import Iterable

from npuplan.ir.graph import Tensor
from npuplan.ir.lowered import CpuOp, LoweredOp, NpuOp


def _read_names(ops: Iterable[LoweredOp]) -> set[str]:
    names: set[str] = set()
    for op in ops:
        reads = (op.ifm, op.ifm2) if isinstance(op, NpuOp) else op.op.inputs
        names.update(t.name for t in reads if t is not None)
    return names


def drop_unread_writes(ops: tuple[LoweredOp, ...], outputs: Iterable[Tensor]) -> tuple[LoweredOp, ...]:
    """``ops`` without the NPU operations whose OFM no op reads and ``outputs`` do not hold, until
    none is left (a dropped op may have been the only reader of another's result)."""
    kept = {t.name for t in outputs}
    while True:
        needed = kept | _read_names(ops)
        left = tuple(o for o in ops if isinstance(o, CpuOp) or o.ofm.name in needed)
        if len(left) == len(ops):
            return ops
        ops = left
