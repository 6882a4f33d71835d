"""Strict, typed reading of a plan document's fields: a field of the wrong type is an error naming
where it is (``plan.ops[3].cost.nn_macs``), never a value coerced into something else."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from npuplan.commands.serial import StreamFormatError, plan_int


class Fields:
    """One JSON object of the document and where it is (for errors)."""

    __slots__ = ("data", "where")

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, Mapping):
            raise StreamFormatError(f"{where} must be an object")
        self.data: Mapping[str, Any] = data
        self.where = where

    def keys(self) -> list[str]:
        return [str(k) for k in self.data]

    def _get(self, key: str) -> Any:
        if key not in self.data:
            raise StreamFormatError(f"{self.where} has no '{key}'")
        return self.data[key]

    def section(self, key: str) -> Fields:
        """The object at ``key``."""
        return Fields(self._get(key), f"{self.where}.{key}")

    def text(self, key: str) -> str:
        value = self._get(key)
        if not isinstance(value, str):
            raise StreamFormatError(f"{self.where}.{key} must be a string (it is {value!r:.40})")
        return value

    def whole(self, key: str) -> int:
        """A whole number in ``[0, 2**40]``."""
        return plan_int(self._get(key), f"{self.where}.{key}")

    def signed(self, key: str) -> int:
        """A whole number, possibly negative (ids where -1 means none)."""
        value = self._get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not -1 <= value <= 1 << 40:
            raise StreamFormatError(f"{self.where}.{key} must be a whole number from -1 (it is {value!r:.40})")
        return value

    def number(self, key: str) -> float:
        return _number(self._get(key), f"{self.where}.{key}")

    def optional(self, key: str, kind: type) -> Any:
        """The value at ``key`` when it is there and not null, else ``None``; of type ``kind``."""
        value = self.data.get(key)
        if value is not None and not isinstance(value, kind):
            raise StreamFormatError(f"{self.where}.{key} must be a {kind.__name__} or null (it is {value!r:.40})")
        return value

    def shape(self, key: str) -> tuple[int, ...]:
        """A list of whole numbers, or ``()`` for null."""
        value = self._get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or len(value) > 8:
            raise StreamFormatError(f"{self.where}.{key} must be a list of at most 8 whole numbers")
        return tuple(plan_int(v, f"{self.where}.{key}") for v in value)

    def optional_shape(self, key: str) -> tuple[int, ...]:
        return self.shape(key) if key in self.data else ()

    def strs(self, key: str) -> tuple[str, ...]:
        """A list of strings."""
        value = self._get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise StreamFormatError(f"{self.where}.{key} must be a list of strings")
        return tuple(value)

    def items(self, key: str) -> Iterator[Fields]:
        """The objects of the list at ``key``."""
        value = self._get(key)
        if not isinstance(value, list):
            raise StreamFormatError(f"{self.where}.{key} must be a list")
        for k, item in enumerate(value):
            yield Fields(item, f"{self.where}.{key}[{k}]")

    def numbers(self) -> dict[str, float]:
        """Every member, each a finite number."""
        return {str(k): _number(v, f"{self.where}.{k}") for k, v in self.data.items()}

    def scalars(self) -> dict[str, object]:
        """Every member that is a string, number, boolean or null (nested values are left out)."""
        out: dict[str, object] = {}
        for k, v in self.data.items():
            if v is None or isinstance(v, (str, int, float, bool)):
                out[str(k)] = v
        return out


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise StreamFormatError(f"{where} must be a finite number (it is {value!r:.40})")
    return float(value)
