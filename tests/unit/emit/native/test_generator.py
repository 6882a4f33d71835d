"""The native register command stream generator against Vela's (the reference) on the operations the
emitter builds for the bundled models: the same commands, waits and registers (the output stage
apart until its module is in), the same words otherwise; the same block configs on the emitter's
probes; byte-identical driver payloads. Skipped without the deploy extra."""

from __future__ import annotations

import pytest

from tests.unit.emit.conftest import DATA

SCENARIOS = {
    "u55-128": {"accelerator_config": "ethos-u55-128", "system_config": "Ethos_U55_High_End_Embedded",
                "memory_mode": "Shared_Sram"},
    "u55-64": {"accelerator_config": "ethos-u55-64", "system_config": "Ethos_U55_Deep_Embedded",
               "memory_mode": "Shared_Sram", "optimise": "Size"},
    "u65-256": {"accelerator_config": "ethos-u65-256", "system_config": "Ethos_U65_High_End",
                "memory_mode": "Dedicated_Sram_384KB"},
    "u65-512": {"accelerator_config": "ethos-u65-512", "system_config": "Ethos_U65_High_End",
                "memory_mode": "Dedicated_Sram_384KB"},
    "u55-32": {"accelerator_config": "ethos-u55-32", "system_config": "Ethos_U55_High_End_Embedded",
               "memory_mode": "Shared_Sram"},
}
# Each bundled model in one scenario (every accelerator kind covered, the suite stays fast)
CASES = [("ds_cnn_kws", "u55-128"), ("autoencoder_ad", "u65-512"), ("resnet8_cifar", "u55-64"),
         ("mobilenet_v1_025_96", "u65-256"), ("unet_transpose_64", "u65-512"), ("tiny_yolo_160", "u55-32")]


@pytest.fixture(scope="module")
def differential(vela_api):
    from bench import vela_differential

    return vela_differential


@pytest.mark.parametrize(("model", "scenario"), CASES)
def test_streams_match_vela(differential, model, scenario):
    from npuplan.emit.native.api import create_driver_payload, find_block_configs
    from npuplan.emit.vela import quietly, vela_api
    from npuplan.regstream.compare import compare

    probes: list = []
    with differential.probing(probes):
        partitions = differential.captured(DATA / f"{model}.tflite", **SCENARIOS[scenario])
    # the emitter probes the backend's block listing only where the hardware rules reject the plan's
    # block (``emit.blocks``): a model may make no probe (the listing itself is checked below)
    assert partitions
    for part in partitions:
        pair = differential.both_streams(part)
        c = compare(pair.vela, pair.native)
        assert c.first_mismatch is None, c.first_mismatch
        assert c.matching_operations == c.operations > 0
        assert c.identical_outside_ignored
        assert differential.with_vela_output_stage(part, pair.vela) == pair.vela  # every register where Vela writes it
        assert pair.native == pair.vela  # with npuplan's own output stage too: word for word
        vela_payload = bytes(quietly(vela_api().npu_create_driver_payload, pair.vela, part.accelerator))
        assert create_driver_payload(pair.vela, part.accelerator) == vela_payload
    for probe in probes:
        assert find_block_configs(probe.operation, probe.accelerator) == probe.blocks


def test_every_captured_operation_lists_vela_block_configs(differential):
    """Beyond the probes: the stripes themselves (their own shapes, tiles, activations)."""
    from npuplan.emit.native.api import find_block_configs
    from npuplan.emit.vela import quietly, vela_api

    partitions = differential.captured(DATA / "ds_cnn_kws.tflite", **SCENARIOS["u65-256"])
    api = vela_api()
    blocks = [op for part in partitions for op in part.operations if op.op_type.name != "Dma"]
    assert blocks
    for op in blocks[::3]:
        want = [(b.height, b.width, b.depth) for b in quietly(api.npu_find_block_configs, op, partitions[0].accelerator)]
        assert find_block_configs(op, partitions[0].accelerator) == want


def test_comparison_catches_a_changed_register(differential):
    """The check can fail: a stream with one operation's OFM base moved does not match."""
    from npuplan.regstream.compare import compare
    from npuplan.regstream.words import CODE_OF

    part = differential.captured(DATA / "autoencoder_ad.tflite", **SCENARIOS["u55-128"])[0]
    pair = differential.both_streams(part)
    words = list(pair.native)
    at = words.index(CODE_OF["OFM_BASE0"])
    words[at + 1] += 16
    c = compare(pair.vela, words, ignore=differential.SET_BY_OUTPUT_STAGE)
    assert c.first_mismatch is not None and "OFM_BASE0" in c.first_mismatch
