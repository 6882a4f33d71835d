"""RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR as the hardware runs them (Vela 5.2.0 legacy's lowering).

The NPU upscales an IFM x2 (nearest neighbour) while reading it, so a resize by 2, 4 or 8 is a
chain of ops that each double the IFM:

* every step but the last is a 1x1 average pool over the x2 nearest-upscaled IFM (a copy);
* the last step also doubles the IFM and then: nearest neighbour, a 1x1 average pool; nearest
  neighbour with ``align_corners``, a depthwise convolution whose one-hot f x f kernel picks the
  right neighbour (VALID); bilinear, an f x f average pool (VALID with ``align_corners``, else
  padded by f - 1 rows and columns at the bottom and right), f being the whole upscale factor.

A nearest upscale from Keras' UpSampling2D by factors the resampling cannot do runs as copies
(``tile_copies``). A 1x1 IFM becomes an elementwise ADD of the IFM (broadcast) to zeros of the OFM shape. Bilinear
with ``half_pixel_centers`` (2x only) is a 1x1 average-pool copy of the IFM followed by four 2x2
depthwise convolutions, one per output phase, each writing every other row and column of the OFM
(edge-padded towards its own corner): each is costed for the IFM-sized box it writes
(``ofm_write_shape``), its block chosen for the whole OFM, as Vela does; none can be cascaded. A resize whose OFM is its IFM is dropped (``drop_identity_resizes``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from npuplan.ir.graph import Graph, Op, Tensor
from npuplan.ir.lowered import BlockType, Kernel, NpuOp, Padding, PoolKind, Resampling
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.lowering._util import fused_activation, replace_tensor, without_op
from npuplan.lowering.tile_copies import convert_tile_copies, copy_reason

RESIZE_TYPES = frozenset({"RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR"})
_OP_TYPES = {"RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighbor", "RESIZE_BILINEAR": "ResizeBilinear"}
_FACTORS = (1.0, 2.0, 4.0, 8.0)
# Edge padding (top, left, bottom, right) of the four half-pixel phases: TL, TR, BL, BR.
_PHASE_PADDING = ((1, 1, 0, 0), (1, 0, 0, 1), (0, 1, 1, 0), (0, 0, 1, 1))
Removed = tuple[tuple[str, str], ...]


def _hw(t: Tensor) -> tuple[int, int]:
    s = t.shape4d
    return s.h, s.w


def _ifm(op: Op) -> Tensor:
    ifm = op.inputs[0]
    assert ifm is not None
    return ifm


def _flag(op: Op, name: str) -> bool:
    return bool(op.options.get(name, False))


def axis_factors(op: Op) -> tuple[float, float]:
    """Upscale factors (height, width) as Vela measures them (corner to corner with ``align_corners``)."""
    (ih, iw), (oh, ow) = _hw(_ifm(op)), _hw(op.outputs[0])
    if _flag(op, "align_corners"):
        return ((oh - 1) / (ih - 1) if ih != 1 else 1.0, (ow - 1) / (iw - 1) if iw != 1 else 1.0)
    return oh / ih, ow / iw


def _shape_reason(op: Op) -> str | None:
    ifm, ofm = _ifm(op), op.outputs[0]
    (ih, iw), (oh, ow) = _hw(ifm), _hw(ofm)
    if len(ifm.shape) == 4 and ((ih == iw == 1) or list(ifm.shape) == list(ofm.shape)):
        return None
    fh, fw = axis_factors(op)
    if len(ifm.shape) == 4 and fh in _FACTORS and fw in _FACTORS:
        if oh != 1 and ow != 1 and fh == fw:
            return None
        if (oh == 1 or ow == 1) and ((fh == ih == 1) or (fw == iw == 1)):
            return None
    return ("The width and height of the IFM and OFM must match one of the following criteria: IFM W and H both 1;"
            " IFM matches OFM; W and H scaling 1 or equal and OFM (W-1, H-1 with align_corners) 1x/2x/4x/8x the IFM's"
            f" (IFM {list(ifm.shape)}, OFM {list(ofm.shape)}, align_corners={_flag(op, 'align_corners')})")


def upsampling_copies(op: Op) -> tuple[int, int] | None:
    """The (height, width) factors of a nearest upscale from a reshape/tile chain
    (``upsampling.fold_upsampling_chains``) that runs as copies rather than resampling, else None."""
    factors = op.options.get("upsampling_factors")
    if factors is None or _shape_reason(op) is None:
        return None
    return int(factors[0]), int(factors[1])


def resize_reason(op: Op) -> str | None:
    """Why Vela would not run this resize on the NPU, or None."""
    ifm = _ifm(op)
    if ifm.shape4d.n != 1:
        return f"Tensor batch size must be 1 ('{ifm.name}' has batch size {ifm.shape4d.n})"
    copies = upsampling_copies(op)
    if copies is not None:
        return copy_reason(ifm.shape4d, copies)
    reason = _shape_reason(op)
    if reason is not None:
        return reason
    size = op.inputs[1] if len(op.inputs) > 1 else None
    if size is None or size.data is None:
        return "The size tensor must be constant"
    values = [int(v) for v in size.data.reshape(-1)]
    if len(values) != 2 or tuple(values) != _hw(op.outputs[0]):
        return f"The size tensor must match the output tensor shape (size {values}, OFM {list(op.outputs[0].shape)})"
    if _flag(op, "align_corners") and _flag(op, "half_pixel_centers"):
        return "Both align_corners and half_pixel_centers can't be True"
    if op.type == "RESIZE_BILINEAR" and _flag(op, "half_pixel_centers"):
        (ih, iw), (oh, ow) = _hw(_ifm(op)), _hw(op.outputs[0])
        if not (ih == iw == 1 or (oh == 2 * ih and ow == 2 * iw)):
            return ("For half_pixel_centers the OFM W and H must be 2x the IFM's, or the IFM W and H both 1"
                    f" (IFM {list(_ifm(op).shape)}, OFM {list(op.outputs[0].shape)})")
    return None


def drop_identity_resizes(graph: Graph) -> tuple[Graph, Removed]:
    """Remove resizes whose OFM shape is their IFM's (Vela bypasses them)."""
    removed: list[tuple[str, str]] = []
    for op in [o for o in graph.ops if o.type in RESIZE_TYPES]:
        ifm, ofm = _ifm(op), op.outputs[0]
        if list(ifm.shape) != list(ofm.shape) or resize_reason(op) is not None or ofm in graph.outputs:
            continue
        graph = replace_tensor(without_op(graph, op), ofm, ifm)
        removed.append((op.name, f"{op.type} to the same shape does not move data"))
    return graph, tuple(removed)


