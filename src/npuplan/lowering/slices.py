"""Operators that read or write sub-regions of feature maps, lowered to 1x1 average-pool copies.

- SLICE, STRIDED_SLICE: one copy reading the box at its offset (strides in height and width as the
  pool's stride; batch and channel strides must be 1, as in Vela);
- SPLIT, SPLIT_V, UNPACK: one copy per output, each reading its slice of the input;
- PACK: one copy per input, each writing its slot of the output (as CONCATENATION does).

Boxes are worked out on the tensors' 4D views (a tensor of rank r < 4 is padded with leading 1s),
so an axis ``a`` of a rank-r tensor is axis ``a + 4 - r`` of its view. Copies are named as Vela
names them (``<name>_avgpool``, ``<name><i>_avgpool``).
"""

from __future__ import annotations

from dataclasses import replace

from npuplan.ir.graph import Op, Tensor
from npuplan.ir.lowered import Activation, BlockType, Kernel, LoweredOp, NpuOp, Padding, PoolKind, readers_by_tensor
from npuplan.ir.shape import Shape4D

SLICE_TYPES = frozenset({"SLICE", "STRIDED_SLICE", "SPLIT", "SPLIT_V", "UNPACK", "PACK"})


def _axis4(axis: int, rank: int) -> int:
    return axis % rank + 4 - rank


def _read(op: Op, name: str, src: Tensor, box: Shape4D, offset: Shape4D, dst: Tensor,
          stride: tuple[int, int] = (1, 1)) -> NpuOp:
    return NpuOp(
        name=name, tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING, ifm=src, ifm_shape=box,
        ofm=dst, ofm_shape=dst.shape4d, kernel=Kernel(stride_y=stride[0], stride_x=stride[1]),
        pool=PoolKind.AVERAGE, ifm_read_offset=offset, source_index=op.index,
    )


def _ints(t: Tensor | None) -> list[int]:
    assert t is not None and t.data is not None
    return [int(v) for v in t.data.reshape(-1)]


