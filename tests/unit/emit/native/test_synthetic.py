"""The native generator against Vela's on hand-built API operations covering what the emitter's
networks rarely or never use: four-tile and NHCWB16 feature maps, explicit strides, dilation,
upscaling, 16-bit data, a scalar IFM2, broadcasts, reversed operands, REDUCE_SUM, a LUT loaded by
DMA into the shared buffer, forced accumulators, and every accelerator. Skipped without Vela."""

from __future__ import annotations

import pytest

ACCELERATORS = ["Ethos_U55_32", "Ethos_U55_64", "Ethos_U55_128", "Ethos_U55_256", "Ethos_U65_256", "Ethos_U65_512"]


def _fm(api, address, h, w, d, *, dtype="INT8", layout="NHWC", region=1, tiles=None, strides=None):
    fm = api.NpuFeatureMap()
    fm.data_type = getattr(api.NpuDataType, dtype)
    fm.region = region
    fm.shape = api.NpuShape3D(height=h, width=w, depth=d)
    fm.tiles = tiles or api.NpuTileBox(height_0=h, height_1=0, width_0=w, addresses=[address, 0, 0, 0])
    fm.layout = getattr(api.NpuLayout, layout)
    fm.strides = strides
    fm.quantization = api.NpuQuantization(scale_f32=0.25, zero_point=3)
    return fm


def _block(api, op, acc, *, prefer=-1):
    from npuplan.emit.native.api import find_block_configs

    blocks = find_block_configs(op, acc)
    assert blocks == [(b.height, b.width, b.depth) for b in api.npu_find_block_configs(op, acc)]
    h, w, d = blocks[prefer]
    op.block_config = api.NpuShape3D(height=h, width=w, depth=d)
    return op


def _conv(api, acc, ifm, ofm, *, kernel=(3, 3, 1, 1, 1, 1), weights=0x100, part_kernel=False, upscale="NONE"):
    op = api.NpuConv2DOperation()
    op.ifm, op.ofm = ifm, ofm
    op.kernel = api.NpuKernel(*kernel)
    op.padding = api.NpuPadding(top=1, left=1, bottom=1, right=1)
    cores = 2 if acc.name == "Ethos_U65_512" else 1
    op.weights = [api.NpuAddressRange(region=0, address=weights + 0x400 * k, length=256) for k in range(cores)]
    op.biases = [api.NpuAddressRange(region=0, address=weights + 0x1000 + 0x100 * k, length=160) for k in range(cores)]
    op.block_traversal = getattr(api.NpuBlockTraversal, "PART_KERNEL_FIRST" if part_kernel else "DEPTH_FIRST")
    op.ifm_upscale = getattr(api.NpuResamplingMode, upscale)
    return _block(api, op, acc)


