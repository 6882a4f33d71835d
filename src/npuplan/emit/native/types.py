"""The operation records npuplan's own emitting backend takes: the subset of the public Ethos-U
operation interface (``ethosu.vela.api``) that ``emit.operations`` fills in, with the same type,
member and attribute names, so the translation runs unchanged against either backend.

These are the emitter's hand-off records, built attribute by attribute (as the interface is) and
read once by the generator, so they are mutable records (``record(frozen=False)``: a dataclass's
fields, its ``__init__`` made on first use) rather than frozen values; the operations keep a
``__dict__`` (no slots) as the interface's do, since the emitter sets the attributes of one kind on
all (``reversed_operands``, ``rescale``). Like the interface's classes they compare by identity
(``eq=False``): nothing compares two of them. As ``dataclass`` classes they cost every emit's
start-up ~20 M instructions (compiling each one's ``__init__`` and ``__repr__``).
"""

from __future__ import annotations

from dataclasses import field
from enum import Enum
from typing import NamedTuple

from npuplan.records import record


class NpuAccelerator(Enum):
    Ethos_U55_32 = "ethos-u55-32"
    Ethos_U55_64 = "ethos-u55-64"
    Ethos_U55_128 = "ethos-u55-128"
    Ethos_U55_256 = "ethos-u55-256"
    Ethos_U65_256 = "ethos-u65-256"
    Ethos_U65_512 = "ethos-u65-512"


class NpuElementWiseOp(Enum):
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    ABS = "abs"
    MIN = "min"
    MAX = "max"
    LRELU = "lrelu"
    CLZ = "clz"
    SHR = "shr"
    SHL = "shl"


class NpuPoolingOp(Enum):
    MAX = "max"
    AVERAGE = "average"
    REDUCE_SUM = "reduce_sum"


class NpuActivationOp(Enum):
    NONE_OR_RELU = "clamp"  # clamps the output to [min, max]
    TANH = "tanh"
    SIGMOID = "sigmoid"
    TABLE_LOOKUP = "lut"  # the table in slot ``lookup_table_index``


class NpuRoundingMode(Enum):
    TFL = "tfl"  # TensorFlow Lite's: to nearest, halves away from zero after the doubling multiply
    TRUNCATE = "truncate"
    NATURAL = "natural"  # to nearest, halves up


class NpuLayout(Enum):
    NHWC = "nhwc"
    NHCWB16 = "nhcwb16"


class NpuResamplingMode(Enum):
    NONE = "none"
    NEAREST = "nearest"  # each IFM element read as a 2x2 block
    TRANSPOSE = "transpose"  # each IFM element at the top left of a 2x2 block of zeros


class NpuBlockTraversal(Enum):
    DEPTH_FIRST = "depth_first"
    PART_KERNEL_FIRST = "part_kernel_first"


class NpuDataType(Enum):
    """A feature map's element type: value ``(bits, signed)``."""

    UINT8 = (8, False)
    INT8 = (8, True)
    UINT16 = (16, False)
    INT16 = (16, True)
    INT32 = (32, True)

    def is_signed(self) -> bool:
        return self.value[1]

    def size_in_bits(self) -> int:
        return self.value[0]

    def size_in_bytes(self) -> int:
        return self.value[0] // 8

    def min_value(self) -> int:
        return -(1 << (self.value[0] - 1)) if self.value[1] else 0

    def max_value(self) -> int:
        return (1 << (self.value[0] - 1)) - 1 if self.value[1] else (1 << self.value[0]) - 1


class NpuAccumulatorType(Enum):
    Default = "default"
    Int32 = "int32"
    Int40 = "int40"


class NpuAddressRange(NamedTuple):
    """Bytes ``address .. address + length`` of memory region ``region`` (0..7)."""

    region: int
    address: int
    length: int


class NpuTileBox(NamedTuple):
    """A feature map's up to four tiles: tile 0 ``height_0`` x ``width_0``, tile 1 beside it (rows
    ``height_1``), tiles 2 and 3 below; ``addresses`` their four base addresses (0 when unused)."""

    height_0: int
    height_1: int
    width_0: int
    addresses: list[int]


class NpuShape3D(NamedTuple):
    height: int
    width: int
    depth: int


class NpuQuantization(NamedTuple):
    scale_f32: float | None
    zero_point: int


