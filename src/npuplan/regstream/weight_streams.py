"""``npuplan validate FILE.tflite --weights``: each convolution's weight and scale streams checked
against what the hardware reads for it.

For every NPU_OP_CONV and NPU_OP_DEPTHWISE of every ethos-u operator, for each core (two on a
dual-core Ethos-U65-512: WEIGHT1_*/SCALE1_* hold the second core's streams):

1. the stream's bytes: WEIGHT_BASE/WEIGHT_LENGTH in WEIGHT_REGION; when that region's tensor is
   not one the file holds (the flash), the latest DMA before the operation that wrote those bytes
   (in this operator's stream or an earlier one's: a buffer may be filled for the next operator)
   names where they come from, followed until the flash;
2. the stream decoded by npuplan's decoder (``codec.decode``); a stream it cannot read is a
   violation;
3. the decoded count equals the weights the hardware reads: the length of the brick order
   (``codec.brick_order``) of the core's share of the operation, from the registers (OFM
   depth, kernel size and dilation, IFM depth, OFM block depth, part-kernel-first, IFM precision,
   depthwise) and the accelerator the payload's CONFIG word names (micro-block depths, cores); the
   values the order pads with (channels or kernel elements past the volume) decode to zero;
4. the scale stream holds one 10-byte record per OFM channel of the core's share, padded to 16
   bytes, each with its shift's two top bits clear.

A core takes every ``cores``-th OFM channel of the operation and its share of the OFM block depth
(Vela's layout, which npuplan's emitter follows). A stream shared by several operations (the
stripes of one convolution) is decoded once.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from npuplan.codec.brick_order import BrickGeometry, brick_indices
from npuplan.codec.decode import decode_weights
from npuplan.errors import ValidationError
from npuplan.hw.accelerator import ACCELERATORS, Accelerator
from npuplan.records import record
from npuplan.regstream.events import DmaEvent, NpuEvent, NpuStream, Range
from npuplan.units import ALIGN_BYTES

PRODUCTS = {0: False, 1: True}  # the CONFIG word's product: Ethos-U55, Ethos-U65 (is_u65)
SCALE_RECORD_BYTES = 10
SCALE_SHIFT_BYTE = 9  # a record's last byte: the 6-bit shift
SCALE_SHIFT_LIMIT = 64
_DECODED_MEMO = 64  # decoded streams kept for operations that share them


@record
class WeightReport:
    """What checking a file's weight streams decoded: convolution operations checked, distinct
    weight streams decoded and the weights (values) they hold."""

    operations: int
    streams: int
    weights: int


def accelerator_of_config(config: int) -> Accelerator:
    """The accelerator a driver payload's CONFIG word names: product (bits 28-31: 0 Ethos-U55, 1
    Ethos-U65) and log2 of the MACs per cycle over all cores (bits 0-3)."""
    product, macs_log2 = (config >> 28) & 0xF, config & 0xF
    for acc in ACCELERATORS.values():
        if PRODUCTS.get(product) == acc.is_u65 and (acc.macs_per_cycle * acc.cores).bit_length() - 1 == macs_log2:
            return acc
    raise ValidationError(f"the payload's CONFIG word {config:#010x} names no known accelerator "
                          f"(product {product}, {1 << macs_log2} MACs per cycle)")


@record
class CoreShare:
    """One core's part of an operation: its streams and what their sizes must be."""

    core: int
    weights: Range
    scales: Range
    channels: int  # OFM channels
    block_depth: int  # its share of the OFM block depth