def _operations(api, acc):
    """A small network of unusual operations; each reads what the one before wrote somewhere."""
    ops = []
    tiles = api.NpuTileBox(height_0=4, height_1=6, width_0=5, addresses=[0x0, 0x2000, 0x4000, 0x6000])
    four = _fm(api, 0, 10, 10, 16, tiles=tiles)
    ops.append(_conv(api, acc, four, _fm(api, 0x10000, 10, 10, 32, layout="NHCWB16")))
    ops.append(_conv(api, acc, _fm(api, 0x10000, 10, 10, 32, layout="NHCWB16"),
                     _fm(api, 0x20000, 5, 5, 24), kernel=(3, 3, 2, 2, 2, 2), part_kernel=True, weights=0x3000))
    up = _conv(api, acc, _fm(api, 0x20000, 5, 5, 24), _fm(api, 0x30000, 10, 10, 8), kernel=(2, 2, 1, 1, 1, 1),
               upscale="NEAREST", weights=0x6000)
    ops.append(up)
    dw = api.NpuConvDepthWiseOperation()
    dw.ifm = _fm(api, 0x30000, 10, 10, 8, strides=api.NpuShape3D(depth=1, height=160, width=16))
    dw.ofm = _fm(api, 0x40000, 10, 10, 8, dtype="INT16")
    dw.kernel, dw.padding = api.NpuKernel(3, 3), api.NpuPadding(top=1, left=1, bottom=1, right=1)
    dw.weights = [api.NpuAddressRange(region=0, address=0x9000, length=96)]
    dw.biases = [api.NpuAddressRange(region=0, address=0x9400, length=80)]
    ops.append(_block(api, dw, acc, prefer=0))
    lut = api.NpuDmaOperation(api.NpuAddressRange(region=0, address=0xA000, length=2048),
                              api.NpuAddressRange(region=(1 << 8) | 3, address=_lut_address(acc), length=2048))
    ops.append(lut)
    pool = api.NpuPoolingOperation(api.NpuPoolingOp.AVERAGE)
    pool.ifm, pool.ofm = _fm(api, 0x40000, 10, 10, 8, dtype="INT16"), _fm(api, 0x50000, 10, 10, 8)
    pool.kernel, pool.padding = api.NpuKernel(2, 2), api.NpuPadding(top=0, left=0, bottom=1, right=1)
    pool.activation = api.NpuActivation(api.NpuActivationOp.TABLE_LOOKUP)
    ops.append(_block(api, pool, acc))
    add = api.NpuElementWiseOperation(api.NpuElementWiseOp.ADD)
    add.ifm, add.ifm2, add.ofm = _fm(api, 0x50000, 10, 10, 8), _fm(api, 0x60000, 1, 10, 1), _fm(api, 0x70000, 10, 10, 8)
    add.reversed_operands = True
    ops.append(_block(api, add, acc))
    scalar = api.NpuElementWiseOperation(api.NpuElementWiseOp.MUL)
    scalar.ifm, scalar.ofm = _fm(api, 0x70000, 10, 10, 8), _fm(api, 0x80000, 10, 10, 8, dtype="INT32")
    scalar.ifm2, scalar.ifm2_scalar = _fm(api, 0, 1, 1, 1), -2.6
    scalar.accumulator_type = api.NpuAccumulatorType.Int40
    ops.append(_block(api, scalar, acc))
    total = api.NpuPoolingOperation(api.NpuPoolingOp.REDUCE_SUM)
    total.ifm, total.ofm = _fm(api, 0x80000, 10, 10, 8, dtype="INT32"), _fm(api, 0x90000, 10, 10, 1, dtype="INT32")
    total.kernel, total.padding = api.NpuKernel(1, 1), api.NpuPadding(top=0, left=0, bottom=0, right=0)
    ops.append(_block(api, total, acc))
    ops.append(api.NpuDmaOperation(api.NpuAddressRange(region=1, address=0x90000, length=400),
                                   api.NpuAddressRange(region=2, address=0x0, length=400)))
    return ops


def _lut_address(acc) -> int:
    from npuplan.emit.native.hardware import available_shram_banks, arch_of

    arch = arch_of(acc)
    return available_shram_banks(arch, True) * arch.shram_bank_bytes


@pytest.mark.parametrize("name", ACCELERATORS)
def test_unusual_operations_match_vela_word_for_word(vela_api, name):
    from npuplan.emit.native.api import generate_register_command_stream
    from bench.vela_differential import SET_BY_OUTPUT_STAGE
    from npuplan.emit.vela import quietly
    from npuplan.regstream.compare import compare

    acc = getattr(vela_api.NpuAccelerator, name)
    ops = _operations(vela_api, acc)
    want = quietly(vela_api.npu_generate_register_command_stream, ops, acc)
    c = compare(want, generate_register_command_stream(ops, acc), ignore=SET_BY_OUTPUT_STAGE)
    assert c.first_mismatch is None, c.first_mismatch
    assert c.identical_outside_ignored and c.operations == len(ops)
    from bench.vela_differential import Partition, with_vela_output_stage

    assert with_vela_output_stage(Partition(ops, acc), list(want)) == list(want)
