"""The lowered graph: what lowering hands to the planner.

Each TFLite operator becomes zero or more ``NpuOp`` (one hardware operation each: a convolution,
a pooling, an elementwise op...) or one ``CpuOp`` that keeps the reason it cannot run on the NPU.
``NpuOp`` carries everything the block-config chooser, the weight encoder and the cost model need;
nothing downstream looks back at TFLite options.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field

import numpy as np

from npuplan._compat import StrEnum
from npuplan.ir.graph import Graph, Op, Signature, Tensor
from npuplan.ir.shape import Shape4D
from npuplan.ir.types import DataType, Quantization
from npuplan.records import record


class BlockType(StrEnum):
    """The NPU's kinds of operation (they select the datapath and the shared-buffer layout)."""

    CONV = "ConvolutionMxN"
    DEPTHWISE = "ConvolutionDepthWise"
    VECTOR_PRODUCT = "VectorProduct"
    POOLING = "Pooling"
    ELEMENTWISE = "ElementWise"
    REDUCE_SUM = "ReduceSum"


class Activation(StrEnum):
    """The activation applied in the NPU's output stage."""

    NONE = "none"
    RELU = "relu"
    RELU6 = "relu6"
    RELU_N1_TO_1 = "relu_n1_to_1"
    CLAMP = "clamp"  # min/max clipping other than the named ones
    TANH = "tanh"
    SIGMOID = "sigmoid"
    LUT = "lut"  # any table lookup (hard-swish, exp, ...)


# The real-valued range each named clamp keeps (None: unbounded on that side); the output stage
# clamps to it after quantizing the bounds with the output's scale and zero point.
CLAMP_RANGES: dict[Activation, tuple[float | None, float | None]] = {
    Activation.NONE: (None, None),
    Activation.RELU: (0.0, None),
    Activation.RELU6: (0.0, 6.0),
    Activation.RELU_N1_TO_1: (-1.0, 1.0),
}


class Resampling(StrEnum):
    """IFM upscaling done by the NPU while reading: none, nearest x2 (resize), transpose-conv x2
    (zeros inserted between the rows and columns)."""

    NONE = "none"
    NEAREST = "nearest"
    TRANSPOSE = "transpose"


class Rounding(StrEnum):
    """How the output stage rounds: TFLite's (double rounding, halves away from zero), to nearest
    with halves up (``natural``), or towards zero."""

    TFL = "tfl"
    NATURAL = "natural"
    TRUNCATE = "truncate"


class PoolKind(StrEnum):
    AVERAGE = "avg"
    MAX = "max"
    NONE = "none"


def element_type(tensor: Tensor) -> DataType:
    """The type the hardware reads and writes ``tensor``'s elements as: an int64 map (an ARG_MAX's
    indices) as its 32-bit halves, low first, in a view of twice the elements; others their own."""
    return DataType.INT32 if tensor.dtype == DataType.INT64 else tensor.dtype


@record
class Padding:
    """Explicit padding in elements."""

    top: int = 0
    left: int = 0
    bottom: int = 0
    right: int = 0


@record
class Kernel:
    """Kernel geometry. ``1x1`` with stride 1 for elementwise and vector-product ops."""

    height: int = 1
    width: int = 1
    stride_y: int = 1
    stride_x: int = 1
    dilation_y: int = 1
    dilation_x: int = 1
    padding: Padding = Padding()

    @property
    def dilated_height(self) -> int:
        return (self.height - 1) * self.dilation_y + 1

    @property
    def dilated_width(self) -> int:
        return (self.width - 1) * self.dilation_x + 1

    @property
    def elements(self) -> int:
        return self.height * self.width


