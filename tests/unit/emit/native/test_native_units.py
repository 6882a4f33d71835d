"""The native backend on small hand-built operations (plain namespaces with the API's attribute
names, so no Vela is needed): register skipping, waits, BLOCKDEP, dual-core weight streams,
block configs and the driver payload."""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from npuplan.emit.native.api import create_driver_payload, find_block_configs, generate_register_command_stream
from npuplan.errors import EmitError
from npuplan.regstream.events import DmaEvent, NpuEvent, WaitEvent, events
from npuplan.regstream.words import Word, decode_words, payload_words


def E(name: str) -> NS:  # an enum member, as the generator reads it
    return NS(name=name)


def fm(address: int, h: int = 8, w: int = 8, d: int = 16, region: int = 1) -> NS:
    return NS(region=region, shape=NS(height=h, width=w, depth=d), data_type=E("INT8"), layout=E("NHWC"),
              tiles=NS(height_0=h, height_1=h, width_0=w, addresses=[address, 0, 0, 0]), strides=None,
              quantization=NS(scale_f32=0.5, zero_point=0), name=None)


def conv(ifm: NS, ofm: NS, weights: int = 0x1000, region: int = 0, block: tuple[int, int, int] = (4, 4, 16)) -> NS:
    return NS(op_type=E("Conv2D"), ifm=ifm, ifm2=None, ifm2_scalar=None, ofm=ofm,
              kernel=NS(width=1, height=1, stride_x=1, stride_y=1, dilation_x=1, dilation_y=1),
              weights=[NS(region=region, address=weights, length=256)],
              biases=[NS(region=region, address=weights + 256, length=160)],
              padding=NS(top=0, left=0, bottom=0, right=0), activation=None,
              block_config=NS(height=block[0], width=block[1], depth=block[2]), rounding_mode=E("TFL"),
              fused_quantize=False, ifm_upscale=E("NONE"), accumulator_type=E("Default"),
              block_traversal=E("DEPTH_FIRST"), name="conv")


def dma(src: int, dst: int, length: int = 416, src_region: int = 0, dst_region: int = 1) -> NS:
    return NS(op_type=E("Dma"), src=NS(region=src_region, address=src, length=length),
              dest=NS(region=dst_region, address=dst, length=length), channel=0, mode=0)


def _between(words: list[Word], first: int, second: int) -> list[str]:
    """Names of the commands after the ``first``-th NPU_OP_* up to the ``second``-th."""
    ops = [k for k, w in enumerate(words) if w.name.startswith("NPU_OP_")]
    return [w.name for w in words[ops[first] + 1:ops[second]]]


def _at_operations(words: list[Word], name: str) -> list[int]:
    """The value register ``name`` holds at each NPU operation."""
    value, out = -1, []
    for w in words:
        if w.name == name:
            value = w.value
        elif w.name in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE", "NPU_OP_POOL", "NPU_OP_ELEMENTWISE"):
            out.append(value)
    return out


def test_a_repeated_operation_writes_only_what_changed():
    a, b = conv(fm(0), fm(0x4000)), conv(fm(0), fm(0x8000))
    words = decode_words(generate_register_command_stream([a, b], "Ethos_U55_128"))
    assert _between(words, 0, 1) == ["OFM_BASE0", "BLOCKDEP"]  # BLOCKDEP: 0 first, 3 (b does not read a's OFM)
    assert words[-1].name == "NPU_OP_STOP" and words[-1].param == 0xFFFF


def test_an_operation_waits_for_the_dma_filling_what_it_reads():
    fill = dma(0x100, 0x1000, dst_region=0, src_region=2)
    words = decode_words(generate_register_command_stream([fill, conv(fm(0), fm(0x4000))], "Ethos_U55_128"))
    waits = [e for e in events(words) if isinstance(e, WaitEvent)]
    assert [(w.kind, w.outstanding) for w in waits] == [("dma", 0)]
    unrelated = dma(0x100, 0x20000, dst_region=0, src_region=2)
    words = decode_words(generate_register_command_stream([unrelated, conv(fm(0), fm(0x4000))], "Ethos_U55_128"))
    assert not [e for e in events(words) if isinstance(e, WaitEvent)]


