"""The order the weight encoder walks a core's weight volume in, and the zeros it pads it with.

The encoder does not compress the OHWI volume as stored: it walks it per OFM block (``block_depth``
channels), per IFM block, per sub-kernel (at most 8x8, 4x4 when dilated by 2), per micro-block, in
the order the NPU's datapath consumes it (``codec.brick_order`` builds that order and owns its
constants; this module counts its padding without building it, and a property test holds the two
equal), and fills every position the datapath reads but the
volume does not have with a zero:

- the OFM depth of each block rounded up to the OFM micro-block depth (4 on U55-32, else 8);
- depth-first: the IFM depth rounded up to whole IFM blocks (32 deep, 16 for 16-bit IFMs), so a
  16-channel fully connected layer codes twice its weights, a 3-channel first layer ~10 times;
- part-kernel-first: the IFM depth of each 16-deep IFM block rounded up to the IFM micro-block
  depth (8), and each sub-kernel's elements rounded up to 4 (2 for 16-bit IFMs);
- depthwise: each sub-kernel's elements rounded up to 4 (one IFM channel per OFM channel).

``stream_padding`` says how many zeros that adds and in which runs (the codec codes runs of
zeros apart from the values when zeros dominate, so the run lengths matter, not only the count).
It depends on the geometry alone, never on the weight values, and is memoised.
"""

from __future__ import annotations

import functools
from collections import Counter

import numpy as np
from npuplan.codec.brick_order import (DEPTH_FIRST_IFM_BLOCK, DEPTH_FIRST_IFM_BLOCK_16_BIT,
                                       DEPTHWISE_ELEMENT_MULTIPLE, PART_KERNEL_ELEMENT_MULTIPLE,
                                       PART_KERNEL_IFM_BLOCK)
from npuplan.records import record
from npuplan.units import round_up


@record
class EncodingOrder:
    """How the encoder walks an op's weights: the OFM block depth the op runs with (channels) and
    whether the traversal is part-kernel-first (convolutions only) rather than depth-first."""

    block_depth: int
    part_kernel: bool = False


@record
class VolumeGeometry:
    """What of a core's weight volume decides the encoder's order: kernel size (elements, not
    dilated), IFM depth the weights span (1 for depthwise), dilation, IFM element bits and the
    accelerator's micro-block depths (channels)."""

    kernel_height: int
    kernel_width: int
    ifm_depth: int
    depthwise: bool
    ifm_bits: int = 8
    dilation_x: int = 1
    dilation_y: int = 1
    ofm_ublock_depth: int = 8
    ifm_ublock_depth: int = 8
    sub_kernel_max: int = 8


@record
class StreamPadding:
    """The stream the encoder codes for ``ofm_depth`` channels: ``values`` positions in all, of
    which ``real_values`` come from the volume (more than its size when a block depth that is not
    a micro-block multiple makes blocks overlap), the rest zeros in maximal runs:
    ``run_lengths[k]`` zeros ``run_counts[k]`` times."""

    values: int
    real_values: int
    run_lengths: tuple[int, ...]
    run_counts: tuple[int, ...]
    final_run: int = 0
    units: tuple["UnitRuns", ...] = ()
    changes: tuple[tuple[int, int, int], ...] = ()
    last_unit: int = 0

    @property
    def zeros(self) -> int:
        return self.values - self.real_values

    @property
    def runs(self) -> int:
        return sum(self.run_counts)


@record
class UnitRuns:
    """One kind of (OFM block, IFM block, sub-kernel) unit of the stream: ``count`` of them, each
    with ``real_values`` weights and padding runs ``run_lengths[k]`` long ``run_counts[k]`` times.
    (The codec's search adapts its parameters along the stream, so kinds of unit with different
    padding are coded apart.)"""

    count: int
    real_values: int
    run_lengths: tuple[int, ...]
    run_counts: tuple[int, ...]


def _sub_kernels(size: int, most: int) -> list[int]:
    return [min(most, size - start) for start in range(0, size, most)]


def _unit_mask(geom: VolumeGeometry, part_kernel: bool, ofm_left: int, block_depth: int, ifm_left: int,
               sub_h: int, sub_w: int) -> np.ndarray:
    """Which positions of one (OFM block, IFM block, sub-kernel) unit hold a weight: the unit's
    loops as broadcast axes, ``ofm_left``/``ifm_left`` the channels from the block's start on."""
    oub, iub = geom.ofm_ublock_depth, geom.ifm_ublock_depth
    clipped_ofm = min(block_depth, ofm_left)
    ofm = (np.arange(0, clipped_ofm, oub)[:, None] + np.arange(oub)[None, :]) < ofm_left  # [ublock, z]
    elements = sub_h * sub_w
    if geom.depthwise:
        padded = round_up(elements, DEPTHWISE_ELEMENT_MULTIPLE)
        real_el = np.arange(padded) < elements
        return (ofm[:, None, :] & real_el[None, :, None]).ravel()  # [ofm ublock, element, ofm z]
    if part_kernel:
        padded = round_up(elements, PART_KERNEL_ELEMENT_MULTIPLE.get(geom.ifm_bits, 4))
        clipped_ifm = min(PART_KERNEL_IFM_BLOCK, ifm_left)
        ifm = np.arange(round_up(clipped_ifm, iub)).reshape(-1, iub) < ifm_left  # [ifm ublock, z]
        real_el = np.arange(padded) < elements
        # [ifm ublock, ofm ublock, element, ofm z, ifm z]
        return (ifm[:, None, None, None, :] & ofm[None, :, None, :, None]
                & real_el[None, None, :, None, None]).ravel()
    block = DEPTH_FIRST_IFM_BLOCK_16_BIT if geom.ifm_bits == 16 else DEPTH_FIRST_IFM_BLOCK
    ifm = np.arange(block).reshape(-1, iub) < ifm_left  # [ifm ublock, z]
    # [ofm ublock, element, ifm ublock, ofm z, ifm z]
    mask = ofm[:, None, None, :, None] & ifm[None, None, :, None, :]
    return np.broadcast_to(mask, (ofm.shape[0], elements, *mask.shape[2:])).ravel()


