"""The TFLite writer: what it writes reads back as the model it was given."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from npuplan.io.tflite import parse_tflite, read_tflite
from npuplan.io.tflite_write import options_table_name, write_tflite

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.mark.parametrize("path", sorted(DATA.glob("*.tflite")), ids=lambda p: p.stem)
def test_round_trip(path: Path) -> None:
    model = read_tflite(path)
    again = parse_tflite(write_tflite(model), name=model.name)
    assert len(again.subgraphs) == len(model.subgraphs)
    for g, h in zip(model.subgraphs, again.subgraphs):
        assert [t.name for t in g.inputs] == [t.name for t in h.inputs]
        assert [t.name for t in g.outputs] == [t.name for t in h.outputs]
        for a, b in zip(g.ops, h.ops, strict=True):
            assert (a.type, dict(a.options)) == (b.type, dict(b.options))
            for s, t in zip((*a.inputs, *a.outputs), (*b.inputs, *b.outputs), strict=True):
                if s is None or t is None:
                    assert s is t
                    continue
                assert (s.name, s.shape, s.dtype, s.quant, s.is_variable) == (t.name, t.shape, t.dtype, t.quant,
                                                                                t.is_variable)
                assert (s.data is None) == (t.data is None)
                if s.data is not None:
                    assert np.array_equal(s.data, t.data)


def test_options_table_names() -> None:
    assert options_table_name("CONV_2D") == "Conv2DOptions"
    assert options_table_name("DEPTHWISE_CONV_2D") == "DepthwiseConv2DOptions"
    assert options_table_name("MAX_POOL_2D") == "Pool2DOptions"
    assert options_table_name("MEAN") == "ReducerOptions"
    assert options_table_name("RELU") is None
