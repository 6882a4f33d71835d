"""``npuplan estimate``: a compiled file's totals agree with its per-layer rows, Vela's figure for
its own file is met within the fidelity bound, bad input is refused in one line."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from npuplan.cli import main
from npuplan.errors import ValidationError
from npuplan.estimate import estimate_file
from npuplan.options import PlanOptions

DATA = Path(__file__).resolve().parents[2] / "data"
# Vela 5.2.0 (default core) compiled ds_cnn_kws for this target:
#   vela tests/data/ds_cnn_kws.tflite --accelerator-config ethos-u55-128 --system-config
#   Ethos_U55_High_End_Embedded --memory-mode Shared_Sram --optimise Performance
VELA_FILE = DATA / "compiled" / "ds_cnn_kws_vela.tflite"
VELA_CYCLES_TOTAL = 90148  # its summary CSV's cycles_total
VELA_NN_MACS = 2664856
VELA_WEIGHTS = (22016, 24096)  # total_original_weights, total_npu_encoded_weights
U55_128 = PlanOptions(accelerator_config="ethos-u55-128", system_config="Ethos_U55_High_End_Embedded",
                      memory_mode="Shared_Sram")


@pytest.fixture(scope="module")
def own_plan(tmp_path_factory: pytest.TempPathFactory) -> tuple[float, Path]:
    """ds_cnn_kws planned and emitted by npuplan (the smallest network with DMAs and waits): the
    plan's cycles_total and the file."""
    from npuplan.api import plan_and_emit
    from npuplan.emit import write_emitted
    from npuplan.report import build_report

    plan, emitted = plan_and_emit(DATA / "ds_cnn_kws.tflite", accelerator_config="ethos-u55-128",
                                  system_config="Ethos_U55_High_End_Embedded", memory_mode="Shared_Sram")
    path, _ = write_emitted(plan, tmp_path_factory.mktemp("own"), emitted)
    return build_report(plan).cycles_total, path


@pytest.fixture(scope="module")
def own_file(own_plan: tuple[float, Path]) -> Path:
    return own_plan[1]


def test_own_file_does_what_its_plan_says(own_plan: tuple[float, Path]) -> None:
    # one cost model: the plan's figure is the estimate of the stream emitted for it (its weights
    # were once buffered in 16-deep slices priced as one operation: 84964 planned, 91492 emitted)
    planned, path = own_plan
    assert estimate_file(path, U55_128).report.cycles_total == pytest.approx(planned, rel=0.01)


def _consistent(path: Path) -> None:
    report = estimate_file(path, U55_128).report
    layers = report.layers
    assert layers and report.npu_op_count == len(layers)
    assert sum(layer.op_cycles for layer in layers) == pytest.approx(report.cycles_total)
    assert sum(layer.npu_cycles for layer in layers) == pytest.approx(report.cycles_npu)
    assert sum(layer.macs for layer in layers) == report.nn_macs
    for layer in layers:  # a row takes at least its own datapath and memory time
        assert layer.op_cycles >= max(layer.access_cycles.values()) - 1e-6
        assert layer.op_cycles >= layer.npu_cycles - 1e-6


def test_own_file_totals_are_its_rows(own_file: Path) -> None:
    _consistent(own_file)


def test_vela_file_totals_are_its_rows() -> None:
    _consistent(VELA_FILE)


def test_vela_file_against_vela_figure() -> None:
    report = estimate_file(VELA_FILE, U55_128).report
    assert report.nn_macs == VELA_NN_MACS  # the same operations, decoded from the registers
    assert report.cycles_total == pytest.approx(VELA_CYCLES_TOTAL, rel=0.10)
    assert report.cpu_op_count == 0
    assert (report.total_original_weights, report.total_npu_encoded_weights) == VELA_WEIGHTS  # each stream once


def test_cli_writes_the_plan_reports(tmp_path: Path) -> None:
    status = main(["estimate", str(VELA_FILE), "--accelerator-config", "ethos-u55-128", "--system-config",
                   "Ethos_U55_High_End_Embedded", "--memory-mode", "Shared_Sram", "--output-dir", str(tmp_path),
                   "--quiet"])
    assert status == 0
    summary = tmp_path / "ds_cnn_kws_estimate_summary_Ethos_U55_High_End_Embedded.csv"
    row = next(csv.DictReader(summary.open()))
    layers = list(csv.DictReader((tmp_path / "ds_cnn_kws_estimate_per-layer.csv").open()))
    assert float(row["cycles_total"]) == pytest.approx(sum(float(r["Op Cycles"]) for r in layers))
    assert int(row["npu_operators"]) == len(layers)


def test_cli_takes_the_plans_arena_cache_size(tmp_path: Path) -> None:
    """``estimate`` takes the budget flag ``plan`` took (zoo8: the same flags for both commands were
    refused as an unrecognized argument) and reports it as the plan's summary does."""
    status = main(["estimate", str(VELA_FILE), "--accelerator-config", "ethos-u65-256", "--system-config",
                   "Ethos_U65_High_End", "--memory-mode", "Dedicated_Sram", "--arena-cache-size", "32k",
                   "--output-dir", str(tmp_path), "--quiet"])
    assert status == 0
    row = next(csv.DictReader((tmp_path / "ds_cnn_kws_estimate_summary_Ethos_U65_High_End.csv").open()))
    assert float(row["arena_cache_size"]) == 32.0  # KiB, as Vela writes it


def test_a_faster_memory_never_slows_the_estimate() -> None:
    slow = estimate_file(VELA_FILE, PlanOptions(accelerator_config="ethos-u55-128",
                                                system_config="Ethos_U55_Deep_Embedded", memory_mode="Shared_Sram"))
    fast = estimate_file(VELA_FILE, U55_128)
    assert fast.report.cycles_total < slow.report.cycles_total