@record(eq=False, slots=False)
class NpuOp:
    """One hardware operation.

    ``name`` is the TFLite name of the output tensor (Vela's per-layer ``Name``);
    ``tflite_type`` the TFLite operator it came from (``"CONV_2D"``); ``op_type`` Vela's internal
    operator name (``"Conv2DBias"``), shown for reference. Feature-map shapes are NHWC as the
    hardware sees them (a fully-connected input 1x1x1xK, a reshaped tensor in its new shape).
    ``weights`` is the constant weight array in OHWI order (depthwise: O=1, I=channels... see
    lowering), ``bias`` the int32/int64 bias values, one per output channel.
    """

    name: str
    tflite_type: str
    op_type: str
    block_type: BlockType
    ifm: Tensor
    ifm_shape: Shape4D
    ofm: Tensor
    ofm_shape: Shape4D
    ifm2: Tensor | None = None
    ifm2_shape: Shape4D | None = None
    weights: np.ndarray | None = field(default=None, repr=False)
    weight_tensor: Tensor | None = None
    bias: np.ndarray | None = field(default=None, repr=False)
    bias_tensor: Tensor | None = None
    kernel: Kernel = Kernel()
    activation: Activation = Activation.NONE
    pool: PoolKind = PoolKind.NONE
    elementwise: str | None = None  # "ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "SHL", "SHR", "ABS", ...
    ofm_write_offset: Shape4D | None = None  # concat: where this op writes inside ``ofm``
    ofm_write_shape: Shape4D | None = None  # the box written at ``ofm_write_offset`` (None: all of ``ofm_shape``)
    ofm_frame: Shape4D | None = None  # the view of all of ``ofm`` the write offset is in (None: its own shape)
    ifm_read_offset: Shape4D | None = None  # split/slice: where this op reads inside ``ifm``
    ifm2_read_offset: Shape4D | None = None  # ... and inside ``ifm2``
    # the view of all of ``ifm`` the read offset is in (None: its own shape), a reshape keeping the
    # tensor's rows (their bytes): the op reads whole rows of the view, which are the tensor's
    ifm_frame: Shape4D | None = None
    # a strided view (a phase of a dilated kernel, ``lowering.dilation_phases``; a mirrored band
    # of a MIRROR_PAD, step -1): the (rows, columns) element step between neighbours of the IFM
    # view in ``ifm``, from ``ifm_read_offset``, and of the OFM view in ``ofm``, from
    # ``ofm_write_offset`` (None: 1, 1)
    ifm_step: tuple[int, int] | None = None
    ofm_step: tuple[int, int] | None = None
    resampling: Resampling = Resampling.NONE  # upscaling of the IFM (x2 in H and W) before the kernel
    source_index: int = -1  # index of the TFLite operator it came from
    lut: np.ndarray | None = field(default=None, repr=False)  # a LUT activation's 256 entries (by input value)
    # explicit output scaling (multiplier, right shift), Vela's ExplicitScaling: an elementwise op's
    # output stage, or every channel's scale of a convolution (None: from the quantizations)
    rescale: tuple[int, int] | None = None
    # the operands were swapped to put the feature map first (``lowering.operands``): the hardware
    # computes IFM2 <op> IFM (its reversed-operands flag)
    reversed_operands: bool = False
    # a step of a fixed-point decomposition (a SOFTMAX's): its operands are raw integers, unscaled
    # (each keeps its tensor's zero point; an int32 one is read with zero point 0), the output
    # stage multiplies by ``rescale`` (1 without one) and rounds so; None: a quantized operation
    fixed_point: Rounding | None = None
    # a LUT activation fused into this op (``lowering.activations``): the quantization its output
    # stage writes, which the table maps to the OFM's (None: a standalone LUT op, whose output
    # stage keeps the IFM's, or no LUT)
    lut_input_quant: Quantization | None = None
    lut_source_index: int = -1  # that fused LUT activation's TFLite operator (its index; -1: none)
    # a TRANSPOSE's step: the OFM is written with its height and width strides swapped
    # (``writes_transposed``)
    transposed_write: bool = False
    # the kernel's padding repeats the IFM's edge rows and columns instead of zeros (Vela's TILE
    # padding: the IFM's tiles read the edge twice); the IFM is then NHCWB16 and read whole
    edge_padding: bool = False

    @property
    def output_stage_quant(self) -> Quantization | None:
        """The quantization the output stage scales to: the fused LUT's input, a standalone LUT
        op's IFM (the table does the rest), else the OFM's."""
        if self.lut_input_quant is not None:
            return self.lut_input_quant
        return self.ifm.quant if self.activation is Activation.LUT else self.ofm.quant

    @property
    def copies_into_box(self) -> bool:
        """Whether the op is a PAD or CONCATENATION lowered to a copy (a 1x1 average pool) of its
        input, or a constant fill, into a box of its OFM tensor (``ofm_shape`` is that box)."""
        return (self.tflite_type in ("PAD", "PADV2", "CONCATENATION") and self.op_type == "AvgPool"
                and self.ofm_write_offset is not None)

    @property
    def reads_at_offset(self) -> bool:
        """Whether the op reads a box of an input at an offset (a slice read without a copy)."""
        return self.ifm_read_offset is not None or self.ifm2_read_offset is not None

    @property
    def strided_views(self) -> bool:
        """Whether the op reads or writes a strided view (every ``step``-th row and column of a map
        from an offset): such maps stay NHWC and the op runs whole, in no cascade."""
        return self.ifm_step is not None or self.ofm_step is not None

    @property
    def writes_transposed(self) -> bool:
        """Whether the op writes its OFM with the height and width strides swapped (a TRANSPOSE's
        pools and tile convolutions, ``lowering.transposes``; not its channel permutations): the
        rows it walks are the tensor's columns, even when the map is square."""
        return self.transposed_write

    @property
    def pointwise(self) -> bool:
        """Whether every OFM element comes from the input elements at its own place only, each
        read in the block that writes it: an elementwise op, or a pool copying element for element
        (a RELU or requantising copy lowered to a pool: 1x1 kernel, stride 1, no padding, no
        upscaling, not written transposed). Such an op may write its OFM over an input it reads
        whole, in the same element order (``schedule.model.inplace``, the validator's rule)."""
        if self.block_type is BlockType.ELEMENTWISE:
            return True
        k = self.kernel
        return (self.block_type is BlockType.POOLING and (k.height, k.width, k.stride_y, k.stride_x) == (1, 1, 1, 1)
                and k.padding == Padding() and self.upscale == 1 and not self.writes_transposed)

    @property
    def upscale(self) -> int:
        """How many OFM-space rows (and columns) each IFM row (column) becomes before the kernel."""
        return 1 if self.resampling is Resampling.NONE else 2

    @property
    def has_weights(self) -> bool:
        return self.weights is not None

    __hash__ = object.__hash__  # identity, hashed in C (a Python __hash__ slows every memo key)