def test_a_dma_overwriting_an_ifm_waits_for_the_kernel():
    words = decode_words(generate_register_command_stream([conv(fm(0), fm(0x4000)), dma(0x100, 0x0)], "Ethos_U55_128"))
    kinds = [(type(e).__name__, getattr(e, "kind", None), getattr(e, "outstanding", None)) for e in events(words)]
    assert kinds == [("NpuEvent", "Conv2D", None), ("WaitEvent", "kernel", 0), ("DmaEvent", None, None)]


def test_blockdep_is_0_first_3_when_independent_and_less_when_chained():
    first, chained = conv(fm(0), fm(0x4000)), conv(fm(0x4000), fm(0x8000))
    words = decode_words(generate_register_command_stream([first, chained], "Ethos_U55_128"))
    assert _at_operations(words, "BLOCKDEP") == [0, 3]  # 4 blocks: the first job reads none of the last 3
    whole = [conv(fm(0), fm(0x4000), block=(8, 8, 16)), conv(fm(0x4000), fm(0x8000), block=(8, 8, 16))]
    words = decode_words(generate_register_command_stream(whole, "Ethos_U55_128"))
    assert _at_operations(words, "BLOCKDEP") == [0, 0]  # one block: it needs all of it
    independent = conv(fm(0x10000), fm(0x8000))
    words = decode_words(generate_register_command_stream([first, independent], "Ethos_U55_128"))
    assert _at_operations(words, "BLOCKDEP") == [0, 3]


def test_dual_core_u65_runs_in_parallel_mode_and_gives_the_second_core_an_empty_stream():
    words = decode_words(generate_register_command_stream([conv(fm(0), fm(0x4000))], "Ethos_U65_512"))
    assert (words[0].name, words[0].value) == ("PARALLEL_MODE", 1)
    regs = {w.name: w.value for w in words if not w.name.startswith("NPU_OP_")}
    assert regs["WEIGHT1_BASE"] == regs["WEIGHT_BASE"] == 0x1000 and regs["WEIGHT1_LENGTH"] == 0
    assert regs["SCALE1_LENGTH"] == 0 and regs["WEIGHT_LENGTH"] == 256
    one_core = decode_words(generate_register_command_stream([conv(fm(0), fm(0x4000))], "Ethos_U55_128"))
    assert not {"PARALLEL_MODE", "WEIGHT1_BASE"} & {w.name for w in one_core}


def test_the_replayed_stream_reads_what_the_operations_say():
    ops = [dma(0x100, 0x1000, dst_region=0, src_region=2), conv(fm(0, h=6, w=5, d=16), fm(0x4000, h=6, w=5, d=16))]
    evs = events(decode_words(generate_register_command_stream(ops, "Ethos_U55_64")))
    npu = next(e for e in evs if isinstance(e, NpuEvent))
    dmas = [e for e in evs if isinstance(e, DmaEvent)]
    assert (npu.ofm.bases[0], npu.ofm.height, npu.ofm.width, npu.ofm.depth) == (0x4000, 6, 5, 16)
    assert npu.ofm.stride_x == 16 and npu.ofm.stride_y == 80 and npu.weights is not None
    assert (npu.weights.address, npu.weights.length) == (0x1000, 256)
    assert (dmas[0].src.region, dmas[0].dst.address) == (2, 0x1000)


def test_block_configs_are_micro_block_multiples_that_fit():
    op = conv(fm(0, h=20, w=20, d=64), fm(0x8000, h=20, w=20, d=40))
    blocks = find_block_configs(op, E("Ethos_U55_128"))
    assert blocks and all(h % 1 == 0 and w % 2 == 0 and d % 8 == 0 and min(h, w) >= 2 for h, w, d in blocks)
    assert {d for _, _, d in blocks} == {16, 32, 40}  # split depth multiples, or the whole OFM depth (40)
    assert max(h for h, _, _ in blocks) <= 20 and max(w for _, w, _ in blocks) <= 20
    assert len(find_block_configs(op, E("Ethos_U55_32"))) < len(find_block_configs(op, E("Ethos_U65_256")))