def core_shares(e: NpuEvent, cores: int) -> list[CoreShare]:
    """Each core's share of ``e`` (a core with no channels or no block depth has no streams)."""
    assert e.weights is not None and e.scales is not None
    ranges = [(e.weights, e.scales)]
    if cores > 1:
        if e.weights1 is None or e.scales1 is None:
            raise ValidationError("a dual-core operation without the second core's WEIGHT1/SCALE1 registers")
        ranges.append((e.weights1, e.scales1))
    depth, block = e.ofm.depth, e.block[2]
    return [CoreShare(core, w, s, len(range(core, depth, cores)), (block + cores - 1 - core) // cores)
            for core, (w, s) in enumerate(ranges)]


@record
class _Place:
    """A byte range of one tensor of the file."""

    tensor: int
    address: int
    length: int

    def overlaps(self, other: _Place) -> bool:
        return (self.tensor == other.tensor and self.address < other.address + other.length
                and other.address < self.address + self.length)


class _Sources:
    """Where bytes of a tensor come from: every DMA so far, of every stream (a buffer an operator's
    stream filled may be read by a later operator's), by destination tensor."""

    def __init__(self, constants: dict[int, bytes]) -> None:
        self.constants = constants
        self.dmas: dict[int, list[tuple[int, _Place, _Place]]] = {}  # tensor -> (DMA index, destination, source)

    def add(self, e: DmaEvent, tensors: dict[int, int]) -> None:
        if e.dst.region in tensors and e.src.region in tensors:
            dst = _Place(tensors[e.dst.region], e.dst.address, e.dst.length)
            self.dmas.setdefault(dst.tensor, []).append((e.index, dst, _Place(tensors[e.src.region], e.src.address,
                                                                              e.src.length)))

    def constant(self, r: Range, tensors: dict[int, int]) -> _Place:
        """Where ``r`` (of a stream whose regions are ``tensors``) lies in a tensor the file holds:
        through the latest DMA that wrote any of it (which must have written all of it), and so on."""
        place = _Place(tensors.get(r.region, -1), r.address, r.length)
        for _ in range(len(self.dmas) + 1):
            if place.tensor in self.constants:
                return place
            found = next(((k, d, src) for k, d, src in reversed(self.dmas.get(place.tensor, [])) if d.overlaps(place)),
                         None)
            if found is None:
                break
            k, dst, src = found
            if not dst.address <= place.address <= place.address + place.length <= dst.address + dst.length:
                raise ValidationError(f"bytes {r.address}..{r.address + r.length} of region {r.region} are only "
                                      f"partly written by DMA {k}")
            place = _Place(src.tensor, src.address + place.address - dst.address, place.length)
        raise ValidationError(f"bytes {r.address}..{r.address + r.length} of region {r.region} come from no DMA "
                              f"out of the flash")


class _Checker:
    """The check of one file's weight streams, with the decoded streams it keeps for reuse."""

    def __init__(self, constants: dict[int, bytes]) -> None:
        self.sources = _Sources(constants)
        self.decoded: OrderedDict[_Place, np.ndarray] = OrderedDict()
        self.seen: set[_Place] = set()
        self.operations = self.weights = 0

    def values(self, place: _Place) -> np.ndarray:
        """The weights the stream at ``place`` decodes to (``ValueError`` if it does not)."""
        if place in self.decoded:
            self.decoded.move_to_end(place)
            return self.decoded[place]
        flash = self.sources.constants[place.tensor]
        if place.address + place.length > len(flash):
            raise ValueError(f"bytes {place.address}..{place.address + place.length} lie past the flash's "
                             f"{len(flash)} bytes")
        values = decode_weights(flash[place.address:place.address + place.length])
        if place not in self.seen:
            self.seen.add(place)
            self.weights += values.size
        self.decoded[place] = values
        if len(self.decoded) > _DECODED_MEMO:
            self.decoded.popitem(last=False)
        return values

    def stream(self, s: NpuStream, acc: Accelerator) -> None:
        """Checks every convolution of ethos-u operator stream ``s``."""
        for e in s.events:
            if isinstance(e, DmaEvent):
                self.sources.add(e, s.region_tensors)
            elif isinstance(e, NpuEvent) and e.weights is not None and e.scales is not None:
                try:
                    for share in core_shares(e, acc.cores):
                        self.share(e, share, s.region_tensors, acc)
                except ValidationError as error:
                    raise ValidationError(f"operator {s.operator}, NPU op {e.index} ({e.kind}): {error}") from None
                self.operations += 1

    def share(self, e: NpuEvent, share: CoreShare, tensors: dict[int, int], acc: Accelerator) -> None:
        """Checks one core's weight and scale streams of operation ``e``."""
        name = f"core {share.core}'s " if acc.cores > 1 else ""
        if not share.channels or not share.block_depth:
            if share.weights.length or share.scales.length:
                raise ValidationError(f"{name}streams are {share.weights.length} and {share.scales.length} bytes "
                                      f"for no OFM channels")
            return
        expected = -(-SCALE_RECORD_BYTES * share.channels // ALIGN_BYTES) * ALIGN_BYTES
        if share.scales.length != expected:
            raise ValidationError(f"{name}scale stream is {share.scales.length} bytes, {share.channels} OFM channels "
                                  f"take {expected}")
        self.scales(name, self.sources.constant(share.scales, tensors), share.channels)
        place = self.sources.constant(share.weights, tensors)
        try:
            values = self.values(place)
        except ValueError as error:
            raise ValidationError(f"{name}weight stream (flash bytes {place.address}..{place.address + place.length})"
                                  f" does not decode: {error}") from None
        _check_count(name, values, share_geometry(e, share, acc))

    def scales(self, name: str, place: _Place, channels: int) -> None:
        """The shift of each of the ``channels`` scale records at ``place`` fits its 6 bits."""
        flash = self.sources.constants[place.tensor]
        if place.address + place.length > len(flash):
            raise ValidationError(f"{name}scale stream at flash bytes {place.address}..{place.address + place.length}"
                                  f" lies past its {len(flash)} bytes")
        shifts = np.frombuffer(flash, dtype=np.uint8, count=SCALE_RECORD_BYTES * channels,
                               offset=place.address)[SCALE_SHIFT_BYTE::SCALE_RECORD_BYTES]
        bad = np.flatnonzero(shifts >= SCALE_SHIFT_LIMIT)
        if bad.size:
            raise ValidationError(f"{name}scale record {int(bad[0])} has shift byte {int(shifts[bad[0]])} "
                                  f"(6 bits)")


def share_geometry(e: NpuEvent, share: CoreShare, acc: Accelerator) -> BrickGeometry:
    """The brick geometry of a core's share of ``e``, from its registers."""
    dy, dx = e.dilation
    kh, kw = (e.kernel[0] - 1) // dy + 1, (e.kernel[1] - 1) // dx + 1
    depthwise = e.kind == "DepthWise"
    return BrickGeometry((share.channels, kh, kw, 1 if depthwise else e.ifm.depth), acc.ofm_ublock.depth,
                         acc.ifm_ublock.depth, share.block_depth, 8 * e.ifm.element_bytes, (dx, dy), depthwise,
                         e.part_kernel_first and not depthwise)


def _check_count(name: str, values: np.ndarray, geom: BrickGeometry) -> None:
    """The decoded ``values`` are as many as the brick order of ``geom`` lists, and zero where it pads."""
    indices = brick_indices(geom)
    if values.size != indices.size:
        o, h, w, i = geom.shape
        order = "depthwise" if geom.depthwise else "part-kernel-first" if geom.part_kernel_first else "depth-first"
        raise ValidationError(
            f"{name}weight stream decodes to {values.size} weights, the registers read {indices.size} ({o} OFM "
            f"channels, kernel {h}x{w} dilation {geom.dilation_xy[1]}x{geom.dilation_xy[0]}, IFM depth {i}, OFM block "
            f"depth {geom.ofm_block_depth}, {order}, {geom.ifm_bits}-bit IFM)")
    padding = np.flatnonzero(values[indices >= int(np.prod(geom.shape))])
    if padding.size:
        raise ValidationError(f"{name}weight stream decodes to a non-zero value where the brick order pads "
                              f"({padding.size} of them)")


def check_weight_streams(streams: Sequence[NpuStream], constants: dict[int, bytes]) -> WeightReport:
    """Checks the weight and scale streams of every convolution of ``streams`` (a validated file's
    ethos-u operators, in order; ``constants``: the bytes of the tensors among their regions that
    the file holds, by tensor index); ``ValidationError`` (one line, naming the operator and NPU
    operation) on a violation."""
    checker = _Checker(constants)
    for s in streams:
        try:
            acc = accelerator_of_config(s.config)
        except ValidationError as error:
            raise ValidationError(f"operator {s.operator}: {error}") from None
        checker.stream(s, acc)
    return WeightReport(checker.operations, len(checker.seen), checker.weights)
