"""Producers writing straight into their slice of a concatenation (or into the middle of a PAD) in a
deployable plan (issue 25):
a producer whose OFM only the CONCATENATION reads, with the concatenation's quantization, writes
its OFM at the slice's offset; only the other inputs are copied. The file validates and computes
what LiteRT computes."""

from __future__ import annotations

import numpy as np
import pytest

from npuplan.ir.types import DataType, Quantization
from tests.unit.emit.conftest import emit_graph
from tests.unit.lowering._build import Q, const, fm, graph, op

pytest.importorskip("ethosu.vela.api", reason="the deploy extra (ethos-u-vela) is not installed")


def _conv1x1(ifm, ofm, seed: int, index: int):
    rng = np.random.default_rng(seed)
    cin, cout = ifm.shape[-1], ofm.shape[-1]
    w = const(f"{ofm.name}_w", rng.integers(-20, 20, (cout, 1, 1, cin)))
    b = const(f"{ofm.name}_b", rng.integers(-50, 50, cout), DataType.INT32, None)
    return op("CONV_2D", [ifm, w, b], [ofm], index, padding="SAME", stride_h=1, stride_w=1,
              dilation_h_factor=1, dilation_w_factor=1, fused_activation_function="RELU")


def _concat_graph(axis: int, other_quant: Quantization = Q):
    """x -> conv a, conv b -> CONCATENATION(a, b, x) along ``axis``; ``b`` in ``other_quant``."""
    x = fm("x", (1, 8, 8, 16))
    a, b = fm("a", (1, 8, 8, 16)), fm("b", (1, 8, 8, 16), quant=other_quant)
    shape = [1, 8, 8, 16]
    shape[axis] *= 3
    y = fm("y", tuple(shape))
    ops = [_conv1x1(x, a, 1, 0), _conv1x1(x, b, 2, 1),
           op("CONCATENATION", [a, b, x], [y], 2, axis=axis, fused_activation_function="NONE")]
    return graph(ops, [x], [y])


def _run_matches_litert(emitted_data: bytes, source_data: bytes) -> None:
    pytest.importorskip("ai_edge_litert", reason='LiteRT (the "run" extra) is the reference')
    from npuplan.run import CompiledModel, ReferenceModel, compare_runs

    diffs = compare_runs(CompiledModel(emitted_data), ReferenceModel(source_data), samples=2, seed=0)
    assert all(d.differing == 0 for d in diffs), [str(d) for d in diffs]


@pytest.mark.parametrize("axis", [1, 3])
def test_producers_write_their_slices_and_only_the_network_input_is_copied(tmp_path, axis):
    g = _concat_graph(axis)
    planned, emitted, report = emit_graph(tmp_path, g)
    copies = [o for o in planned.lowered.npu_ops if o.tflite_type == "CONCATENATION"]
    assert [o.ifm.name for o in copies] == ["x"]  # the network input has no producer to write it
    writers = {o.name: o.ofm_write_offset for o in planned.lowered.npu_ops if o.tflite_type == "CONV_2D"}
    assert all(offset is not None for offset in writers.values()) and len(writers) == 2
    assert report.npu_operations == emitted.npu_operations
    _run_matches_litert(emitted.data, (tmp_path / f"{g.name}.tflite").read_bytes())


def test_a_producer_in_other_quantization_keeps_its_rescaling_copy(tmp_path):
    """(LiteRT refuses an int8 concatenation of other scales, so only the plan is checked.)"""
    g = _concat_graph(3, Quantization(scale=(0.08,), zero_point=(5,)))
    planned, emitted, report = emit_graph(tmp_path, g)
    copied = sorted(o.ifm.name for o in planned.lowered.npu_ops if o.tflite_type == "CONCATENATION")
    assert copied == ["b", "x"]
    assert report.npu_operations == emitted.npu_operations


def test_a_producer_writes_into_the_middle_of_its_pad(tmp_path):
    """conv -> PAD -> max pool (a PAD the pool cannot fold): the convolution writes its OFM at the
    pad's offset (rows and columns), only the border is filled, as Vela's default core does."""
    x, a = fm("x", (1, 12, 12, 16)), fm("a", (1, 12, 12, 16))
    p, y = fm("p", (1, 14, 15, 16)), fm("y", (1, 6, 7, 16))
    pads = const("pads", [[0, 0], [1, 1], [2, 1], [0, 0]], DataType.INT32, None)
    ops = [_conv1x1(x, a, 3, 0), op("PAD", [a, pads], [p], 1),
           op("MAX_POOL_2D", [p], [y], 2, padding="VALID", stride_h=2, stride_w=2, filter_height=3,
              filter_width=3, fused_activation_function="NONE")]
    g = graph(ops, [x], [y])
    planned, emitted, report = emit_graph(tmp_path, g)
    pad_ops = [o for o in planned.lowered.npu_ops if o.tflite_type == "PAD"]
    assert pad_ops and all(o.ifm.is_constant for o in pad_ops)  # the border fills only
    conv = next(o for o in planned.lowered.npu_ops if o.tflite_type == "CONV_2D")
    assert conv.ofm.name == "p" and (conv.ofm_write_offset.h, conv.ofm_write_offset.w) == (1, 2)
    assert report.npu_operations == emitted.npu_operations
    _run_matches_litert(emitted.data, (tmp_path / f"{g.name}.tflite").read_bytes())
