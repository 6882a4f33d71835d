"""The native weight codec (``npuplan.codec.encode``) against Vela's and against itself.

(a) our decoder reads Vela's stream (``npu_encode_weights``) as exactly our brick order of the
volume: the reorder and the decoder agree with the reference; (b) our stream decodes to the same
values (round trip, no Vela needed); (c) bias records byte-identical to ``npu_encode_bias``;
(d) a seeded property test of the round trip on random volumes. Volumes: the bundled models'
weights as the planner lowers them, with geometries covering the accelerators, both traversals,
depthwise, dilation 2, 16-bit IFMs and odd shapes; and the volumes the emitter encodes.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npuplan.codec.brick_order import BrickGeometry, brick_order
from npuplan.codec.decode import decode_weights
from npuplan.codec.encode import encode_biases, encode_values, encode_weights
from npuplan.hw.accelerator import ACCELERATORS

DATA = Path(__file__).resolve().parents[2] / "data"
MODELS = ("ds_cnn_kws", "mobilenet_v1_025_96", "resnet8_cifar")
MAX_CHANNELS = 40  # volumes cut to their first channels: the decoder walks the stream in Python
U55_128 = {"accelerator_config": "ethos-u55-128", "system_config": "Ethos_U55_High_End_Embedded",
           "memory_mode": "Shared_Sram"}


@functools.lru_cache(maxsize=None)
def model_volumes(model: str) -> tuple[tuple[np.ndarray, bool, int], ...]:
    """(OHWI volume minus zero point, depthwise, IFM bits) of each weighted op the planner lowers."""
    from npuplan.api import plan
    from npuplan.emit.weights import _ohwi
    from npuplan.ir.lowered import BlockType

    planned = plan(DATA / f"{model}.tflite", **U55_128)
    found = []
    for op in planned.lowered.npu_ops:
        if op.weights is not None and np.asarray(op.weights).dtype.itemsize == 1:
            volume = np.ascontiguousarray(_ohwi(op)[:MAX_CHANNELS].astype(np.int16))
            found.append((volume, op.block_type is BlockType.DEPTHWISE, op.ifm.dtype.bits))
    return tuple(found)


def _odd_volumes() -> list[tuple[str, np.ndarray]]:
    """Odd shapes cut or tiled from real weights: 1x1, 7x7, IFM depth 1, 3 and 20, one OFM channel."""
    real = np.concatenate([v.ravel() for v, _, _ in model_volumes("resnet8_cifar")])

    def take(shape: tuple[int, ...], offset: int) -> np.ndarray:
        return np.resize(np.roll(real, -offset), shape).astype(np.int16)

    return [("1x1", take((24, 1, 1, 40), 0)), ("7x7", take((9, 7, 7, 5), 11)), ("depth1", take((16, 3, 3, 1), 7)),
            ("depth3", take((10, 3, 3, 3), 3)), ("depth20", take((19, 3, 1, 20), 5)), ("one_ofm", take((1, 5, 2, 7), 1)),
            ("9x9", take((3, 9, 9, 4), 2))]


ACCEL_NAMES = ("ethos-u55-32", "ethos-u55-64", "ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u65-512")


def _geometries() -> list[tuple[str, dict[str, Any]]]:
    """Encoder arguments (besides the volume) covering each accelerator, traversal, block depth
    (micro-block multiples or not), dilation 2 and 16-bit IFMs."""
    cases = []
    for n, name in enumerate(ACCEL_NAMES):
        arch = ACCELERATORS[name]
        for pkf in (False, True):
            block = (8, 16, 24, 12, 64, 3)[(n + pkf) % 6]
            cases.append((f"{name}-{'pkf' if pkf else 'df'}-b{block}",
                          dict(ofm_ublock_depth=arch.ofm_ublock.depth, ifm_ublock_depth=arch.ifm_ublock.depth,
                               ofm_block_depth=block, part_kernel_first=pkf, dilation_xy=(1, 1), ifm_bits=8)))
    cases.append(("dilated", dict(ofm_ublock_depth=8, ifm_ublock_depth=8, ofm_block_depth=16, part_kernel_first=False,
                                  dilation_xy=(2, 2), ifm_bits=8)))
    cases.append(("dilated-x-16bit-pkf", dict(ofm_ublock_depth=8, ifm_ublock_depth=8, ofm_block_depth=32,
                                              part_kernel_first=True, dilation_xy=(2, 1), ifm_bits=16)))
    cases.append(("16bit-df", dict(ofm_ublock_depth=4, ifm_ublock_depth=8, ofm_block_depth=20, part_kernel_first=False,
                                   dilation_xy=(1, 2), ifm_bits=16)))
    return cases


def _cases() -> list[Any]:
    out = []
    geometries = _geometries()
    for model in MODELS:
        for i, (volume, depthwise, bits) in enumerate(model_volumes(model)):
            name, args = geometries[i % len(geometries)]
            args = dict(args, depthwise=depthwise, ifm_bits=max(bits, args["ifm_bits"]))
            if depthwise:
                args["part_kernel_first"] = False
            out.append(pytest.param(volume, args, id=f"{model}-{i}-{name}"))
    for shape_name, volume in _odd_volumes():
        for name, args in geometries[::3]:
            out.append(pytest.param(volume, dict(args, depthwise=False), id=f"{shape_name}-{name}"))
        if volume.shape[3] == 1:
            out.append(pytest.param(volume, dict(geometries[4][1], depthwise=True, part_kernel_first=False),
                                    id=f"{shape_name}-depthwise"))
    return out


def _order(volume: np.ndarray, args: dict[str, Any]) -> np.ndarray:
    return brick_order(volume, BrickGeometry(volume.shape, args["ofm_ublock_depth"], args["ifm_ublock_depth"],
                                             args["ofm_block_depth"], args["ifm_bits"], args["dilation_xy"],
                                             args["depthwise"], args["part_kernel_first"]))


@pytest.fixture(scope="module")
def vela():
    from npuplan.emit.vela import vela_api
    from npuplan.errors import EmitError

    try:
        return vela_api()
    except EmitError as error:
        pytest.skip(f"Vela's API (the deploy extra) is not installed: {error}")


def _vela_stream(api: Any, volume: np.ndarray, args: dict[str, Any]) -> bytes:
    ublocks = {(4, 8): api.NpuAccelerator.Ethos_U55_32, (8, 8): api.NpuAccelerator.Ethos_U55_64}
    accel = ublocks[(args["ofm_ublock_depth"], args["ifm_ublock_depth"])]
    traversal = api.NpuBlockTraversal.PART_KERNEL_FIRST if args["part_kernel_first"] else api.NpuBlockTraversal.DEPTH_FIRST
    return bytes(api.npu_encode_weights(accel, volume, args["dilation_xy"], args["ifm_bits"], args["ofm_block_depth"],
                                        args["depthwise"], traversal))


@pytest.mark.parametrize(("volume", "args"), _cases())
def test_round_trip(volume, args):
    stream = encode_weights(volume, **args)
    assert len(stream) % 16 == 0
    np.testing.assert_array_equal(decode_weights(stream), _order(volume, args))


@pytest.mark.parametrize(("volume", "args"), _cases())
def test_decodes_velas_stream_to_our_order(vela, volume, args):
    np.testing.assert_array_equal(decode_weights(_vela_stream(vela, volume, args)), _order(volume, args))


@functools.lru_cache(maxsize=None)
def _emitted_calls(model: str, options: tuple[tuple[str, str], ...]) -> tuple[tuple[Any, ...], ...]:
    """The distinct ``npu_encode_weights`` arguments the emitter passes for a bundled model."""
    from npuplan.api import plan_and_emit
    from npuplan.emit.backend import EmitBackend
    from npuplan.emit import weights as emit_weights

    calls: dict[tuple[object, ...], tuple[Any, ...]] = {}
    original = emit_weights.SliceMemo.encode

    def recording(self, api, key, arguments):
        def recorded():
            args = arguments()
            calls.setdefault((args[0], args[1].shape, args[1].tobytes(), *args[2:]), args)
            return args
        return original(self, api, key, recorded)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(emit_weights.SliceMemo, "encode", recording)
        plan_and_emit(DATA / f"{model}.tflite", backend=EmitBackend.VELA, **dict(options))
    return tuple(calls.values())


EMITTED = [("ds_cnn_kws", U55_128),
           ("mobilenet_v1_025_96", {**U55_128, "accelerator_config": "ethos-u55-32"}),
           ("resnet8_cifar", {"accelerator_config": "ethos-u65-512", "system_config": "Ethos_U65_High_End",
                              "memory_mode": "Dedicated_Sram_384KB"})]


@pytest.mark.parametrize(("model", "options"), EMITTED, ids=[f"{m}-{o['accelerator_config']}" for m, o in EMITTED])
def test_the_emitters_volumes(vela, model, options):
    """Every distinct volume the emitter encodes: Vela's stream decodes to our order, ours too."""
    calls = _emitted_calls(model, tuple(sorted(options.items())))
    assert calls
    arch = next(a for a in ACCELERATORS.values() if a.vela_name == calls[0][0].name)
    for accel, volume, dilation, bits, block_depth, depthwise, traversal in calls:
        if volume.size > 40000:  # the Python decoder is slow; the bench covers the big ones
            volume = np.ascontiguousarray(volume[:MAX_CHANNELS])
        args = dict(ofm_ublock_depth=arch.ofm_ublock.depth, ifm_ublock_depth=arch.ifm_ublock.depth,
                    dilation_xy=dilation, ifm_bits=bits, ofm_block_depth=block_depth, depthwise=depthwise,
                    part_kernel_first=traversal == vela.NpuBlockTraversal.PART_KERNEL_FIRST)
        order = _order(volume, args)
        vela_stream = bytes(vela.npu_encode_weights(accel, volume, dilation, bits, block_depth, depthwise, traversal))
        np.testing.assert_array_equal(decode_weights(vela_stream), order)
        np.testing.assert_array_equal(decode_weights(encode_weights(volume, **args)), order)