def _zero_runs(mask: np.ndarray) -> Counter[int]:
    """Lengths of the maximal runs of ``False`` in ``mask``."""
    edges = np.diff(np.concatenate(([1], mask.view(np.int8), [1])).astype(np.int8))
    starts, ends = np.flatnonzero(edges == -1), np.flatnonzero(edges == 1)
    return Counter(dict(zip(*np.unique(ends - starts, return_counts=True))))


@functools.lru_cache(maxsize=1 << 14)
def stream_padding(geom: VolumeGeometry, ofm_depth: int, order: EncodingOrder) -> StreamPadding:
    """The zeros the encoder adds to a ``ofm_depth``-channel volume of ``geom`` walked in ``order``.

    Each (OFM block, IFM block, sub-kernel) unit starts with a weight, so runs never span units:
    the stream's runs are the sum of its distinct units' runs, each unit's counted once.
    """
    block_depth = max(1, min(order.block_depth, ofm_depth))
    part_kernel = order.part_kernel and not geom.depthwise
    sequence_keys = _unit_keys(geom, ofm_depth, block_depth, part_kernel)
    kinds: dict[tuple[int, int, int, int], int] = {}
    shapes: list[tuple[int, int, tuple[tuple[int, int], ...], int]] = []
    for key in sequence_keys:
        if key not in kinds:
            kinds[key] = len(shapes)
            shapes.append(_unit_shape(geom, part_kernel, block_depth, key))
    sequence = [kinds[key] for key in sequence_keys]
    times = Counter(sequence)
    units: list[UnitRuns] = []
    runs: Counter[int] = Counter()
    for kind, (_, unit_real, unit_runs, _) in enumerate(shapes):
        for length, count in unit_runs:
            runs[length] += times[kind] * count
        units.append(UnitRuns(times[kind], unit_real, tuple(n for n, _ in unit_runs), tuple(c for _, c in unit_runs)))
    changes = Counter((a, b) for a, b in zip(sequence, sequence[1:]) if a != b)
    final_run = shapes[sequence[-1]][3]
    lengths = tuple(sorted(runs))
    return StreamPadding(
        values=sum(times[k] * shape[0] for k, shape in enumerate(shapes)),
        real_values=sum(u.count * u.real_values for u in units),
        run_lengths=lengths, run_counts=tuple(runs[n] for n in lengths), final_run=final_run,
        units=tuple(units), changes=tuple((a, b, n) for (a, b), n in sorted(changes.items())),
        last_unit=sequence[-1])


@functools.lru_cache(maxsize=1 << 14)
def _unit_shape(geom: VolumeGeometry, part_kernel: bool, block_depth: int, key: tuple[int, int, int, int],
                ) -> tuple[int, int, tuple[tuple[int, int], ...], int]:
    """One unit (``_unit_keys``): its positions, its weights, its runs of padding as ``(length,
    count)`` by length, and the zeros it ends with. Memoised: slices of other depths share units."""
    mask = _unit_mask(geom, part_kernel, key[0], block_depth, key[1], key[2], key[3])
    weights_at = np.flatnonzero(mask)
    trailing = int(mask.size - 1 - weights_at[-1]) if weights_at.size else 0
    unit_runs = _zero_runs(mask)
    return (int(mask.size), int(weights_at.size), tuple((int(n), int(unit_runs[n])) for n in sorted(unit_runs)),
            trailing)


def _unit_keys(geom: VolumeGeometry, ofm_depth: int, block_depth: int, part_kernel: bool,
               ) -> list[tuple[int, int, int, int]]:
    """The stream's units in order, each as (OFM channels left from the block's start, capped at
    the block depth in whole micro-blocks; IFM channels left, capped at the IFM block; sub-kernel
    height; sub-kernel width)."""
    if geom.depthwise:
        ifm_keys = [1]
    else:
        if part_kernel:
            ifm_block = PART_KERNEL_IFM_BLOCK
        else:
            ifm_block = DEPTH_FIRST_IFM_BLOCK_16_BIT if geom.ifm_bits == 16 else DEPTH_FIRST_IFM_BLOCK
        ifm_keys = [min(geom.ifm_depth - f, ifm_block) for f in range(0, max(geom.ifm_depth, 1), ifm_block)]
    ofm_cap = round_up(block_depth, geom.ofm_ublock_depth)
    ofm_keys = [min(ofm_depth - z, ofm_cap) for z in range(0, ofm_depth, block_depth)]
    sub_keys = [(h, w) for h in _sub_kernels(geom.kernel_height, geom.sub_kernel_max // geom.dilation_y)
                for w in _sub_kernels(geom.kernel_width, geom.sub_kernel_max // geom.dilation_x)]
    return [(o, f, h, w) for o in ofm_keys for f in ifm_keys for h, w in sub_keys]
