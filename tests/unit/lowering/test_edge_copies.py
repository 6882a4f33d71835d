"""fuse_edge_copies: a half-pixel bilinear resize's copy of its input into bricks goes where the
input's producer, a kernel op writing it alone and whole, can write the bricks itself."""

from __future__ import annotations

from npuplan.hw.accelerator import accelerator
from npuplan.ir.types import DataType
from npuplan.lowering import lower
from npuplan.lowering.formats import brick_format_tensors, linear_format_tensors

from ._build import conv, const, fm, graph, model, op

U55_128 = accelerator("ethos-u55-128")


def _resize(x, y):
    size = const("size", [y.shape[1], y.shape[2]], DataType.INT32, None)
    return op("RESIZE_BILINEAR", [x, size], [y], 1, align_corners=False, half_pixel_centers=True)


def test_a_convolution_writes_the_bricks_the_phases_read() -> None:
    x, y, z = fm("x", (1, 8, 8, 8)), fm("y", (1, 8, 8, 8)), fm("z", (1, 16, 16, 8))
    lowered = lower(model(graph([conv(x, y), _resize(y, z)], [x], [z])), U55_128)
    ops = lowered.npu_ops
    assert [o.op_type for o in ops] == ["Conv2DBias"] + ["DepthwiseConv2DBias"] * 4
    assert all(o.ifm is ops[0].ofm for o in ops[1:])
    assert "y" in brick_format_tensors(lowered) and "y" not in linear_format_tensors(lowered)


def test_a_network_input_or_a_map_with_other_readers_keeps_its_copy() -> None:
    x, z = fm("x", (1, 8, 8, 8)), fm("z", (1, 16, 16, 8))
    alone = lower(model(graph([_resize(x, z)], [x], [z])), U55_128).npu_ops
    assert [o.op_type for o in alone] == ["AvgPool"] + ["DepthwiseConv2DBias"] * 4  # the input is NHWC
    y, w = fm("y", (1, 8, 8, 8)), fm("w", (1, 8, 8, 8))
    shared = lower(model(graph([conv(x, y), _resize(y, z), conv(y, w)], [x], [z, w])), U55_128).npu_ops
    assert sum(o.name.endswith("_rb_init_avgpool") for o in shared) == 1

