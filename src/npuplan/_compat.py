"""Small shims so the package runs on Python 3.10."""

from __future__ import annotations

import sys
from enum import Enum

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # pragma: no cover - exercised only on 3.10

    class StrEnum(str, Enum):
        """``enum.StrEnum`` for Python 3.10."""

        def __str__(self) -> str:
            return str(self.value)


__all__ = ["StrEnum"]