def strided_box(op: Op) -> tuple[list[int], list[int], list[int]]:
    """(begin, extent, stride) per 4D axis of the read of a SLICE or STRIDED_SLICE. A negative
    stride reads backwards: its box starts at the lowest index read."""
    src = op.inputs[0]
    assert src is not None
    rank = len(src.shape)
    dims = list(src.shape)
    if op.type == "SLICE":
        begin, size = _ints(op.inputs[1]), _ints(op.inputs[2])
        extent = [d - b if n == -1 else n for b, n, d in zip(begin, size, dims)]
        stride = [1] * rank
    else:
        begin, end, stride = _ints(op.inputs[1]), _ints(op.inputs[2]), _ints(op.inputs[3])
        o = op.options
        bmask, emask, shrink = (int(o.get(k, 0)) for k in ("begin_mask", "end_mask", "shrink_axis_mask"))
        extent = []
        for axis in range(rank):
            d = dims[axis]
            b = 0 if bmask >> axis & 1 else begin[axis] % d if begin[axis] < 0 else min(begin[axis], d)
            e = b + 1 if shrink >> axis & 1 else d if emask >> axis & 1 else end[axis] % d if end[axis] < 0 else min(end[axis], d)
            if stride[axis] < 0 and shrink >> axis & 1:
                stride[axis] = 1
            elif stride[axis] < 0:  # backwards from b (highest) down to just above e (lowest, may be -1)
                b = d - 1 if bmask >> axis & 1 else min(begin[axis] + d if begin[axis] < 0 else begin[axis], d - 1)
                e = -1 if emask >> axis & 1 else max(end[axis] + d if end[axis] < 0 else end[axis], -1)
                count = max(0, -(-(b - e) // -stride[axis]))
                b, e = b - (count - 1) * -stride[axis], b + 1  # the box from the lowest index read
            begin[axis] = b
            extent.append(max(e - b, 0))
    pad = 4 - rank
    return [0] * pad + begin, [1] * pad + extent, [1] * pad + stride


def slice_reason(op: Op) -> str | None:
    """Why a slicing or packing op stays on the CPU, or None."""
    src = op.inputs[0] if op.type not in ("SPLIT",) else (op.inputs[1] if len(op.inputs) > 1 else None)
    if op.type == "PACK":
        return _pack_reason(op)
    if src is None or len(src.shape) == 0 or len(src.shape) > 4:
        return "IFM must be 1D to 4D"
    if any(t.dtype != src.dtype for t in op.outputs):
        return "IFM and OFM data types must match"
    if any(t.quant != src.quant for t in op.outputs):
        return "IFM and OFM quantization must match (a slice only moves data)"
    if op.type in ("SLICE", "STRIDED_SLICE"):
        return _box_reason(op)
    if op.type in ("SPLIT", "SPLIT_V"):
        axis_tensor = op.inputs[0] if op.type == "SPLIT" else (op.inputs[2] if len(op.inputs) > 2 else None)
        if axis_tensor is None or axis_tensor.data is None or axis_tensor.data.size != 1:
            return "Axis must be constant"
        if op.type == "SPLIT_V" and (op.inputs[1] is None or op.inputs[1].data is None):
            return "Size splits must be constant"
        return _parts_reason(src, int(axis_tensor.data.reshape(-1)[0]), op.outputs, keep_rank=True)
    if op.type == "UNPACK":
        return _parts_reason(src, int(op.options.get("axis", 0)), op.outputs, keep_rank=False)
    return None


def _parts_reason(src: Tensor, axis: int, parts: tuple[Tensor, ...], *, keep_rank: bool) -> str | None:
    """Why the outputs of a split or unpack do not tile its input along ``axis``, or None."""
    rank = len(src.shape)
    if not -rank <= axis < rank:
        return f"Axis value must be in the range [-{rank}, {rank}) (it is {axis})"
    axis %= rank
    rest = [d for i, d in enumerate(src.shape) if i != axis]
    sizes = []
    for part in parts:
        shape = list(part.shape)
        if keep_rank:
            if len(shape) != rank or [d for i, d in enumerate(shape) if i != axis] != rest:
                return f"Each output must match the input outside the split axis ({list(part.shape)})"
            sizes.append(shape[axis])
        elif shape != rest:
            return f"Each output must be the input without the unpacked axis ({list(part.shape)})"
        else:
            sizes.append(1)
    if sum(sizes) != src.shape[axis]:
        return f"The outputs must add up to the input along the axis ({sum(sizes)} of {src.shape[axis]})"
    return None


def _box_reason(op: Op) -> str | None:
    consts = op.inputs[1:]
    if any(t is None or t.data is None for t in consts):
        return "Begin, end/size and stride tensors must be constant"
    rank = len(op.inputs[0].shape) if op.inputs[0] is not None else 0
    if any(t is not None and t.data is not None and t.data.size != rank for t in consts):
        return f"Begin, end/size and stride tensors must have one value per input axis ({rank})"
    if op.type == "STRIDED_SLICE":
        o = op.options
        if int(o.get("ellipsis_mask", 0)) or int(o.get("new_axis_mask", 0)):
            return "ellipsis_mask and new_axis_mask must be 0"
        if bool(o.get("offset", False)):
            return "Offset attribute must be False"
    begin, extent, stride = strided_box(op)
    if stride[0] != 1 or stride[3] != 1:
        return f"Batch and channel stride values must be 1 (strides {stride})"
    if not all(1 <= abs(s) <= 3 for s in stride[1:3]):
        return f"Height and width strides must be in the range [1, 3] or [-3, -1] (strides {stride})"
    if stride[1] < 0 and stride[2] < 0:
        return f"Only one of height and width may be read backwards (strides {stride})"
    if any(e <= 0 for e in extent):
        return "The slice must not be empty"
    return None


def _pack_reason(op: Op) -> str | None:
    out = op.outputs[0]
    axis = int(op.options.get("axis", 0))
    if not 1 <= len(out.shape) <= 5 or (len(out.shape) == 5 and axis % 5 < 3):
        return "OFM must be 1D to 4D, or 5D stacked along its last two axes (its 4-D view's width or depth)"
    if not -len(out.shape) <= axis < len(out.shape) or out.shape[axis] != len(op.inputs):
        return f"The OFM must stack the {len(op.inputs)} inputs along axis {axis} ({list(out.shape)})"
    slot = [d for i, d in enumerate(out.shape) if i != axis % len(out.shape)]
    if any(t is not None and list(t.shape) != slot for t in op.inputs):
        return f"Every input must have the shape {slot}"
    if any(t is None or t.is_constant or t.dtype != out.dtype or t.quant != out.quant for t in op.inputs):
        return "Inputs must be feature maps of the OFM's data type and quantization"
    return None


def convert_slice(op: Op) -> tuple[NpuOp, ...]:
    """SLICE / STRIDED_SLICE -> one strided copy of the box."""
    src, dst = op.inputs[0], op.outputs[0]
    assert src is not None
    begin, extent, stride = strided_box(op)
    if min(stride) < 0:
        return _backwards(op, begin, extent, stride)
    read = Shape4D(*[(e - 1) // s * s + 1 for e, s in zip(extent, stride)])  # rows the stride reaches
    return (_read(op, f"{op.name}_avgpool", src, read, Shape4D(*begin), dst, (stride[1], stride[2])),)


def _backwards(op: Op, begin: list[int], extent: list[int], stride: list[int]) -> tuple[NpuOp, ...]:
    """A slice reading height or width backwards -> one strided copy per output row or column,
    from the last one read to the first (the NPU walks its maps forwards only)."""
    src, dst = op.inputs[0], op.outputs[0]
    assert src is not None
    axis = 1 if stride[1] < 0 else 2
    step = -stride[axis]
    read = [(e - 1) // abs(s) * abs(s) + 1 for e, s in zip(extent, stride)]
    read[axis] = 1
    slot = dst.shape4d.as_list()
    slot[axis] = 1
    ops = []
    for j in range((extent[axis] - 1) // step + 1):
        at, to = list(begin), [0, 0, 0, 0]
        at[axis], to[axis] = begin[axis] + extent[axis] - 1 - j * step, j
        copy = _read(op, f"{op.name}{j}_avgpool", src, Shape4D(*read), Shape4D(*at), dst,
                     (abs(stride[1]) if axis == 2 else 1, abs(stride[2]) if axis == 1 else 1))
        ops.append(replace(copy, ofm_write_offset=Shape4D(*to), ofm_write_shape=Shape4D(*slot)))
    return tuple(ops)


def convert_split(op: Op) -> tuple[NpuOp, ...]:
    """SPLIT / SPLIT_V / UNPACK -> one copy per output, reading consecutive slices along the axis."""
    if op.type == "SPLIT":
        src, axis = op.inputs[1], _ints(op.inputs[0])[0]
    elif op.type == "SPLIT_V":
        src, axis = op.inputs[0], _ints(op.inputs[2])[0]
    else:
        src, axis = op.inputs[0], int(op.options.get("axis", 0))
    assert src is not None
    a4 = _axis4(axis, len(src.shape))
    view = src.shape4d.as_list()
    ops: list[NpuOp] = []
    position = 0
    for i, out in enumerate(op.outputs):
        box = list(view)
        box[a4] = 1 if op.type == "UNPACK" else out.shape[axis % len(src.shape)]
        offset = [0, 0, 0, 0]
        offset[a4] = position
        position += box[a4]
        ops.append(_read(op, f"{out.name}_avgpool" if op.type != "UNPACK" else f"{op.name}{i}_avgpool",
                         src, Shape4D(*box), Shape4D(*offset), out))
    return tuple(ops)


def convert_pack(op: Op) -> tuple[NpuOp, ...]:
    """PACK -> one copy per input writing its slot (size 1 along the new axis) of the output."""
    out = op.outputs[0]
    a4 = _axis4(int(op.options.get("axis", 0)), len(out.shape))
    slot = out.shape4d.as_list()
    slot[a4] = 1
    ops: list[NpuOp] = []
    for i, t in enumerate(x for x in op.inputs if x is not None):
        offset = [0, 0, 0, 0]
        offset[a4] = i
        ops.append(NpuOp(
            name=f"{op.name}{i}_avgpool", tflite_type=op.type, op_type="AvgPool", block_type=BlockType.POOLING,
            ifm=t, ifm_shape=Shape4D(*slot), ofm=out, ofm_shape=out.shape4d, pool=PoolKind.AVERAGE,
            ofm_write_offset=Shape4D(*offset), ofm_write_shape=Shape4D(*slot), source_index=op.index,
        ))
    return tuple(ops)


# ---------------------------------------------------------------- transpose
# ---------------------------------------------------------------- reads without copies
_READ_COPIES = frozenset({"SLICE", "STRIDED_SLICE", "SPLIT", "SPLIT_V", "UNPACK"})
_OFFSET_READERS = frozenset({BlockType.CONV, BlockType.DEPTHWISE, BlockType.POOLING, BlockType.ELEMENTWISE,
                             BlockType.VECTOR_PRODUCT})
_STEPPING_READERS = frozenset({BlockType.CONV, BlockType.DEPTHWISE, BlockType.POOLING})


def _fusable_copy(op: NpuOp) -> bool:
    return (op.tflite_type in _READ_COPIES and op.ifm_read_offset is not None and op.ofm_write_offset is None
            and op.kernel.stride_y == op.kernel.stride_x == 1 and op.ifm_shape == op.ofm_shape)


def _strided_copy(op: NpuOp) -> bool:
    """A STRIDED_SLICE's copy stepping forwards over rows or columns: a 1x1 kernel reading every
    ``stride``-th element of its box."""
    return (op.tflite_type == "STRIDED_SLICE" and op.ifm_read_offset is not None and op.ofm_write_offset is None
            and op.ifm_frame is None and (op.kernel.stride_y, op.kernel.stride_x) != (1, 1) and min(op.kernel.stride_y, op.kernel.stride_x) >= 1
            and op.kernel.elements == 1 and op.kernel.padding == Padding() and op.ifm_step is None
            and op.upscale == 1 and op.activation is Activation.NONE and op.ifm.quant == op.ofm.quant
            and op.ifm.dtype == op.ofm.dtype)


def reads_slices_in_place(ops: tuple[LoweredOp, ...]) -> bool:
    """Whether a fully-connected layer of ``ops`` reads a slice where it lies (``fuse_slice_reads``)."""
    return any(isinstance(o, NpuOp) and o.block_type is BlockType.VECTOR_PRODUCT and o.ifm_read_offset is not None
               for o in ops)


def fuse_slice_reads(ops: tuple[LoweredOp, ...], outputs: tuple[Tensor, ...], *,
                     vector_products: bool = True) -> tuple[LoweredOp, ...]:
    """Drop each slice copy whose readers can read the slice where it lies: they take the copy's
    source and read offset instead (as Vela's split/slice reads do). A copy stays when its output
    is a network output, is read by the CPU, through another view, as both operands of one op or by
    an op that cannot read at an offset (without ``vector_products``, a fully-connected layer: its
    copy lets the source die early, which a plan for the least memory may want)."""
    readers = readers_by_tensor(ops)
    kept_outputs = {id(t) for t in outputs}
    rewired: dict[int, NpuOp] = {}
    dropped: set[int] = set()
    for copy in ops:
        if not isinstance(copy, NpuOp) or id(copy.ofm) in kept_outputs:
            continue
        users = readers.get(id(copy.ofm), [])
        if _strided_copy(copy) and users and all(_steps_as_copy(u, copy) for u in users):
            for user in users:
                assert isinstance(user, NpuOp)
                rewired[id(user)] = _stepping(rewired.get(id(user), user), copy)
            dropped.add(id(copy))
            continue
        if not _fusable_copy(copy) or not users or not all(_reads_as_view(u, copy, vector_products) for u in users):
            continue
        for user in users:
            assert isinstance(user, NpuOp)
            current = rewired.get(id(user), user)
            if current.ifm is copy.ofm:
                current = replace(current, ifm=copy.ifm, ifm_read_offset=copy.ifm_read_offset, ifm_frame=copy.ifm_frame)
            if current.ifm2 is copy.ofm:
                current = replace(current, ifm2=copy.ifm, ifm2_read_offset=copy.ifm_read_offset)
            rewired[id(user)] = current
        dropped.add(id(copy))
    return tuple(rewired.get(id(op), op) for op in ops if id(op) not in dropped)  # type: ignore[arg-type]


def _reads_as_view(user: LoweredOp, copy: NpuOp, vector_products: bool = True) -> bool:
    """Whether ``user`` reads the copy's output through the copy's own view (as first or second
    operand, not both), so it can read the source box instead."""
    if not isinstance(user, NpuOp) or user.block_type not in _OFFSET_READERS or _fusable_copy(user):
        return False
    if user.block_type is BlockType.VECTOR_PRODUCT and not vector_products:
        return False
    first = user.ifm is copy.ofm and user.ifm_read_offset is None and user.ifm_shape == copy.ofm_shape
    second = (user.ifm2 is copy.ofm and user.ifm2_read_offset is None and user.ifm2_shape == copy.ofm_shape
              and copy.ifm_frame is None)  # a second operand is read in its tensor's own view
    return first != second if (user.ifm is copy.ofm and user.ifm2 is copy.ofm) else first or second


def _steps_as_copy(user: LoweredOp, copy: NpuOp) -> bool:
    """Whether ``user`` is a 1x1 kernel of stride 1 (a pointwise convolution or pool) reading the
    whole strided copy as its only feature map: it can step over the source as the copy does
    (Vela reads a strided slice in place through the IFM strides)."""
    if not isinstance(user, NpuOp) or user.block_type not in _STEPPING_READERS or user.ifm2 is copy.ofm:
        return False
    k = user.kernel
    return (user.ifm is copy.ofm and user.ifm_read_offset is None and user.ifm_shape == copy.ofm_shape
            and k.elements == 1 and (k.stride_y, k.stride_x, k.dilation_y, k.dilation_x) == (1, 1, 1, 1)
            and k.padding == Padding() and user.upscale == 1 and user.ifm_step is None and not _strided_copy(user)
            and not _fusable_copy(user))


def _stepping(user: NpuOp, copy: NpuOp) -> NpuOp:
    """``user`` reading the copy's elements where they lie: a strided view of the copy's source
    (``NpuOp.ifm_step``) from the copy's read offset, of the copy's output shape."""
    return replace(user, ifm=copy.ifm, ifm_read_offset=copy.ifm_read_offset,
                   ifm_step=(copy.kernel.stride_y, copy.kernel.stride_x))
