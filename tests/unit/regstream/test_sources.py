"""The record of each NPU operation's source operators (``regstream.sources``): what is written is
read back, a record that is not one is refused (None), never half-read."""

from __future__ import annotations

import numpy as np

from npuplan.regstream.sources import OperationSource as S
from npuplan.regstream.sources import decode_sources, encode_sources


def test_round_trip_keeps_every_operation_in_order() -> None:
    streams = [[S(3), S(3), S(3, 7), S(4), S(-1), S(4), S(4)], [], [S(9)]]
    assert decode_sources(encode_sources(streams)) == tuple(tuple(s) for s in streams)


def test_runs_are_what_is_stored() -> None:
    words = np.frombuffer(encode_sources([[S(5)] * 40 + [S(5, 6)] * 2]), dtype="<i4").tolist()
    assert words == [1, 1, 2, 5, -1, 40, 5, 6, 2]


def test_not_a_record_is_none() -> None:
    good = encode_sources([[S(1), S(2), S(2)]])
    assert decode_sources(good) is not None
    assert decode_sources(good[:-4]) is None  # truncated
    assert decode_sources(good + b"\0\0\0\0") is None  # trailing words
    assert decode_sources(good[:-1]) is None  # not whole words
    assert decode_sources(np.array([2, 0], dtype="<i4").tobytes()) is None  # another version
    assert decode_sources(np.array([1, 1, 1, 7, -1, -3], dtype="<i4").tobytes()) is None  # a negative count
    assert decode_sources(b"") is None
