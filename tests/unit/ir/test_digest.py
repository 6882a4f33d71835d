import hashlib

import numpy as np

from npuplan.ir.digest import array_digest


def test_equal_arrays_share_a_digest_whatever_their_memory_order():
    a = np.arange(24, dtype=np.int8).reshape(2, 3, 4)
    assert array_digest(a) == array_digest(np.asfortranarray(a)) == array_digest(a.copy())


def test_dtype_shape_and_bytes_each_tell_arrays_apart():
    a = np.arange(12, dtype=np.int8).reshape(3, 4)
    others = [a.reshape(4, 3), a.astype(np.uint8), a + 1]
    assert len({array_digest(a), *map(array_digest, others)}) == 4


def test_it_is_hashlib_s_blake2b_of_the_bytes_then_dtype_and_shape():
    a = np.array([[1, -2], [3, 4]], dtype=np.int32)
    expected = hashlib.blake2b(a.tobytes(), digest_size=16)
    expected.update(repr(("<i4", (2, 2))).encode())
    assert array_digest(a) == expected.digest()