class NpuPadding(NamedTuple):
    top: int
    left: int
    bottom: int
    right: int


@record
class ExplicitScaling:
    """An explicit output scale in place of a pooling's float ``rescale``: ``multiplier[k] *
    2**-shift[k]`` (one entry unless ``per_channel``)."""

    per_channel: bool
    shift: list[int]
    multiplier: list[int]


@record(eq=False, frozen=False)
class NpuActivation:
    op_type: NpuActivationOp
    min: float | None = None
    max: float | None = None
    lookup_table_index: int = 0


@record(eq=False, frozen=False)
class NpuFeatureMap:
    data_type: NpuDataType = NpuDataType.UINT8
    region: int = 0
    shape: NpuShape3D = NpuShape3D(0, 0, 0)
    tiles: NpuTileBox = NpuTileBox(0, 0, 0, [0, 0, 0, 0])
    quantization: NpuQuantization | None = None
    layout: NpuLayout = NpuLayout.NHWC
    strides: NpuShape3D | None = None  # bytes between rows, columns and channels (NHCWB16: bricks)
    name: str | None = None


@record(eq=False, frozen=False)
class NpuKernel:
    width: int
    height: int
    stride_x: int = 1
    stride_y: int = 1
    dilation_x: int = 1
    dilation_y: int = 1


class NpuOperationType(Enum):
    Dma = "dma"
    Conv2D = "conv2d"
    ConvDepthWise = "depthwise"
    Pooling = "pooling"
    ElementWise = "elementwise"


@record(eq=False, frozen=False, slots=False)
class NpuDmaOperation:
    src: NpuAddressRange
    dest: NpuAddressRange
    channel: int = 0
    mode: int = 0
    name: str | None = None
    op_type: NpuOperationType = NpuOperationType.Dma


@record(eq=False, frozen=False, slots=False)
class NpuBlockOperation:
    """What every operation that writes an OFM carries."""

    op_type: NpuOperationType
    ifm: NpuFeatureMap | None = None
    ifm2: NpuFeatureMap | None = None
    ifm2_scalar: float | None = None
    ofm: NpuFeatureMap | None = None
    kernel: NpuKernel | None = None
    weights: list[NpuAddressRange] = field(default_factory=list)
    biases: list[NpuAddressRange] = field(default_factory=list)
    padding: NpuPadding | None = None
    activation: NpuActivation | None = None
    block_config: NpuShape3D | None = None
    rounding_mode: NpuRoundingMode = NpuRoundingMode.TFL
    fused_quantize: bool = False
    ifm_upscale: NpuResamplingMode = NpuResamplingMode.NONE
    accumulator_type: NpuAccumulatorType = NpuAccumulatorType.Default
    name: str | None = None


@record(eq=False, frozen=False, slots=False)
class NpuConv2DOperation(NpuBlockOperation):
    op_type: NpuOperationType = NpuOperationType.Conv2D
    block_traversal: NpuBlockTraversal = NpuBlockTraversal.PART_KERNEL_FIRST


@record(eq=False, frozen=False, slots=False)
class NpuConvDepthWiseOperation(NpuBlockOperation):
    op_type: NpuOperationType = NpuOperationType.ConvDepthWise


@record(eq=False, frozen=False, slots=False)
class NpuPoolingOperation(NpuBlockOperation):
    sub_op_type: NpuPoolingOp = NpuPoolingOp.MAX
    rescale: float | ExplicitScaling | None = None

    def __init__(self, pooling_op_type: NpuPoolingOp) -> None:
        NpuBlockOperation.__init__(self, NpuOperationType.Pooling)
        self.sub_op_type = pooling_op_type
        self.rescale = None


@record(eq=False, frozen=False, slots=False)
class NpuElementWiseOperation(NpuBlockOperation):
    sub_op_type: NpuElementWiseOp = NpuElementWiseOp.ADD
    reversed_operands: bool = False
    rescale: tuple[int, int] | None = None

    def __init__(self, elementwise_op_type: NpuElementWiseOp) -> None:
        NpuBlockOperation.__init__(self, NpuOperationType.ElementWise)
        self.sub_op_type = elementwise_op_type
        self.reversed_operands = False
        self.rescale = None


NpuOperation = NpuDmaOperation | NpuBlockOperation
