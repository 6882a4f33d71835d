"""The weight-stream estimate on hand-built volumes: the encoder's order and padding (exact), and
stream sizes derived from the codec's format. Each expected size was also checked against Vela
5.2.0's ``npu_encode_weights`` / ``mlw_codec.encode`` when it was written (no Vela needed here)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from npuplan.codec.size import palette_histogram, stream_bytes
from npuplan.codec.weight_order import EncodingOrder, StreamPadding, VolumeGeometry, stream_padding
from npuplan.cost.weights import encoding_order, estimate_volume_bytes
from npuplan.hw.accelerator import Block, accelerator
from npuplan.ir.lowered import BlockType

U55_128 = accelerator("ethos-u55-128")
NO_PADDING = StreamPadding(0, 0, (), ())


def test_palette_values_put_the_sign_in_the_lowest_bit():
    # 0 -> 0, 1 -> 2, -1 -> 3, 2 -> 4, -2 -> 5 (palette value 1, "-0", is never used)
    counts = palette_histogram(np.array([0, 1, -1, -1, 2, -2, -2, -2]))
    assert counts[:6].tolist() == [1, 0, 1, 2, 1, 3]


def test_depth_first_pads_the_ifm_to_whole_32_deep_blocks():
    # 16x16 fully connected, 8-bit IFM, micro-blocks 8 deep: per OFM micro-block (8 channels) two
    # 64-value tiles of weights then two zero tiles (IFM 16..31): 2 runs of 128, the last ends it
    padding = stream_padding(VolumeGeometry(1, 1, 16, False), 16, EncodingOrder(16))
    assert (padding.values, padding.real_values) == (512, 256)
    assert (padding.run_lengths, padding.run_counts, padding.final_run) == ((128,), (2,), 128)
    # a 16-bit IFM is read in 16-deep blocks: nothing to pad
    assert stream_padding(VolumeGeometry(1, 1, 16, False, ifm_bits=16), 16, EncodingOrder(16)).zeros == 0


def test_part_kernel_pads_ifm_micro_blocks_and_kernel_elements():
    # 3x3 kernel, IFM 4, 8 OFM channels: IFM 4 -> one 8-deep micro-block, 9 elements -> 12.
    # Per element 8 rows of [4 weights, 4 zeros]; the 9th element's last row runs into the three
    # padding elements: 71 runs of 4 and a final run of 4 + 3 * 64
    padding = stream_padding(VolumeGeometry(3, 3, 4, False), 8, EncodingOrder(8, part_kernel=True))
    assert (padding.values, padding.real_values) == (8 * 12 * 8, 8 * 9 * 4)
    assert (padding.run_lengths, padding.run_counts, padding.final_run) == ((4, 196), (71, 1), 196)


def test_depthwise_pads_elements_to_four_and_ofm_to_the_micro_block():
    # U55-32 (OFM micro-block 4 deep), 3 channels, 3x3: per element [w, w, w, 0], 9 -> 12 elements
    padding = stream_padding(VolumeGeometry(3, 3, 1, True, ofm_ublock_depth=4), 3, EncodingOrder(8))
    assert (padding.values, padding.real_values) == (48, 27)
    assert (padding.run_lengths, padding.run_counts, padding.final_run) == ((1, 13), (8, 1), 13)


def test_dilation_splits_the_kernel_into_sub_kernels_without_changing_the_count():
    plain = stream_padding(VolumeGeometry(5, 5, 8, False), 8, EncodingOrder(8))
    dilated = stream_padding(VolumeGeometry(5, 5, 8, False, dilation_x=2, dilation_y=2), 8, EncodingOrder(8))
    assert plain.values == dilated.values == 8 * 25 * 32
    assert len(plain.units) == 1 and len(dilated.units) == 4  # 4x4, 4x1, 1x4, 1x1 sub-kernels


def test_an_all_zero_stream_codes_one_value_and_one_long_run():
    # headers 23 + 13, a 2-entry palette of 2-bit entries, the zero as a 1-bit index, the run of
    # 999 zeros with divisor 3 (124 + 1 + 3 bits), end marker 3: 172 bits -> two 16-byte words
    assert stream_bytes(palette_histogram(np.zeros(1000, np.int8)), NO_PADDING) == 32


def test_two_values_code_one_bit_each():
    # 64 ones and 64 zeros: zeros are not 4x commoner, so no zero runs; the palette is {1, 0}
    # (2 entries of 2 bits), each value a 1-bit uncompressed index: 23 + 13 + 4 + 128 + 3 = 171 bits
    assert stream_bytes(palette_histogram(np.array([1] * 64 + [0] * 64)), NO_PADDING) == 32


def test_padding_zeros_are_coded_like_weights_when_they_do_not_dominate():
    # 16x16 FC of 3s: 256 threes and 256 padding zeros, palette {3, 0} with 3-bit entries, 512
    # 1-bit indices: 23 + 13 + 6 + 512 + 3 = 557 bits -> 80 bytes (the old estimate, blind to the
    # padding: 48)
    weights = np.full((16, 1, 1, 16), 3)
    assert estimate_volume_bytes(weights, U55_128, order=EncodingOrder(16)) == 80


def test_dominant_padding_zeros_are_coded_as_runs():
    # 16x4 FC of 3s: 64 threes, 448 zeros (> 4x), coded as runs: one 1-bit value each and runs of
    # 0 (in rows), 4 (between rows) and 196 (after each OFM micro-block): 80 bytes
    weights = np.full((16, 1, 1, 4), 3)
    assert estimate_volume_bytes(weights, U55_128, order=EncodingOrder(16)) == 80


@pytest.mark.parametrize("bits, expected", [(8, 176), (16, 96)])
def test_the_ifm_bit_depth_changes_the_stream(bits, expected):
    # the same 16x16 weights (7 values, no zeros): 8-bit IFMs double the stream with zeros (in
    # runs of 128, as Vela 5.2.0 codes it: 160 bytes); 16-bit ones do not (96 bytes)
    rng = np.random.default_rng(0)
    weights = rng.integers(-3, 4, size=(16, 1, 1, 16))
    weights[weights == 0] = 1
    assert estimate_volume_bytes(weights, U55_128, order=EncodingOrder(16), ifm_bits=bits) == expected


def test_encoding_order_comes_from_the_block_config():
    op = SimpleNamespace(block_type=BlockType.CONV, ofm_shape=SimpleNamespace(c=64))
    config = SimpleNamespace(ofm_block=Block(4, 4, 32), is_partkernel=True)
    assert encoding_order(op, config) == EncodingOrder(32, True)
    depthwise = SimpleNamespace(block_type=BlockType.DEPTHWISE, ofm_shape=SimpleNamespace(c=64))
    assert encoding_order(depthwise, config) == EncodingOrder(32, False)  # only convolutions
    assert encoding_order(op, None) == EncodingOrder(16, False)