@pytest.mark.parametrize("name, status, words", [
    ("not_tflite.tflite", 1, "not a TFLite flatbuffer"),
    ("ds_cnn_kws.tflite", 1, "no ethos-u operator"),
    ("missing.tflite", 1, "cannot read"),
])
def test_invalid_file_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                                             status: int, words: str) -> None:
    path = tmp_path / name
    if name == "not_tflite.tflite":
        path.write_bytes(b"\x00" * 64)
    elif name == "ds_cnn_kws.tflite":
        path.write_bytes((DATA / name).read_bytes())  # a model, not compiled: no command stream
    out = tmp_path / "out"
    assert main(["estimate", str(path), "--output-dir", str(out)]) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err
    assert not out.exists()  # nothing half-written


def test_truncated_stream_is_a_validation_error(tmp_path: Path) -> None:
    data = bytearray(VELA_FILE.read_bytes())
    start = data.find(b"COP1")
    data[start + 8:start + 64] = b"\xff" * 56  # driver words no driver knows
    path = tmp_path / "broken_vela.tflite"
    path.write_bytes(bytes(data))
    with pytest.raises(ValidationError):
        estimate_file(path, U55_128)


def test_ethos_u_operators_in_an_if_s_branches_are_estimated() -> None:
    # zoo5's if_data_16 as Vela 5.2.0's default core compiles it (u55-128 High_End Shared_Sram): the
    # main graph keeps the IF on the CPU and each branch subgraph has its own ethos-u operator;
    # only the main graph was read, so estimate refused Vela's file as "not a compiled file"
    from npuplan.estimate.read import read_compiled

    path = DATA / "compiled" / "if_data_16_vela.tflite"
    assert len(read_compiled(path).streams) == 2
    estimate = estimate_file(path, U55_128)
    assert estimate.report.cycles_total > 0


def test_a_compiled_file_with_every_operator_on_the_cpu_is_estimated_at_zero(tmp_path: Path) -> None:
    # zoo7's simplernn_loop_6x5 (a dynamic-range SimpleRNN left as a WHILE): npuplan compiles it with
    # nothing for the NPU; estimate refused its own output as "not a compiled file"
    from npuplan.api import plan_and_emit
    from npuplan.emit import write_emitted

    plan, emitted = plan_and_emit(DATA / "simplernn_loop_6x5.tflite", accelerator_config="ethos-u55-128",
                                  system_config="Ethos_U55_High_End_Embedded", memory_mode="Shared_Sram")
    path, _ = write_emitted(plan, tmp_path, emitted)
    estimate = estimate_file(path, U55_128)
    assert estimate.report.cycles_total == 0 and not estimate.streams
    assert estimate.compiled.cpu_operators


def test_own_file_attributes_every_cycle_to_a_source_operator(own_file: Path) -> None:
    # npuplan's file records each NPU operation's source operator: the estimate's cycles per
    # source operator add up to its total, and each is an operator of the source network
    from npuplan.io.tflite import read_tflite

    estimate = estimate_file(own_file, U55_128)
    by_source = estimate.cycles_by_source()
    assert by_source is not None
    assert sum(by_source.values()) == pytest.approx(estimate.report.cycles_total)
    source = read_tflite(DATA / "ds_cnn_kws.tflite").subgraphs[0]
    assert set(by_source) <= set(range(len(source.ops)))
    convs = {k for k, op in enumerate(source.ops) if op.type in ("CONV_2D", "DEPTHWISE_CONV_2D")}
    assert convs <= set(by_source)
    assert all("[source " in layer.name for layer in estimate.report.layers)


def test_vela_file_records_no_source_operators() -> None:
    assert estimate_file(VELA_FILE, U55_128).cycles_by_source() is None


def test_a_fused_lut_activation_gets_what_its_table_costs(tmp_path: Path) -> None:
    # conv -> TANH: the TANH's table runs in the conv's output stage (fused) or as its own
    # operation; either way the TANH is priced apart from the conv, and the attribution adds up
    from npuplan.api import plan_and_emit
    from npuplan.emit import write_emitted
    from npuplan.io.tflite_write import write_tflite
    from npuplan.ir.graph import Graph, Model, Op, Tensor, frozen_options
    from npuplan.ir.types import DataType, Quantization
    from tests.unit.lowering._build import conv

    q, t = Quantization((0.05,), (3,)), Quantization((1 / 128,), (0,))
    x, a = Tensor("x", (1, 32, 32, 16), DataType.INT8, q), Tensor("a", (1, 32, 32, 16), DataType.INT8, q)
    y = Tensor("y", (1, 32, 32, 16), DataType.INT8, t)
    ops = (conv(x, a, 1, index=0), Op("TANH", (a,), (y,), frozen_options({}), 1))
    model = tmp_path / "conv_tanh.tflite"
    model.write_bytes(write_tflite(Model("conv_tanh", (Graph("main", ops, (x,), (y,)),))))
    planned, emitted = plan_and_emit(model, accelerator_config="ethos-u55-128",
                                     system_config="Ethos_U55_High_End_Embedded", memory_mode="Shared_Sram")
    path, _ = write_emitted(planned, tmp_path, emitted)
    estimate = estimate_file(path, U55_128)
    by_source = estimate.cycles_by_source()
    assert by_source is not None and set(by_source) == {0, 1}
    assert by_source[0] > 0 and by_source[1] > 0
    assert sum(by_source.values()) == pytest.approx(estimate.report.cycles_total)
    fused = [s for stream in estimate.compiled.sources or () for s in stream if s.lut_index == 1]
    assert fused == [] or all(s.index == 0 for s in fused)