def _name(op: Op) -> str:
    return str(op.options.get("npu_name", op.name))


def _const(name: str, values: np.ndarray, dtype: DataType, quant: Quantization | None) -> Tensor:
    data = np.ascontiguousarray(values.astype(np.dtype(dtype.value)))
    data.flags.writeable = False
    return Tensor(name, tuple(data.shape), dtype, quant, data)


def _zero_bias(name: str, channels: int) -> Tensor:
    return _const(name, np.zeros(channels), DataType.INT32, None)


def _add_to_zeros(op: Op) -> tuple[NpuOp, ...]:
    """A 1x1 IFM: OFM = zeros (OFM shape) + IFM broadcast."""
    ifm, ofm = _ifm(op), op.outputs[0]
    zeros = _const(f"{_name(op)}_zeros", np.zeros(ofm.shape), ifm.dtype, Quantization((1.0,), (0,)))
    return (
        NpuOp(
            name=f"{_name(op)}_add", tflite_type=op.type, op_type="Add", block_type=BlockType.ELEMENTWISE,
            ifm=zeros, ifm_shape=zeros.shape4d, ifm2=ifm, ifm2_shape=ifm.shape4d, ofm=ofm, ofm_shape=ofm.shape4d,
            activation=fused_activation(op.options), elementwise="ADD", source_index=op.index,
        ),
    )


def _half_pixel_bilinear(op: Op) -> tuple[NpuOp, ...]:
    """Bilinear 2x with half-pixel centres: a copy, then one 2x2 depthwise conv per output phase."""
    ifm, ofm = _ifm(op), op.outputs[0]
    name, shape = _name(op), ifm.shape4d
    inter = Tensor(f"{name}_intermediate", tuple(ifm.shape), ifm.dtype, ofm.quant)
    copy = NpuOp(
        name=f"{name}_rb_init_avgpool", tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING,
        ifm=ifm, ifm_shape=shape, ofm=inter, ofm_shape=shape, pool=PoolKind.AVERAGE, source_index=op.index,
    )
    ops = [copy]
    for index, kernel in enumerate(half_pixel_kernels(shape.h, shape.w)):
        weights = np.repeat((kernel * 16).reshape(1, 2, 2, 1), shape.c, axis=3)
        w = _const(f"{name}_depthwise_conv_{index}_weights", weights, ifm.dtype, Quantization((1.0 / 16,), (0,)))
        top, left, bottom, right = _PHASE_PADDING[index]
        ops.append(NpuOp(
            name=f"{name}_depthwise_conv_{index}", tflite_type=op.type, op_type="DepthwiseConv2DBias",
            block_type=BlockType.DEPTHWISE, ifm=inter, ifm_shape=shape, ofm=ofm, ofm_shape=ofm.shape4d,
            ofm_write_shape=shape,
            weights=w.data, weight_tensor=w, bias=np.zeros(shape.c, dtype=np.int32),
            bias_tensor=_zero_bias(f"{name}_depthwise_conv_{index}_bias", shape.c),
            kernel=Kernel(2, 2, padding=Padding(top=top, left=left, bottom=bottom, right=right)),
            activation=fused_activation(op.options), source_index=op.index,
        ))
    return tuple(ops)