@record(eq=False, slots=False)
class CpuOp:
    """A TFLite operator left to the CPU, with the reason it cannot run on the NPU."""

    op: Op
    reason: str

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def tflite_type(self) -> str:
        return self.op.type

    __hash__ = object.__hash__  # identity, hashed in C (a Python __hash__ slows every memo key)


LoweredOp = NpuOp | CpuOp


def reads(op: LoweredOp) -> tuple[Tensor, ...]:
    """The tensors ``op`` reads (an NPU op's feature maps and constants, a CPU op's inputs)."""
    found = (op.ifm, op.ifm2) if isinstance(op, NpuOp) else op.op.inputs
    return tuple(t for t in found if t is not None)


def readers_by_tensor(ops: Sequence[LoweredOp]) -> dict[int, list[LoweredOp]]:
    """The ops of ``ops`` reading each tensor (by ``id``), in order; an op reading a tensor as
    both operands is listed twice."""
    readers: dict[int, list[LoweredOp]] = {}
    for op in ops:
        for t in reads(op):
            readers.setdefault(id(t), []).append(op)
    return readers


def writes(op: LoweredOp) -> tuple[Tensor, ...]:
    """The tensors ``op`` writes."""
    return (op.ofm,) if isinstance(op, NpuOp) else op.op.outputs


class Placement(StrEnum):
    NPU = "npu"
    CPU = "cpu"


@record(eq=False, slots=False)
class Partition:
    """A maximal run of consecutive ops with the same placement."""

    placement: Placement
    ops: tuple[LoweredOp, ...]


@record(eq=False, slots=False)
class LoweredGraph:
    """The lowered network in execution order, with its inputs and outputs.

    ``tflite_op_count`` is how many TFLite operators the source subgraph had and
    ``removed`` the TFLite operators lowering removed as no-ops (name, reason). ``subgraphs`` are
    the model's other subgraphs, as they are: not planned, but what the main one's CPU operators
    may call (CALL_ONCE's initialiser of resource variables), so an emitted file keeps them.
    """

    name: str
    ops: tuple[LoweredOp, ...]
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    tflite_op_count: int = 0
    removed: tuple[tuple[str, str], ...] = ()
    subgraphs: tuple[Graph, ...] = ()
    signatures: tuple[Signature, ...] = ()  # the model's signature defs, for an emitted file to keep

    @property
    def npu_ops(self) -> tuple[NpuOp, ...]:
        return tuple(op for op in self.ops if isinstance(op, NpuOp))

    @property
    def cpu_ops(self) -> tuple[CpuOp, ...]:
        return tuple(op for op in self.ops if isinstance(op, CpuOp))

    def partitions(self) -> tuple[Partition, ...]:
        parts: list[Partition] = []
        for op in self.ops:
            placement = Placement.NPU if isinstance(op, NpuOp) else Placement.CPU
            if parts and parts[-1].placement == placement:
                parts[-1] = Partition(placement, parts[-1].ops + (op,))
            else:
                parts.append(Partition(placement, (op,)))
        return tuple(parts)
