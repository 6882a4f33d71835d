"""An NPU op's costing signature as a memo key, so that ops that cost alike share their costings.

``NpuOp`` and ``Tensor`` compare by identity; each lowering of a model builds its own, and a
network repeats the same layer many times (the blocks of a chain, the steps of a recurrent cell),
each op with its own names, quantization and weight values. The costing reads none of those: it
reads an op's kind, shapes, kernel, activation, dtypes and which operands are quantized or
constant, and its weights only through their encoded sizes, which the costing memo's key carries
beside the op's (the weight plan's bytes, or the whole stream's, ``costing.cost_op``). ``OpKeys``
gives each op a key holding every field of the op and of its tensors but those: ops with equal
keys and equal weight sizes cost the same.
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any

import numpy as np

from npuplan.ir.lowered import NpuOp
from npuplan.ir.types import Quantization


_SCALARS = frozenset({str, int, float, bool, bytes})
# fields no costing reads: names (Vela's, the TFLite file's) and the TFLite operators ops came from
_UNREAD = frozenset({"name", "source_index", "lut_source_index"})


class OpKeys:
    """``key(op)``: a small int, the same for ops of equal costing signature (every field of the op
    and its tensors but their names; arrays by dtype and shape, quantizations by presence), worked
    out once per op object. An int, as the memo hashes its keys at every lookup. The objects met
    (ops, tensors, arrays) are kept alive with their values, so ids are not reused while the memo
    lives; a tensor several ops share (one's OFM, the next one's IFM) is gone through once.
    ``of`` maps the id of each op keyed so far to its key (a lookup for callers asking often)."""

    def __init__(self) -> None:
        self._found: dict[int, tuple[Any, Any]] = {}  # id -> (object, its value)
        self._by_value: dict[Any, int] = {}
        self._fields: dict[type, tuple[str, ...]] = {}  # a dataclass's fields the key holds, looked up once per class
        self.of: dict[int, int] = {}

    def key(self, op: NpuOp) -> int:
        found = self.of.get(id(op))
        if found is None:
            value = self._value(op)
            self._found[id(op)] = (op, value)  # keeps the op alive: its id stays its own
            found = self.of[id(op)] = self._by_value.setdefault(value, len(self._by_value))
        return found

    def _value(self, x: Any) -> Any:
        """``x`` as a hashable value that equals another's only when what the costing reads of them
        is equal: arrays by dtype and shape, quantizations by presence, dataclasses compared by
        identity (``eq=False``) field by field, anything hashable as it is (its ``==`` is by value,
        or by identity, which only splits keys)."""
        if x is None or type(x) in _SCALARS or isinstance(x, Enum):
            return x
        if isinstance(x, np.ndarray):
            return ("array", x.dtype.str, x.shape)
        if isinstance(x, Quantization):
            return "quantized"
        params = getattr(type(x), "__dataclass_params__", None)
        if params is not None and not params.eq:
            found = self._found.get(id(x))
            if found is None:
                found = self._found[id(x)] = (x, self._composite(x))
            return found[1]
        try:
            hash(x)
            return x
        except TypeError:  # holds an array or a list
            return self._composite(x)

    def _composite(self, x: Any) -> Any:
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            names = self._fields.get(type(x))
            if names is None:
                names = self._fields[type(x)] = tuple(f.name for f in dataclasses.fields(x) if f.name not in _UNREAD)
            value, scalars = self._value, _SCALARS
            return (type(x).__qualname__, *[v if v is None or type(v) in scalars else value(v)
                                            for v in [getattr(x, name) for name in names]])
        if isinstance(x, (tuple, list)):
            return (type(x).__name__, *(self._value(item) for item in x))
        raise TypeError(f"no value key for {type(x).__name__}")
