"""A convolution's weights and per-channel scales, decoded from the streams its registers name.

The codec and the traversal order are npuplan's own (``emit.native.decode``, ``emit.native.brick_order``),
and which core reads what is ``regstream.weight_streams``' rule: on a dual-core Ethos-U65 each core
reads its own weight and scale streams (``WEIGHT_*``/``SCALE_*`` and ``WEIGHT1_*``/``SCALE1_*``)
and computes every second OFM channel of the operation (core ``k``: channels ``k, k + 2, ...``)
with half the OFM block depth; the streams list those channels in the brick order of that share.

A scale stream holds one 10-byte little-endian record per OFM channel of the share: a 40-bit
two's complement bias, a 32-bit unsigned multiplier and a 6-bit shift.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping

import numpy as np

from npuplan.codec.brick_order import BrickGeometry, brick_indices
from npuplan.codec.decode import decode_weights
from npuplan.errors import ValidationError
from npuplan.hw.accelerator import Accelerator
from npuplan.regstream.events import NpuEvent, Range
from npuplan.regstream.weight_streams import SCALE_RECORD_BYTES, CoreShare, core_shares, share_geometry
from npuplan.sim.scales import ChannelScales

_BIAS_BYTES = 5
_CACHED_WEIGHTS = 48 << 20  # decoded weights kept (int16: 96 MiB), ResNet-50 holds 23 M


def stream_bytes(regions: Mapping[int, np.ndarray], r: Range, label: str) -> bytes:
    """The bytes of range ``r`` as the regions hold them now."""
    region = regions.get(r.region)
    if region is None:
        raise ValidationError(f"{label} uses region {r.region}, which the operator does not provide")
    if r.address < 0 or r.address + r.length > region.size:
        raise ValidationError(f"{label} reads bytes {r.address}..{r.address + r.length} of region {r.region} "
                              f"({region.size} bytes)")
    return region[r.address:r.address + r.length].tobytes()


def scale_records(data: bytes, channels: int, label: str = "scale stream") -> tuple[np.ndarray, ...]:
    """Bias, multiplier and shift (int64 each) of the first ``channels`` records of a scale stream."""
    if len(data) < SCALE_RECORD_BYTES * channels:
        raise ValidationError(f"{label} is {len(data)} bytes, {channels} OFM channels take "
                              f"{SCALE_RECORD_BYTES * channels}")
    records = np.frombuffer(data, dtype=np.uint8, count=SCALE_RECORD_BYTES * channels).reshape(channels, -1)
    wide = np.zeros((channels, 8), dtype=np.uint8)
    wide[:, :_BIAS_BYTES] = records[:, :_BIAS_BYTES]
    bias = wide.view("<i8")[:, 0].copy()
    bias = np.where(bias >= 1 << 39, bias - (1 << 40), bias)
    scale = np.ascontiguousarray(records[:, _BIAS_BYTES:_BIAS_BYTES + 4]).view("<u4")[:, 0].astype(np.int64)
    shift = (records[:, SCALE_RECORD_BYTES - 1] & 0x3F).astype(np.int64)
    return bias, scale, shift


class _VolumeCache:
    """Decoded weight volumes (int16, read-only) by the stream's digest and brick geometry, across
    operations and command streams (a convolution's stripes, and the next inference, read the same
    streams), up to ``limit`` weights: the least recently used go first."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        self.volumes: OrderedDict[tuple[bytes, int, BrickGeometry], np.ndarray] = OrderedDict()

    def volume(self, data: bytes, geom: BrickGeometry) -> np.ndarray:
        """The OHWI volume stream ``data`` holds in the order of ``geom``; ``ValueError`` for a stream
        that does not decode, or decodes to another count than the order lists."""
        key = (hashlib.blake2b(data, digest_size=16).digest(), len(data), geom)
        found = self.volumes.get(key)
        if found is not None:
            self.volumes.move_to_end(key)
            return found
        values = decode_weights(data)
        indices = brick_indices(geom)
        if values.size != indices.size:
            raise ValueError(f"decodes to {values.size} weights, the registers read {indices.size} "
                             f"(volume {geom.shape}, OFM block depth {geom.ofm_block_depth})")
        size = int(np.prod(geom.shape))
        flat = np.zeros(size + 1, dtype=np.int16)
        flat[indices] = values
        volume = flat[:size].reshape(geom.shape)
        volume.flags.writeable = False
        self.volumes[key] = volume
        self.held += volume.size
        while self.held > self.limit and len(self.volumes) > 1:
            self.held -= self.volumes.popitem(last=False)[1].size
        return volume


_VOLUMES = _VolumeCache(_CACHED_WEIGHTS)


class WeightDecoder:
    """Decodes the weight and scale streams of an accelerator's operations."""

    def __init__(self, accelerator: Accelerator) -> None:
        self.accelerator = accelerator

    def volume(self, data: bytes, share: CoreShare, e: NpuEvent, label: str) -> np.ndarray:
        """One core's weights (OHWI, int64) from its stream's bytes."""
        try:
            return _VOLUMES.volume(data, share_geometry(e, share, self.accelerator)).astype(np.int64)
        except ValueError as error:
            raise ValidationError(f"{label} {error}" if str(error).startswith("decodes") else
                                  f"{label} does not decode: {error}") from None

    def operation(self, regions: Mapping[int, np.ndarray], e: NpuEvent) -> tuple[np.ndarray, ChannelScales]:
        """The weights (OFM depth, kernel h, kernel w, IFM depth; depthwise IFM depth 1) and the
        per-channel scales of convolution ``e``, every core's share put back in channel order."""
        cores = self.accelerator.cores
        shares = [s for s in core_shares(e, cores) if s.channels and s.block_depth]
        if not shares:
            raise ValidationError("a convolution with no OFM channel or no OFM block depth")
        parts = []
        for share in shares:
            name = f"core {share.core}'s " if cores > 1 else ""
            weights = self.volume(stream_bytes(regions, share.weights, f"{name}weight stream"), share, e,
                                  f"{name}weight stream")
            scales = scale_records(stream_bytes(regions, share.scales, f"{name}scale stream"), share.channels,
                                   f"{name}scale stream")
            parts.append((share.core, weights, scales))
        depth = e.ofm.depth
        out = np.zeros((depth, *parts[0][1].shape[1:]), dtype=np.int64)
        bias, scale, shift = (np.zeros(depth, dtype=np.int64) for _ in range(3))
        for core, weights, (b, m, s) in parts:
            channels = slice(core, depth, cores)
            out[channels], bias[channels], scale[channels], shift[channels] = weights, b, m, s
        return out, ChannelScales(bias=bias, scale=scale, shift=shift)
