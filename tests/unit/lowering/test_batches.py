"""``lowering.batches``: a 4-D operator of a batch above 1 as operations of batch 1 over its rows."""

from __future__ import annotations

from npuplan.hw.accelerator import accelerator
from npuplan.ir.shape import Shape4D
from npuplan.lowering.batches import split_batches
from npuplan.lowering.lower import lower
from tests.unit.lowering._build import conv, fm, graph, model


def test_a_graph_of_batch_1_is_left_as_it_is():
    x, y = fm("x", (1, 8, 8, 4)), fm("y", (1, 8, 8, 4))
    g = graph([conv(x, y)], [x], [y])
    assert split_batches(g) == (g, False)


def test_a_taller_kernel_runs_per_batch_element_and_a_1x1_once_on_the_rows():
    x, y, z = fm("x", (3, 8, 8, 4)), fm("y", (3, 8, 8, 6)), fm("z", (3, 8, 8, 2))
    g, changed = split_batches(graph([conv(x, y, 3, index=0), conv(y, z, 1, index=1)], [x], [z]))
    types = [o.type for o in g.ops]
    assert changed and types.count("CONV_2D") == 3 + 1 and "SPLIT" in types and "CONCATENATION" in types
    once = [o for o in g.ops if o.type == "CONV_2D"][-1]
    assert once.inputs[0].shape == (1, 24, 8, 6) and once.outputs[0].shape == (1, 24, 8, 2)


def test_the_lowered_batch_elements_have_batch_1():
    x, y = fm("x", (4, 9, 9, 3)), fm("y", (4, 5, 5, 8))
    lowered = lower(model(graph([conv(x, y, 3, stride=2)], [x], [y])), accelerator("ethos-u55-128"), deployable=True)
    assert not lowered.cpu_ops
    assert all(o.ifm_shape.n == 1 and o.ofm_shape.n == 1 for o in lowered.npu_ops)
    assert sum(o.tflite_type == "CONV_2D" for o in lowered.npu_ops) == 4


def test_a_5d_map_is_seen_as_its_rows():
    assert Shape4D.of((1, 10, 2, 10, 32)) == Shape4D(1, 20, 10, 32)
    assert Shape4D.of((2, 3, 4, 5, 6, 7)) == Shape4D(2, 60, 6, 7)
    assert Shape4D.of((5, 6)) == Shape4D(1, 1, 5, 6)
