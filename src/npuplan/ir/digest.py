"""A digest of an array's contents, for memo keys: arrays with equal digests are equal."""

from __future__ import annotations

import numpy as np

try:  # hashlib's own blake2b: importing hashlib also loads OpenSSL's (~11 M instructions, 1.4% of a 3-op plan)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without the module: hashlib's is OpenSSL's
    from hashlib import blake2b


def array_digest(array: np.ndarray) -> bytes:
    """16 bytes digesting ``array``'s dtype, shape and bytes (in C order)."""
    data = np.ascontiguousarray(array)
    digest = blake2b(data.tobytes(), digest_size=16)
    digest.update(repr((data.dtype.str, data.shape)).encode())
    return digest.digest()
