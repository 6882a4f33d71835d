"""``npuplan validate FILE.tflite``: the emitted streams replay clean, and a stream with a flipped
address, a wrong size or a dropped wait is rejected with one line (exit status 3)."""

from __future__ import annotations

import struct

import pytest
import tflite

from npuplan.cli import main
from npuplan.errors import ValidationError
from npuplan.regstream import validate_tflite
from npuplan.regstream.words import CODE_OF, PAYLOAD32, decode_words, payload_words


def _payload(data: bytes) -> bytes:
    """The first ethos-u operator's driver payload (its command stream tensor's buffer)."""
    model = tflite.Model.GetRootAsModel(data, 0)
    sg = model.Subgraphs(0)
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        if model.OperatorCodes(op.OpcodeIndex()).CustomCode() == b"ethos-u":
            tensor = sg.Tensors(int(op.InputsAsNumpy()[0]))
            return bytes(model.Buffers(tensor.Buffer()).DataAsNumpy())
    raise AssertionError("no ethos-u operator")


def _stream_location(data: bytes) -> tuple[int, int]:
    """Byte offset of the first command word in the file and the number of command words."""
    payload = _payload(data)
    words = payload_words(payload).words
    first = data.find(payload) + payload.find(struct.pack(f"<{min(8, len(words))}I", *words[:8]))
    return first, len(words)


def _mutated(data: bytes, name: str, change, nth: int = 0) -> bytes:
    """``data`` with the ``nth`` command ``name``'s payload (cmd1) or parameter (cmd0) changed."""
    first, count = _stream_location(data)
    words = list(struct.unpack(f"<{count}I", data[first:first + 4 * count]))
    found = [w for w in decode_words(words) if w.name == name]
    word = found[nth]
    if CODE_OF[name] & PAYLOAD32:
        words[word.offset + 1] = change(words[word.offset + 1]) & 0xFFFFFFFF
    else:
        words[word.offset] = (words[word.offset] & 0xFFFF) | ((change(word.param) & 0xFFFF) << 16)
    return data[:first] + struct.pack(f"<{count}I", *words) + data[first + 4 * count:]


def _without(data: bytes, name: str, nth: int = 0) -> bytes:
    """``data`` with the ``nth`` command ``name`` dropped (the stream keeps its length: the final
    NPU_OP_STOP is repeated at the end)."""
    first, count = _stream_location(data)
    words = list(struct.unpack(f"<{count}I", data[first:first + 4 * count]))
    word = [w for w in decode_words(words) if w.name == name][nth]
    del words[word.offset]
    words.append(words[-1])
    return data[:first] + struct.pack(f"<{count}I", *words) + data[first + 4 * count:]


def test_emitted_file_validates(ds_cnn_emitted):
    report = validate_tflite(ds_cnn_emitted.data)
    assert report.npu_operations == ds_cnn_emitted.npu_operations
    assert report.dma_operations == ds_cnn_emitted.dma_operations


def test_cli_validates_the_file(ds_cnn_emitted, tmp_path, capsys):
    path = tmp_path / "ds_cnn_kws_npuplan.tflite"
    path.write_bytes(ds_cnn_emitted.data)
    assert main(["validate", str(path)]) == 0
    assert "valid" in capsys.readouterr().out


@pytest.mark.parametrize("name, change, nth, message", [
    ("OFM_BASE0", lambda a: a + (1 << 20), 3, "touches bytes"),  # an OFM beyond the scratch tensor
    ("IFM_BASE0", lambda a: a + (1 << 20), 5, "touches bytes"),  # an IFM beyond the scratch tensor
    ("WEIGHT_BASE", lambda a: a + (1 << 22), 0, "touches bytes"),  # weights beyond the flash tensor
    # a DMA longer than its tensors (the first is a prefetch under NPU op 0: it reaches op 0's bytes first)
    ("DMA0_LEN", lambda n: n + (1 << 22), 0, "touches bytes|overlaps what NPU op 0 .* still uses"),
    ("OFM_HEIGHT_M1", lambda h: h + 200, 0, "touches bytes"),  # an OFM taller than the arena
])
def test_a_mutated_stream_is_rejected(ds_cnn_emitted, name, change, nth, message):
    with pytest.raises(ValidationError, match=message) as caught:
        validate_tflite(_mutated(ds_cnn_emitted.data, name, change, nth))
    assert "\n" not in str(caught.value)