def test_bias_records_match_velas(vela):
    rng = np.random.default_rng(5)
    bias = np.concatenate([rng.integers(-(1 << 39), 1 << 39, 60), [-(1 << 39), (1 << 39) - 1, 0, -1]])
    multiplier = np.concatenate([rng.integers(0, 1 << 32, 60), [0, (1 << 32) - 1, 1, 1 << 31]])
    shift = np.concatenate([rng.integers(0, 64, 60), [0, 63, 1, 31]])
    ours = encode_biases(bias, multiplier, shift)
    velas = b"".join(bytes(vela.npu_encode_bias(np.int64(b), int(m), int(s))) for b, m, s in zip(bias, multiplier, shift))
    assert ours == velas


def test_bias_records_reject_out_of_range_values():
    with pytest.raises(ValueError, match="40-bit"):
        encode_biases([1 << 39], [1], [0])
    with pytest.raises(ValueError, match="32-bit"):
        encode_biases([0], [-1], [0])
    with pytest.raises(ValueError, match="0..63"):
        encode_biases([0], [1], [64])


def test_the_encoder_rejects_what_the_format_cannot_hold():
    volume = np.ones((8, 3, 3, 8), dtype=np.int16)
    args = dict(ofm_ublock_depth=8, ifm_ublock_depth=8, ifm_bits=8, ofm_block_depth=8)
    with pytest.raises(ValueError, match="dilation"):
        encode_weights(volume, dilation_xy=(3, 1), depthwise=False, part_kernel_first=False, **args)
    with pytest.raises(ValueError, match="depthwise"):
        encode_weights(volume[..., :1], dilation_xy=(1, 1), depthwise=True, part_kernel_first=True, **args)
    with pytest.raises(ValueError, match="-255..255"):
        encode_values(np.array([256]))