def test_a_block_config_that_does_not_fit_is_refused():
    op = conv(fm(0, h=64, w=64, d=512), fm(0x80000, h=64, w=64, d=128), block=(32, 64, 128))
    with pytest.raises(AssertionError, match="does not fit"):
        generate_register_command_stream([op], "Ethos_U55_32")


def test_an_unknown_accelerator_is_an_emit_error():
    with pytest.raises(EmitError, match="Ethos_U99"):
        generate_register_command_stream([], "Ethos_U99_1")


@pytest.mark.parametrize(("name", "product"), [("Ethos_U55_128", 0), ("Ethos_U65_512", 1)])
def test_the_driver_payload_carries_the_words_16_byte_aligned(name, product):
    words = generate_register_command_stream([conv(fm(0), fm(0x4000))], name)
    payload = create_driver_payload(words, name)
    decoded = payload_words(payload)
    assert decoded.words == words and decoded.product == product
    assert (len(payload) - 4 * len(words)) % 16 == 0


def test_misaligned_addresses_are_refused_as_the_reference_refuses_them():
    with pytest.raises(EmitError, match="weight stream"):
        generate_register_command_stream([conv(fm(0), fm(0x4000), weights=0x1008)], "Ethos_U55_128")
    with pytest.raises(EmitError, match="not a multiple of 16"):
        nhcwb16 = fm(0x4008)
        nhcwb16.layout = E("NHCWB16")
        generate_register_command_stream([conv(fm(0), nhcwb16)], "Ethos_U55_128")
    with pytest.raises(EmitError, match="out of"):
        generate_register_command_stream([conv(fm(0), fm(0xFFFF_FFF0))], "Ethos_U55_128")
    with pytest.raises(EmitError, match="DMA"):
        generate_register_command_stream([dma(0x100, 0x1008)], "Ethos_U55_128")
    generate_register_command_stream([dma(0x100, 0x1008)], "Ethos_U65_256")  # U65: only the shared buffer's


@pytest.mark.parametrize("name", ["ethos-u55-128", "ethos-u65-256"])
def test_a_table_loaded_into_another_slot_need_not_wait_for_the_lookup_running(name):
    """An operation looks up the table in its own slot only: the next operation's table may be
    DMA'd into another slot while it runs (no NPU_OP_KERNEL_WAIT), not into its own."""
    from npuplan.emit.native.accesses import block_accesses, dma_accesses, lut_span
    from npuplan.emit.native.hardware import SHRAM_REGION, arch_of
    from npuplan.emit.luts import lut_address
    from npuplan.hw.accelerator import accelerator

    arch = arch_of(name)
    slot = [lut_address(accelerator(name), k) for k in range(3)]
    loaded = {slot[0]: 256}
    running = block_accesses(arch, [(1, 0, 100)], [], [(1, 100, 200)], [], lut_span(arch, 0, loaded))
    assert not running.conflicts(dma_accesses((0, 0, 256), (SHRAM_REGION, slot[1], 256)))
    assert running.conflicts(dma_accesses((0, 0, 256), (SHRAM_REGION, slot[0], 256)))
    # a 1 KiB table (the softmax's) from slot 0 covers slots 0-3
    wide = block_accesses(arch, [], [], [], [], lut_span(arch, 0, {slot[0]: 1024}))
    assert wide.conflicts(dma_accesses((0, 0, 256), (SHRAM_REGION, slot[2], 256)))


def test_a_feature_map_walked_backwards_spans_from_its_lowest_address() -> None:
    """Negative strides (a MIRROR_PAD band written backwards): the map's bytes run from its last
    row's (column's) address to its first's, the base being the highest."""
    from npuplan.emit.native.accesses import tile_spans
    from npuplan.emit.native.view import Fm

    rows = Fm(1, 2, 10, 8, 2, 2, 10, (200, 0, 0, 0), 1, -96, 8, 1, False)  # 2 rows up from row 2 of a 12-wide map
    assert tile_spans(rows) == [(1, 104, 280)]
    columns = Fm(1, 14, 2, 8, 14, 14, 2, (88, 0, 0, 0), 1, 96, -8, 1, False)  # 2 columns leftwards from column 11
    assert tile_spans(columns) == [(1, 80, 88 + 13 * 96 + 8)]