def test_an_ifm_moved_onto_a_feature_map_not_yet_written_is_rejected(ds_cnn_plan, ds_cnn_emitted):
    later = ds_cnn_plan.allocation.addresses[ds_cnn_plan.lowered.npu_ops[2].ofm.name].offset
    with pytest.raises(ValidationError, match="before anything wrote it"):
        validate_tflite(_mutated(ds_cnn_emitted.data, "IFM_BASE0", lambda a: later, 0))


def test_an_ofm_moved_onto_a_live_feature_map_is_rejected(ds_cnn_plan, ds_cnn_emitted):
    # the first stripe's OFM moved onto the network input, which the later stripes still read
    net_input = ds_cnn_plan.allocation.addresses[ds_cnn_plan.lowered.inputs[0].name].offset
    first_ofm = _mutated(ds_cnn_emitted.data, "OFM_BASE0", lambda a: net_input, 0)
    with pytest.raises(ValidationError, match="before any of it was read|reads byte"):
        validate_tflite(first_ofm)


def test_a_dropped_dma_wait_is_rejected(ds_cnn_emitted, tmp_path, capsys):
    mutated = _without(ds_cnn_emitted.data, "NPU_OP_DMA_WAIT", 0)
    with pytest.raises(ValidationError, match="before NPU_OP_DMA_WAIT"):
        validate_tflite(mutated)
    path = tmp_path / "broken.tflite"
    path.write_bytes(mutated)
    assert main(["validate", str(path)]) == 3
    err = capsys.readouterr().err.strip()
    assert err.startswith("npuplan: error:") and "\n" not in err


def test_a_dropped_kernel_wait_is_rejected(ds_cnn_emitted):
    # every kernel wait guards a DMA into a weight buffer an operation in flight still reads
    words = payload_words(_payload(ds_cnn_emitted.data)).words
    kernel_waits = [w for w in decode_words(words) if w.name == "NPU_OP_KERNEL_WAIT"]
    if not kernel_waits:
        pytest.skip("this plan's stream needs no kernel wait")
    with pytest.raises(ValidationError, match="NPU_OP_KERNEL_WAIT"):
        validate_tflite(_without(ds_cnn_emitted.data, "NPU_OP_KERNEL_WAIT", 0))


def test_not_a_driver_payload_is_rejected(ds_cnn_emitted):
    data = ds_cnn_emitted.data.replace(b"COP1", b"XOP1", 1)
    with pytest.raises(ValidationError, match="driver header"):
        validate_tflite(data)


def test_the_program_emits_and_validates_under_its_lean_bindings(tmp_path):
    """``npuplan plan --emit-tflite`` then ``npuplan validate`` as the program runs them (its own
    process, the tflite package registered bare): the file validator once asked the bare package
    for ``tflite.Model`` and called every file 'not a TFLite flatbuffer'."""
    import subprocess
    import sys

    from tests.unit.emit.conftest import DATA

    out = tmp_path / "out"
    common = [sys.executable, "-c", "import sys; from npuplan.cli import run; sys.exit(run())"]
    done = subprocess.run([*common, "plan", str(DATA / "ds_cnn_kws.tflite"), "--emit-tflite", "--quiet",
                           "--output-dir", str(out)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([*common, "validate", str(out / "ds_cnn_kws_npuplan.tflite")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "valid" in done.stdout, done.stderr


def test_mutated_deployable_files_are_valid_or_a_one_line_error(ds_cnn_emitted, tmp_path, capsys):
    """Random byte flips of an emitted file: every run ends with status 0, 2 or 3 and one line
    (a corrupt payload or tensor once surfaced as struct.error, exit 4)."""
    import random

    data = bytes(ds_cnn_emitted.data)
    rng = random.Random(7)
    for case in range(40):
        mutant = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            mutant[rng.randrange(len(mutant))] = rng.randrange(256)
        path = tmp_path / f"m{case}.tflite"
        path.write_bytes(bytes(mutant))
        status = main(["validate", str(path)])
        err = capsys.readouterr().err
        assert status in (0, 1, 3) and len(err.strip().splitlines()) <= 1, (case, status, err)