def test_long_and_empty_streams():
    """More values than one slice holds (several slice headers), with and without zero runs."""
    rng = np.random.default_rng(3)
    dense = rng.integers(-20, 21, 70000)
    sparse = np.where(rng.random(80000) < 0.9, 0, rng.integers(-255, 256, 80000))
    for values in (dense, sparse):
        np.testing.assert_array_equal(decode_weights(encode_values(values)), values)
    assert encode_values(np.zeros(0, dtype=np.int16)) == b""


@pytest.mark.parametrize("values", [np.arange(-100, 100), np.where(np.arange(600) % 7, 0, 3), np.full(40, 9)])
def test_a_stream_cut_short_is_rejected(values):
    """Cut at any 16-byte boundary, a stream ends inside a field or without its end marker."""
    stream = encode_values(values)
    for end in range(0, len(stream), 16):
        if end:
            with pytest.raises(ValueError, match="end"):
                decode_weights(stream[:end])
    np.testing.assert_array_equal(decode_weights(stream), values)


def _values() -> st.SearchStrategy[np.ndarray]:
    """Random streams: all zero, one value, narrow or wide (-255..255) ranges, long zero runs."""
    def build(args: tuple[int, int, int, float, int]) -> np.ndarray:
        size, seed, width, zeros, kind = args
        rng = np.random.default_rng(seed)
        if kind == 0:
            return np.zeros(size, dtype=np.int16)
        if kind == 1:
            return np.full(size, rng.integers(-255, 256), dtype=np.int16)
        values = rng.integers(-width, width + 1, size)
        if kind == 3:  # long runs of zeros between short bursts
            runs = rng.integers(0, 2000, size=max(1, size // 50))
            values = np.concatenate([np.concatenate([np.zeros(r, dtype=np.int64), values[i * 3:i * 3 + 3]])
                                     for i, r in enumerate(runs)])[:max(size, 1)]
        return np.where(rng.random(values.size) < zeros, 0, values).astype(np.int16)

    return st.tuples(st.integers(1, 6000), st.integers(0, 2**32 - 1), st.sampled_from([1, 2, 7, 40, 128, 255]),
                     st.sampled_from([0.0, 0.5, 0.8, 0.97]), st.integers(0, 3)).map(build)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_values())
def test_round_trip_property(values):
    stream = encode_values(values)
    assert len(stream) % 16 == 0
    np.testing.assert_array_equal(decode_weights(stream), values)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.tuples(st.integers(1, 40), st.sampled_from([1, 2, 3, 5, 7, 9]), st.sampled_from([1, 2, 3, 5, 7, 9]),
                 st.integers(1, 70), st.integers(1, 70), st.booleans(), st.booleans(), st.sampled_from([8, 16]),
                 st.sampled_from([(1, 1), (2, 2), (1, 2)]), st.sampled_from([(4, 8), (8, 8)]), st.integers(0, 99)))
