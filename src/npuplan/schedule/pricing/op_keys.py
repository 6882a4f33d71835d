"""An NPU op's value as a memo key, so that equal ops of a model's lowerings share their costings.

``NpuOp`` and ``Tensor`` compare by identity; each lowering of a model (with concatenations in
place or not, a form) builds its own, so the costing memo keyed on the op object answered only the
lowering that asked first. ``OpKeys`` gives each op a key holding every field of the op and of its
tensors (arrays by dtype, shape and a digest of their bytes): ops with equal keys cost the same.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from npuplan.ir.digest import array_digest
from npuplan.ir.lowered import NpuOp


_SCALARS = frozenset({str, int, float, bool, bytes})


class OpKeys:
    """``key(op)``: a small int, the same for ops of equal value (every field of the op and its
    tensors), worked out once per op object. An int, as the memo hashes its keys at every lookup
    (a per-channel quantization alone is a tuple of hundreds of floats). The objects met (ops,
    tensors, arrays) are kept alive with their values, so ids are not reused while the memo
    lives; a tensor several ops share (one's OFM, the next one's IFM) is gone through once."""

    def __init__(self) -> None:
        self._found: dict[int, tuple[Any, Any]] = {}  # id -> (object, its value)
        self._by_value: dict[Any, int] = {}
        self._fields: dict[type, tuple[str, ...]] = {}  # a dataclass's field names, looked up once per class

    def key(self, op: NpuOp) -> int:
        found = self._found.get(id(op))
        if found is None:
            value = self._value(op)
            found = self._found[id(op)] = (op, self._by_value.setdefault(value, len(self._by_value)))
        return found[1]

    def _value(self, x: Any) -> Any:
        """``x`` as a hashable value that equals another's only when their contents are equal:
        arrays by digest, dataclasses compared by identity (``eq=False``) field by field, anything
        hashable as it is (its ``==`` is by value, or by identity, which only splits keys)."""
        if x is None or type(x) in _SCALARS:
            return x
        params = getattr(type(x), "__dataclass_params__", None)
        if isinstance(x, np.ndarray) or (params is not None and not params.eq):
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
        if isinstance(x, np.ndarray):
            return ("array", array_digest(x))
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            names = self._fields.get(type(x))
            if names is None:
                names = self._fields[type(x)] = tuple(f.name for f in dataclasses.fields(x))
            value = self._value
            return (type(x).__qualname__, *[value(getattr(x, name)) for name in names])
        if isinstance(x, (tuple, list)):
            return (type(x).__name__, *(self._value(item) for item in x))
        raise TypeError(f"no value key for {type(x).__name__}")
