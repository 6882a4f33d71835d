"""``npuplan validate FILE.tflite --weights``: every convolution's weight streams decode to as many
weights as the registers make the hardware read, on files of both emitting backends and on both
cores of an Ethos-U65-512; a stream cut short, moved, with a corrupt header byte, or read with
another OFM block depth is rejected in one line naming the operator and NPU operation."""

from __future__ import annotations

import pytest

from npuplan.cli import main
from npuplan.errors import ValidationError
from npuplan.regstream import validate_tflite
from npuplan.regstream.events import DmaEvent, NpuEvent, Range
from npuplan.regstream.tflite_file import ethos_u_payloads
from npuplan.regstream.weight_streams import accelerator_of_config
from tests.unit.emit.conftest import DATA, U55_128
from tests.unit.emit.test_dual_core import U65_512
from tests.unit.emit.test_validate_file import _mutated


def _emit(backend_name: str, options: dict[str, str]) -> bytes:
    from npuplan.api import plan_and_emit
    from npuplan.emit.backend import EmitBackend

    return plan_and_emit(DATA / "ds_cnn_kws.tflite", backend=EmitBackend[backend_name], **options)[1].data


@pytest.fixture(scope="module")
def native_file() -> bytes:
    return _emit("NPUPLAN", U55_128)


@pytest.fixture(scope="module")
def vela_file(vela_api) -> bytes:
    return _emit("VELA", U55_128)


@pytest.fixture(scope="module", params=["NPUPLAN", "VELA"])
def dual_core_file(request) -> bytes:
    if request.param == "VELA":
        request.getfixturevalue("vela_api")
    return _emit(request.param, U65_512)


def _convolutions(data: bytes) -> list[NpuEvent]:
    return [e for s in validate_tflite(data).streams for e in s.events if isinstance(e, NpuEvent) and e.weights]


@pytest.mark.parametrize("which", ["native_file", "vela_file"])
def test_emitted_weight_streams_check(which, request):
    data = request.getfixturevalue(which)
    report = validate_tflite(data, weights=True)
    assert report.weights is not None
    assert report.weights.operations == len(_convolutions(data)) > 0
    assert 0 < report.weights.streams <= report.weights.operations
    assert report.weights.weights >= 10 * 4 * 64  # at least the first convolution's 10x4 kernel, 64 channels


def _stream_places(data: bytes) -> tuple[set[tuple[int, ...]], set[tuple[int, ...]]]:
    """Each core's distinct weight streams: where the NPU reads them, and how many DMAs had written
    there by then (a double buffer's slot holds one slice, then another)."""
    writes: list[Range] = []
    core0: set[tuple[int, ...]] = set()
    core1: set[tuple[int, ...]] = set()
    for stream in validate_tflite(data).streams:
        for e in stream.events:
            if isinstance(e, DmaEvent):
                writes.append(e.dst)
            elif isinstance(e, NpuEvent):
                for core, r in ((core0, e.weights), (core1, e.weights1)):
                    if r is not None:
                        written = sum(w.region == r.region and w.address <= r.address < w.address + w.length
                                      for w in writes)
                        core.add((r.region, r.address, r.length, written))
    return core0, core1


def test_both_cores_streams_are_checked(dual_core_file):
    report = validate_tflite(dual_core_file, weights=True)
    core0, core1 = _stream_places(dual_core_file)
    # every distinct stream of both cores decoded (stripes of one operation share theirs)
    assert core1 and report.weights is not None and report.weights.streams == len(core0) + len(core1)
    assert accelerator_of_config(report.streams[0].config).name == "ethos-u65-512"
    with pytest.raises(ValidationError, match="core 1's weight stream"):
        validate_tflite(_mutated(dual_core_file, "WEIGHT1_LENGTH", lambda n: n - 16, 0), weights=True)


@pytest.mark.parametrize("name, change, message", [
    ("WEIGHT_LENGTH", lambda n: n - 16, "does not decode|decodes to"),  # the stream cut short
    ("WEIGHT_BASE", lambda a: a + 16, "does not decode|decodes to"),  # read from its second 16 bytes on
    ("OFM_BLK_DEPTH_M1", lambda m1: m1 - 4, "the registers read"),  # blocks 4 channels shallower
    ("SCALE_LENGTH", lambda n: n + 16, "scale stream is"),
])
def test_a_mutated_weight_register_is_rejected(native_file, name, change, message):
    mutated = _mutated(native_file, name, change, 0)
    validate_tflite(mutated)  # the memory replay alone finds nothing wrong
    with pytest.raises(ValidationError, match=message) as caught:
        validate_tflite(mutated, weights=True)
    text = str(caught.value)
    assert "\n" not in text and text.startswith("operator ") and "NPU op 0 (Conv2D)" in text


def _first_stream_in_flash(data: bytes) -> int:
    """Where the first convolution's weight stream lies in the file (bytes from its start)."""
    stream = validate_tflite(data).streams[0]
    flash = ethos_u_payloads(data)[0][1]
    for k, e in enumerate(stream.events):
        if isinstance(e, NpuEvent) and e.weights:
            r = e.weights
            for dma in reversed(stream.events[:k]):
                if (r.region and isinstance(dma, DmaEvent) and dma.dst.region == r.region
                        and dma.dst.address <= r.address < dma.dst.address + dma.dst.length):
                    r = Range(0, dma.src.address + r.address - dma.dst.address, r.length)
            return data.find(flash) + r.address
    raise AssertionError("no convolution")


def test_a_corrupt_stream_header_is_rejected(native_file, tmp_path, capsys):
    """The first byte holds the slice header's zero-run divisor and the low bits of its value count;
    a corrupt weight value inside an uncompressed stream decodes to the same count (the file does
    not hold the network's weights to compare with), so the header is what is corrupted here."""
    at = _first_stream_in_flash(native_file)
    mutated = bytearray(native_file)
    mutated[at] ^= 0x5A
    validate_tflite(bytes(mutated))
    path = tmp_path / "corrupt.tflite"
    path.write_bytes(bytes(mutated))
    assert main(["validate", str(path), "--weights"]) == 3
    err = capsys.readouterr().err.strip()
    assert err.startswith("npuplan: error: operator ") and "NPU op 0 (Conv2D)" in err and "\n" not in err


def test_cli_reports_the_weights(native_file, tmp_path, capsys):
    path = tmp_path / "ds_cnn_kws_npuplan.tflite"
    path.write_bytes(native_file)
    assert main(["validate", str(path), "--weights"]) == 0
    assert "weight streams decoded" in capsys.readouterr().out
    assert main(["validate", str(tmp_path / "x_plan.json"), "--weights"]) == 2


def test_byte_flips_end_in_one_line(native_file, tmp_path, capsys):
    """Random byte flips in the flash tensor's weight streams: status 0 or 3 and at most one line."""
    import random

    start = _first_stream_in_flash(native_file)
    rng = random.Random(11)
    for case in range(20):
        mutant = bytearray(native_file)
        for _ in range(rng.randint(1, 4)):
            mutant[start + rng.randrange(2048)] = rng.randrange(256)
        path = tmp_path / f"m{case}.tflite"
        path.write_bytes(bytes(mutant))
        status = main(["validate", str(path), "--weights"])
        err = capsys.readouterr().err
        assert status in (0, 3) and len(err.strip().splitlines()) <= 1, (case, status, err)


def test_an_unknown_accelerator_is_rejected():
    with pytest.raises(ValidationError, match="no known accelerator"):
        accelerator_of_config(0xF << 28 | 7)