def test_round_trip_on_random_geometries(case):
    o, h, w, i, block, depthwise, pkf, bits, dilation, ublocks, seed = case
    rng = np.random.default_rng(seed)
    volume = rng.integers(-255, 256, (o, h, w, 1 if depthwise else i)).astype(np.int16)
    args = dict(ofm_ublock_depth=ublocks[0], ifm_ublock_depth=ublocks[1], ofm_block_depth=block, ifm_bits=bits,
                dilation_xy=dilation, depthwise=depthwise, part_kernel_first=pkf and not depthwise)
    np.testing.assert_array_equal(decode_weights(encode_weights(volume, **args)), _order(volume, args))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(1, 3000), st.integers(0, 2**32 - 1))
def test_the_step_scan_walks_as_the_loop(rows, seed):
    """The chunk schedule's prefix scan of clamps gives what walking the rows one by one gives."""
    from npuplan.codec import chunks

    rng = np.random.default_rng(seed)
    low = rng.integers(-20, 20, rows)
    high = low + rng.integers(0, 9, rows)
    y, walked = 0, []
    for lo, hi in zip(low, high):
        y = min(hi, max(lo, y))
        walked.append(y)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chunks, "_PLAY_LOOP_ROWS", 0)
        np.testing.assert_array_equal(chunks._play(low, high), walked)
    np.testing.assert_array_equal(chunks._play(low, high), walked)


def _slice_headers(stream: bytes) -> list[tuple[int, int]]:
    """(value count, zero-run divisor field) of each slice of a stream, read with the decoder's own
    header and slice readers."""
    from npuplan.codec import decode

    bits, position, palette, found = decode._Bits(stream), 0, None, []
    while bits.field(position, 3) != decode.END_OF_STREAM:
        header, position = decode._read_header(bits, position + 3)
        if header.new_palette:
            palette, position = decode._read_palette(bits, position)
        _, position = decode._slice(bits, position, header, palette)
        found.append((header.count, header.zero_run_divisor if header.zero_runs else -1))
    return found


def test_zero_runs_only_where_they_code_in_fewer_bits():
    """Near-uniform 8-bit weights with padding zeros more than 4 times as common as any value: a
    run symbol per weight would cost a ninth bit, so the zeros are coded as values (8 bits each)."""
    rng = np.random.default_rng(5)
    values = np.concatenate([np.concatenate([rng.integers(-127, 128, 784), np.zeros(16, dtype=np.int64)])
                             for _ in range(64)]).astype(np.int16)
    stream = encode_values(values)
    assert [z for _, z in _slice_headers(stream)] == [-1, -1]  # 51200 values: two slices, no zero runs
    assert len(stream) <= values.size + 32
    np.testing.assert_array_equal(decode_weights(stream), values)


def test_a_stretch_of_long_zero_runs_gets_a_divisor_of_its_own():
    """Weights with few zeros, then a stretch of weights each followed by a 31-zero run (an IFM
    depth padded to a whole block), then weights again: the padding stretch is a slice with zero-run
    divisor 8, the rest divisor 1, fewer bits than any one divisor."""
    rng = np.random.default_rng(6)
    dense = lambda n: np.where(rng.random(n) < 0.05, 0, rng.integers(-127, 128, n))  # noqa: E731
    padded = np.concatenate([np.concatenate([rng.integers(1, 128, 1), np.zeros(31, dtype=np.int64)])
                             for _ in range(200)])
    values = np.concatenate([dense(12000), padded, dense(8000)]).astype(np.int16)
    stream = encode_values(values)
    headers = _slice_headers(stream)
    assert [z for _, z in headers] == [0, 3, 0]
    assert 190 <= headers[1][0] <= 230
    np.testing.assert_array_equal(decode_weights(stream), values)