def half_pixel_kernels(ifm_h: int, ifm_w: int) -> list[np.ndarray]:
    """The four 2x2 interpolation kernels (TL, TR, BL, BR phases) of a 2x half-pixel bilinear resize,
    as fractions (the weights are these times 16, scaled by 1/16)."""
    def frac(index: int, size: int) -> float:
        scaled = (index + 0.5) * (size / (2 * size)) - 0.5
        return scaled - max(np.floor(scaled), 0)

    kernels = []
    for y in (1, 2):
        for x in (1, 2):
            dy, dx = frac(y, ifm_h), frac(x, ifm_w)
            kernels.append(np.array([[dy * dx, dy * (1 - dx)], [(1 - dy) * dx, (1 - dy) * (1 - dx)]]))
    return kernels


def _steps(op: Op) -> tuple[int, int, int]:
    """(x2 steps, last kernel height, last kernel width)."""
    ifm, ofm = _ifm(op), op.outputs[0]
    (ih, iw), (oh, ow) = _hw(ifm), _hw(ofm)
    factor = int(max(axis_factors(op)))
    fh = 1 if oh == ih == 1 else factor
    fw = 1 if ow == iw == 1 else factor
    return max(1, factor.bit_length() - 1), fh, fw


def _upscale_chain(op: Op) -> tuple[NpuOp, ...]:
    """Nearest x2 steps; the last one averages (bilinear) or picks (nearest with corners) too."""
    ifm, ofm = _ifm(op), op.outputs[0]
    name, op_type = _name(op), _OP_TYPES[op.type]
    steps, fh, fw = _steps(op)
    source, shape = ifm, ifm.shape4d
    ops: list[NpuOp] = []
    for k in range(steps - 1):
        up = Shape4D(shape.n, shape.h * (2 if fh > 1 else 1), shape.w * (2 if fw > 1 else 1), shape.c)
        out = Tensor(f"{ofm.name}_{k}", (up.n, up.h, up.w, up.c), ofm.dtype, ofm.quant)
        ops.append(NpuOp(
            name=name if k == 0 else f"{name}_{k}", tflite_type=op.type, op_type=op_type,
            block_type=BlockType.POOLING, ifm=source, ifm_shape=shape, ofm=out, ofm_shape=up,
            pool=PoolKind.AVERAGE, source_index=op.index, resampling=Resampling.NEAREST,
        ))
        source, shape = out, up
    last_name = name if steps == 1 else f"{name}_{steps - 1}"
    ops.append(_last_step(op, last_name, source, shape, (fh, fw)))
    return tuple(ops)


def _last_step(op: Op, name: str, source: Tensor, shape: Shape4D, kernel_hw: tuple[int, int]) -> NpuOp:
    ofm = op.outputs[0]
    fh, fw = kernel_hw
    corners = _flag(op, "align_corners")
    nearest = NpuOp(
        name=name, tflite_type=op.type, op_type="ResizeNearestNeighbor", block_type=BlockType.POOLING,
        ifm=source, ifm_shape=shape, ofm=ofm, ofm_shape=ofm.shape4d, activation=fused_activation(op.options),
        pool=PoolKind.AVERAGE, source_index=op.index, resampling=Resampling.NEAREST,
    )
    if op.type == "RESIZE_BILINEAR":
        padding = Padding() if corners else Padding(bottom=fh - 1, right=fw - 1)
        return replace(nearest, op_type="ResizeBilinear", kernel=Kernel(fh, fw, padding=padding))
    if not corners:
        return nearest
    c = ofm.shape4d.c
    one_hot = np.zeros((1, fh, fw, c))
    one_hot[0, fh // 2, fw // 2, :] = 1
    w = _const(f"{name}_weights", one_hot, ofm.dtype, Quantization((1.0,), (0,)))
    return replace(nearest, op_type="DepthwiseConv2DBias", block_type=BlockType.DEPTHWISE, pool=PoolKind.NONE,
                   weights=w.data, weight_tensor=w, bias=np.zeros(c, dtype=np.int32),
                   bias_tensor=_zero_bias(f"{name}_bias", c), kernel=Kernel(fh, fw))


def convert_resize(op: Op) -> tuple[NpuOp, ...]:
    """RESIZE_NEAREST_NEIGHBOR / RESIZE_BILINEAR -> the NPU ops above."""
    ifm = _ifm(op)
    copies = upsampling_copies(op)
    if copies is not None:
        return convert_tile_copies(op, copies)
    if _hw(ifm) == (1, 1):
        return _add_to_zeros(op)
    if op.type == "RESIZE_BILINEAR" and _flag(op, "half_pixel_centers"):
        return _half_pixel_bilinear(op)
    return _upscale_chain(op)
