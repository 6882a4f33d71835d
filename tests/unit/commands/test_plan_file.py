"""``npuplan validate PLAN.json``: a written plan replays clean; a tampered one exits 3; junk exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npuplan.cli import main


@pytest.fixture(scope="module")
def written(tmp_path_factory, ds_cnn: Path) -> Path:
    out = tmp_path_factory.mktemp("plan")
    assert main(["plan", str(ds_cnn), "--output-dir", str(out), "--quiet", "--memory-mode", "Shared_Sram",
                 "--system-config", "Ethos_U55_High_End_Embedded"]) == 0
    return out / "ds_cnn_kws_plan.json"


def _validate(capsys, path: Path) -> tuple[int, str, str]:
    status = main(["validate", str(path)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _overlap_by_16_bytes(document: dict) -> tuple[str, str]:
    """Move one SRAM tensor so its last 16 bytes are the first 16 of another tensor live with it."""
    stripe = next(c for c in document["commands"]
                  if c["kind"] == "npu_stripe" and c["ifm"]["area"] == c["ofm"]["area"] == "Sram"
                  and c["ifm"]["buffer"] != c["ofm"]["buffer"])
    moved, fixed = document["tensors"][stripe["ofm"]["buffer"]], document["tensors"][stripe["ifm"]["buffer"]]
    moved["offset"] = fixed["offset"] + fixed["size_bytes"] - 16
    return stripe["ofm"]["buffer"], stripe["ifm"]["buffer"]


def test_written_plan_is_valid(capsys, written: Path) -> None:
    status, out, err = _validate(capsys, written)
    assert status == 0 and err == ""
    assert len(out.strip().splitlines()) == 1 and "valid" in out


def test_plan_json_documents_addresses_and_commands(written: Path) -> None:
    document = json.loads(written.read_text())
    assert document["allocation"]["allocator"] == "HillClimb"
    sram = document["allocation"]["areas"]["Sram"]
    assert sram["peak_bytes"] >= sram["lower_bound_bytes"] > 0
    assert document["summary"]["sram_memory_used"] == pytest.approx(sram["peak_bytes"] / 1024)
    for entry in document["tensors"].values():
        assert {"area", "offset", "size_bytes", "shape"} <= set(entry)
    dma = next(c for c in document["commands"] if c["kind"] == "dma")
    assert {"src_area", "src_address", "dst_area", "dst_address", "size_bytes"} <= set(dma)
    stripe = next(c for c in document["commands"] if c["kind"] == "npu_stripe" and c["weights"])
    assert stripe["block_config"] and stripe["ofm"]["end"] > stripe["ofm"]["start"]
    assert {"depth", "size_bytes", "address", "area"} <= set(stripe["weights"])


def test_two_live_buffers_overlapping_by_16_bytes_exit_3(tmp_path: Path, capsys, written: Path) -> None:
    document = json.loads(written.read_text())
    moved, other = _overlap_by_16_bytes(document)
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(document))
    status, out, err = _validate(capsys, tampered)
    assert status == 3 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "command" in lines[0]
    assert "overlap" in lines[0] and moved in lines[0] and other in lines[0]
    end = document["tensors"][other]["offset"] + document["tensors"][other]["size_bytes"]
    assert f"bytes {end - 16}..{end - 1} of Sram" in lines[0]


def test_an_operand_address_moved_off_its_buffer_exits_3(tmp_path: Path, capsys, written: Path) -> None:
    document = json.loads(written.read_text())
    stripe = next(c for c in document["commands"] if c["kind"] == "npu_stripe" and c["ifm"]["area"] == "Sram")
    stripe["ifm"]["address"] += 16
    tampered = tmp_path / "shifted.json"
    tampered.write_text(json.dumps(document))
    status, _, err = _validate(capsys, tampered)
    assert status == 3 and stripe["ifm"]["tensor"] in err


@pytest.mark.parametrize("content, fragment", [
    (None, "cannot read"),
    ('{"tensors": {', "not valid JSON"),
    ("[1, 2]", "not a JSON object"),
    ('{"tensors": {}, "allocation": {"buffers": {}}}', "'commands'"),
])
def test_missing_or_corrupt_plan_is_a_one_line_error(tmp_path: Path, capsys, content, fragment) -> None:
    path = tmp_path / "plan.json"
    if content is not None:
        path.write_text(content)
    status, out, err = _validate(capsys, path)
    assert status == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and fragment in err and "Traceback" not in err


def test_a_command_naming_an_unknown_buffer_is_a_one_line_error(tmp_path: Path, capsys, written: Path) -> None:
    document = json.loads(written.read_text())
    next(c for c in document["commands"] if c["kind"] == "npu_stripe")["ofm"]["buffer"] = "ghost"
    path = tmp_path / "ghost.json"
    path.write_text(json.dumps(document))
    status, _, err = _validate(capsys, path)
    assert status == 1 and "ghost" in err and len(err.strip().splitlines()) == 1


def test_a_staged_plan_lists_its_copies_as_buffers_and_replays_from_json(tmp_path: Path, capsys, data_dir: Path) -> None:
    out = tmp_path / "u65"
    assert main(["plan", str(data_dir / "mobilenet_v1_025_96.tflite"), "--output-dir", str(out), "--quiet",
                 "--accelerator-config", "ethos-u65-256", "--system-config", "Ethos_U65_High_End",
                 "--memory-mode", "Dedicated_Sram_384KB"]) == 0
    path = out / "mobilenet_v1_025_96_plan.json"
    document = json.loads(path.read_text())
    staged = [name for name in document["allocation"]["buffers"] if name.endswith("#staged")]
    assert staged, "expected the network input to be staged into the cache"
    assert not any("#" in name for name in document["tensors"])
    assert any(c["kind"] == "dma" and c["dst_buffer"] in staged for c in document["commands"])
    status, out_text, _ = _validate(capsys, path)
    assert status == 0 and "valid" in out_text


def _stripe(document: dict) -> dict:
    return next(c for c in document["commands"] if c["kind"] == "npu_stripe")


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [  # each was a traceback found by bench/fuzz.py before plan JSON values were read strictly
        (lambda d: _stripe(d)["ofm"].__setitem__("address", 1.5), "whole number"),
        (lambda d: _stripe(d)["ofm"].__setitem__("address", None), "whole number"),
        (lambda d: _stripe(d)["ofm"].__setitem__("start", []), "list of 4 whole numbers"),
        (lambda d: _stripe(d)["ofm"].__setitem__("buffer", {}), "must be a string"),
        (lambda d: _stripe(d)["ofm"].__setitem__("end", [1, 2**40, 1, 1]), "not inside its shape"),
        (lambda d: next(iter(d["tensors"].values())).__setitem__("shape", [2**20, 2**20, 2**20, 1]), "more than"),
        (lambda d: next(iter(d["tensors"].values())).__setitem__("size_bytes", -1), "whole number"),
        (lambda d: d["allocation"].__setitem__("sram_limit_bytes", "x"), "sram_limit_bytes"),
    ],
)
def test_malformed_plan_values_are_one_line_errors(tmp_path: Path, capsys, written: Path, edit, fragment) -> None:
    document = json.loads(written.read_text())
    edit(document)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    status, _, err = _validate(capsys, path)
    assert status == 1 and fragment in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_weight_slice_naming_its_content_with_a_non_string_is_a_one_line_error(tmp_path: Path, capsys,
                                                                                  written: Path) -> None:
    """Found by bench/fuzz.py (seed 2026): a dict as the weights' content reached a set lookup."""
    document = json.loads(written.read_text())
    stripe = next(c for c in document["commands"] if c["kind"] == "npu_stripe" and c.get("weights"))
    stripe["weights"]["content"] = {}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    status, _, err = _validate(capsys, path)
    assert status == 1 and "weights content must be a string" in err
